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
  controls column above its content when the window is narrower than
  :data:`STACK_BELOW_PX` (a tablet), beside it otherwise; stacked, it is no wider than the
  wider of the two (Bokeh would keep the two side by side's minimum width), and neither the
  app (``pyplay-app``), the tabs nor a lesson keeps a minimum width wider than a phone;
- the workbench's gate maps (``pyplay-bench-maps``) come three to a row beside a lesson's
  controls at 1280 px, one to a row on a phone.
"""

from __future__ import annotations

import panel as pn

__all__ = ["PAGE_CSS", "STACK_BELOW_PX", "TABS_CSS", "use_page_style"]

STACK_BELOW_PX = 1000  # narrower windows stack a lesson's controls above its content

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
@media (max-width: {STACK_BELOW_PX}px) {{
  :host(.pyplay-page) {{ flex-direction: column !important; }}
  /* Bokeh gives a row the sum of its children's minimum widths as its own, also when it is
     stacked here: a lesson would stay as wide as its controls and content side by side */
  :host(.pyplay-page), :host(.pyplay-lesson), :host(.pyplay-lesson-page),
  :host(.pyplay-app), :host(.pyplay-section), :host(.pyplay-start),
  :host(.pyplay-start-row) {{ min-width: 0 !important; }}
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
:host > [style*="visibility: hidden"] {{ display: none !important; }}
@media (max-width: {STACK_BELOW_PX}px) {{ :host {{ min-width: 0 !important; }} }}
"""


def use_page_style() -> None:
    """Add :data:`PAGE_CSS` to every component Panel renders from now on (once)."""
    if PAGE_CSS not in pn.config.raw_css:
        pn.config.raw_css = [*pn.config.raw_css, PAGE_CSS]
