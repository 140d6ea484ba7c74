"""Plots a screen reader can use: a text alternative beside every live plot.

:class:`PlotTexts` keeps one visually hidden text (class ``pyplay-plot-text``,
:mod:`pyplay.ui.style`) after each group of plots (:data:`GROUP_CSS`: the workbench's views,
each section's body, the controls when a figure stands among them) saying what each of its
plots shows and its newest values (:func:`~pyplay.ui.plot_describe.describe`). It rewrites a
group's text when the group's data changes: once after a burst of changes (a redraw), at
once when nothing trains (a Step, a Pause, a new model), at most every :data:`RATE_S` seconds
while a model trains, and not while the group is hidden (a closed section catches up when
opened). The loss is also announced in a polite live region by ``web/site/announce.js``;
these texts are read where the plots stand, so a screen reader is not flooded by every
redraw.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import panel as pn
from bokeh.models import Plot

from pyplay.ui.plot_describe import describe_all
from pyplay.ui.text import Text

__all__ = ["GROUP_CSS", "RATE_S", "PlotTexts", "plot_groups"]

RATE_S = 2.0  # while training, a text alternative is rewritten at most this often
# the layouts that get one text for their plots: the workbench's views, a section's body, or
# a lesson's own group (a sub-tab's page without sections)
GROUP_CSS = (
    "pyplay-bench-views",
    "pyplay-bench-controls",  # a figure among the controls (the eigenvalues of a stability tab)
    "pyplay-section-body",
    "pyplay-plot-group",
)
TEXT_CSS = ["pyplay-plot-text"]  # visually hidden, read by screen readers (style.PAGE_CSS)


def _is_group(obj: Any) -> bool:
    return bool(set(getattr(obj, "css_classes", None) or []) & set(GROUP_CSS))


def plot_groups(page: Any) -> list[Any]:
    """The layouts in ``page`` (itself included) that are groups (:data:`GROUP_CSS`); none:
    ``page`` as the one group (an embed widget's own layout)."""
    found = [o for o in page.select(pn.layout.ListLike) if _is_group(o)]
    return found or [page]


def _figures(layout: Any) -> list[Any]:
    """The Bokeh panes in ``layout`` that hold a figure."""
    return [p for p in layout.select(pn.pane.Bokeh) if isinstance(p.object, Plot)]


def _drawn(layout: Any, among: Sequence[Any]) -> list[Plot]:
    """The figures of the panes ``among`` that ``layout`` shows now: neither a pane nor a
    layout around it hidden (a part of another mode of the lesson)."""
    wanted = {id(p) for p in among}
    found: list[Plot] = []

    def walk(obj: Any) -> None:
        if not getattr(obj, "visible", True):
            return
        if id(obj) in wanted and obj.object.visible:
            found.append(obj.object)
        for child in getattr(obj, "objects", None) or []:
            walk(child)

    walk(layout)
    return found


class PlotTexts:
    """Text alternatives for the plots of a page, one per group (module docstring).

    Parameters
    ----------
    groups : sequence of Panel layouts
        Each a layout whose plots get one text appended at its end; a hidden one (a closed
        section's body) is described when it is shown.
    busy : callable
        Whether a model trains now (then a text is rewritten at most every :data:`RATE_S`).
    clock : callable
        Seconds (``time.perf_counter``; tests pass their own).
    """

    def __init__(
        self,
        groups: Sequence[Any],
        busy: Callable[[], bool],
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.busy, self.clock = busy, clock
        self.texts: list[Text] = []
        self._figures: list[list[Any]] = []  # the Bokeh panes of each group
        self._layouts: list[Any] = []
        self._dirty: list[bool] = []
        self._scheduled: list[bool] = []  # a description waits for the event loop
        self._last: list[float] = []
        for layout in groups:
            inside = {id(o) for o in layout.select(pn.layout.ListLike) if o is not layout}
            taken = {id(f) for g in groups if id(g) in inside for f in _figures(g)}
            self._group(layout, [f for f in _figures(layout) if id(f) not in taken])
        self.update(force=True)

    def _group(self, layout: Any, figures: list[Any]) -> None:
        """Describe ``figures`` (Bokeh panes) in a text at the end of ``layout``; a layout
        described already takes them into its text."""
        if not figures:
            return
        known = [k for k, other in enumerate(self._layouts) if other is layout]
        if known:
            k = known[0]
            self._figures[k].extend(figures)
            self._dirty[k] = True
        else:
            k = len(self.texts)
            text = Text("", css_classes=TEXT_CSS, sizing_mode="stretch_width", margin=0)
            layout.append(text)
            self.texts.append(text)
            self._figures.append(figures)
            self._layouts.append(layout)
            layout.param.watch(self._opener(k), "visible")
            self._dirty.append(True)
            self._scheduled.append(False)
            self._last.append(-np.inf)
        for pane in figures:
            for renderer in pane.object.renderers:
                source = getattr(renderer, "data_source", None)
                if source is not None and hasattr(source, "on_change"):
                    source.on_change("data", self._watcher(k))

    def add(self, layout: Any) -> None:
        """Describe the plots ``layout`` holds now that no text describes yet (a section's
        parts made when it was first opened: :class:`~pyplay.ui.workbench.Later`), in its own
        text, or in the one it has; then rewrite that text."""
        described = {id(f) for figures in self._figures for f in figures}
        self._group(layout, [f for f in _figures(layout) if id(f) not in described])
        for k, other in enumerate(self._layouts):
            if other is layout:
                self._maybe(k, force=True)

    def _watcher(self, k: int) -> Callable[[str, Any, Any], None]:
        def changed(attr: str, old: Any, new: Any) -> None:
            self._dirty[k] = True
            if self._scheduled[k]:
                return  # the burst of changes under way is described once, after it
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # no event loop (a script, a test): at once
                self._maybe(k, force=False)
            else:  # after the redraw under way has changed all its sources
                self._scheduled[k] = True
                loop.call_soon(self._later, k)

        return changed

    def _later(self, k: int) -> None:
        self._scheduled[k] = False
        self._maybe(k, force=False)

    def _opener(self, k: int) -> Callable[[Any], None]:
        def opened(event: Any) -> None:
            if event.new:
                self._maybe(k, force=True)

        return opened

    def _maybe(self, k: int, force: bool) -> None:
        if not self._dirty[k] or not self._layouts[k].visible:
            return
        now = self.clock()
        if not force and self.busy() and now - self._last[k] < RATE_S:
            return
        text = describe_all(_drawn(self._layouts[k], self._figures[k]))
        if text != self.texts[k].object:
            self.texts[k].object = text
        self._dirty[k], self._last[k] = False, now

    def update(self, force: bool = True) -> None:
        """Rewrite every shown group's text whose plots changed (all of them: ``force``)."""
        for k in range(len(self.texts)):
            self._dirty[k] = self._dirty[k] or force
            self._maybe(k, force=True)
