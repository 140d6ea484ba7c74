"""The page's own CSS, declared once: layouts that fit the window.

Panel renders every component into its own shadow root, so a stylesheet in the page's
``<head>`` does not reach inside; ``pn.config.raw_css`` is added to every component's shadow
root (:func:`use_page_style` appends :data:`PAGE_CSS` there once). The rules:

- rows and the tabs' headers (:data:`TABS_CSS`) wrap instead of pushing the page wider
  than the window (buttons, export bars, a row of controls beside a plot);
- grids of plots (heatmaps) put as many plots in a row as fit, the rest below;
- text in ``<pre>`` (status lines, generated samples, decoded outputs) wraps at the window's
  edge, long words too;
- a lesson page (:class:`~pyplay.ui.lesson_view.LessonView`, class ``pyplay-page``) puts its
  controls column above its content when its container (the page, or an embed's element;
  :data:`CONTAINER`) is narrower than :data:`STACK_BELOW_PX` (a tablet), beside it otherwise;
  stacked, it is no wider than the
  wider of the two (Bokeh would keep the two side by side's minimum width), and neither the
  app (``pyplay-app``), the tabs nor a lesson keeps a minimum width wider than a phone;
- the workbench's gate maps (``pyplay-bench-maps``) come three to a row beside a lesson's
  controls at 1280 px, one to a row on a phone;
- a drawing that needs its width (class :data:`SCROLL_X`) scrolls sideways inside its box on
  a narrow page instead of squeezing its labels together;
- a plot's text alternative (``pyplay-plot-text``) is visually hidden: a screen reader reads
  it where the plot stands;
- text meets WCAG 2.1 AA's 4.5:1 contrast (:data:`READABLE_CSS`): formulas (inline ``code``,
  Panel's theme draws it pale blue, 2.3:1) dark blue (8.3:1), the info and warning alerts'
  text darker, the Reset (warning) and download (success) buttons darker behind their white
  text; and whatever has the keyboard's focus shows a ring (:data:`FOCUS_CSS`).
"""

from __future__ import annotations

import panel as pn

__all__ = [
    "CONTAINER",
    "FOCUS_CSS",
    "FOCUS_RING",
    "PAGE_CSS",
    "READABLE_CSS",
    "SCROLL_X",
    "STACK_BELOW_PX",
    "TABS_CSS",
    "use_page_style",
]

STACK_BELOW_PX = 1000  # narrower containers stack a lesson's controls above its content
# the container whose width decides (a CSS container query, not the window's width: an embed in
# a 320 px column of a wide course page stacks like the page on a phone). The page's root and
# every embed's element are this container (web/site/loader.css, web/site/embed.js).
CONTAINER = "pyplay"
SCROLL_X = "pyplay-scroll-x"  # a box that scrolls a wide drawing sideways on a narrow page
LINE_MIN_PX = 280  # a line beside a button narrower than this goes under it (a phone)

FOCUS_RING = "2px solid #1a5fb4"  # around what has the keyboard's focus

# Panel's theme sets these colours on every component's :host, hence !important; the ratios
# (text on its background) are WCAG's: code 8.3, info 7.7, warning 7.2, buttons 5.6, 5.3
# (warning, success) and 6.5 (danger: Bokeh's own red on white is 3.96, under AA's 4.5)
READABLE_CSS = """
:host {
  --code-text-color: #1f4e8c !important;
  --info-text-color: #055160 !important;
  --warning-text-color: #664d03 !important;
}
.bk-btn-warning { background-color: #a35200 !important; border-color: #8a4500 !important;
  color: #fff !important; }
.bk-btn-warning:hover { background-color: #8a4500 !important; }
.bk-btn-success, .bk-btn-success a { background-color: #1e7b34 !important;
  border-color: #18652b !important; color: #fff !important; }
.bk-btn-success:hover { background-color: #18652b !important; }
.bk-btn-danger { background-color: #b02a37 !important; border-color: #8e2230 !important;
  color: #fff !important; }
.bk-btn-danger:hover { background-color: #8e2230 !important; }
"""

