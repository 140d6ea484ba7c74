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
  wider of the two (Bokeh would keep the two side by side's minimum width).
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
pre {{ white-space: pre-wrap; overflow-wrap: anywhere; }}
@media (max-width: {STACK_BELOW_PX}px) {{
  :host(.pyplay-page) {{ flex-direction: column !important; }}
  /* Bokeh gives a row the sum of its children's minimum widths as its own, also when it is
     stacked here: a lesson would stay as wide as its controls and content side by side */
  :host(.pyplay-page), :host(.pyplay-lesson) {{ min-width: 0 !important; }}
}}
"""

# Panel's Tabs take no raw_css: pass this as their ``stylesheets`` (the headers wrap). Bokeh
# hides the tabs not shown with ``visibility: hidden`` only, so the browser still styles and
# lays them out. Leaving them out of Bokeh's layout passes (tried in client.js) left a hidden
# tab at the width of the window it was last laid out in: after a resize the page was wider
# than the window (test_layout). Taking them out of the layout (``display: none``) failed
# test_autosave now and then: after a reload
# from a lesson's address, a click on "Saved work" right after the start can be overtaken by
# Python showing the address's lesson tab (page and Python then disagree on the tab shown);
# with ``visibility: hidden`` the hidden tab's text still counts as visible to the test.
TABS_CSS = ".bk-header { flex-wrap: wrap !important; }"


def use_page_style() -> None:
    """Add :data:`PAGE_CSS` to every component Panel renders from now on (once)."""
    if PAGE_CSS not in pn.config.raw_css:
        pn.config.raw_css = [*pn.config.raw_css, PAGE_CSS]