FOCUS_CSS = f"""
:focus-visible {{ outline: {FOCUS_RING} !important; outline-offset: 1px; }}
"""

PAGE_CSS = f"""
:host(.bk-Row) {{ flex-wrap: wrap; }}
:host(.bk-GridBox) {{
  grid-template-columns: repeat(auto-fill, minmax(min(100%, 330px), 1fr)) !important;
  grid-template-rows: none !important;
}}
:host(.bk-GridBox) > * {{ grid-row: auto !important; grid-column: auto !important; }}
:host(.pyplay-bench-maps) {{
  grid-template-columns: repeat(auto-fill, minmax(min(100%, 250px), 1fr)) !important;
}}
pre {{ white-space: pre-wrap; overflow-wrap: anywhere; }}
/* a drawing that needs its width (a network's figure) scrolls inside its box on a phone */
:host(.{SCROLL_X}) {{ overflow-x: auto !important; min-width: 0 !important; }}
/* a plot's text alternative (pyplay.ui.plot_text): read by screen readers, not drawn */
:host(.pyplay-plot-text) {{ position: absolute !important; width: 1px !important;
  height: 1px !important; overflow: hidden !important; clip-path: inset(50%) !important;
  margin: 0 !important; padding: 0 !important; }}
/* a section's title wraps in a narrow column instead of widening it */
:host(.pyplay-section-header) .bk-btn {{ white-space: normal; text-align: left; height: auto; }}
{READABLE_CSS}
{FOCUS_CSS}
@container {CONTAINER} (max-width: {STACK_BELOW_PX}px) {{
  :host(.pyplay-page) {{ flex-direction: column !important; }}
  /* Bokeh gives a row the sum of its children's minimum widths as its own, also when it is
     stacked here: a lesson would stay as wide as its controls and content side by side */
  :host(.pyplay-page), :host(.pyplay-lesson), :host(.pyplay-lesson-page),
  :host(.pyplay-app), :host(.pyplay-widget), :host(.pyplay-section), :host(.pyplay-start),
  :host(.pyplay-start-row), :host(.pyplay-try-this), :host(.pyplay-try-row), :host(.bk-Row),
  :host(.bk-panel-models-layout-Column) {{
    min-width: 0 !important;
  }}
  /* a lesson's controls column no wider than its container (a 320 px column) */
  :host(.pyplay-bench-controls) {{ max-width: 100% !important; }}
}}
"""

# Panel's Tabs take no raw_css: pass this as their ``stylesheets``. The headers wrap; a tab
# not shown is out of the layout: Bokeh only hides it (``visibility: hidden``, set on the
# element), so the browser restyled and laid out every lesson opened so far at each change of
# the tab shown. Bokeh's own layout passes skip those tabs too (``web/site/client.js``); out
# of the layout, a tab laid out in a window since resized is measured afresh when shown (kept
# in the layout, it kept the old window's width: the page grew wider than the window). A tab
# the learner clicks while Python shows another (the address's lesson, at start) stays shown
# (client.js leaves Python's older tab change out).
TABS_CSS = f"""
.bk-header {{ flex-wrap: wrap !important; }}
/* narrower than Bokeh's 8 px a side: every tab in one row at 1280 px */
.bk-tab {{ padding-left: 5px !important; padding-right: 5px !important; }}
.bk-tab:focus-visible {{ outline: {FOCUS_RING} !important; outline-offset: -2px; }}
:host > [style*="visibility: hidden"] {{ display: none !important; }}
@container {CONTAINER} (max-width: {STACK_BELOW_PX}px) {{ :host {{ min-width: 0 !important; }} }}
"""


def use_page_style() -> None:
    """Add :data:`PAGE_CSS` to every component Panel renders from now on (once)."""
    if PAGE_CSS not in pn.config.raw_css:
        pn.config.raw_css = [*pn.config.raw_css, PAGE_CSS]
