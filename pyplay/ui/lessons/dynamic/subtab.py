"""What the dynamic-network lesson's small sub-tabs share (the adaptive filter, stability,
RTRL, the lecture's LSTM and GRU): a settings column with the buttons beside a page of
heading, help, status line, the view's own parts and a note of where the page departs from
the lecture (heading, help and note are prose in the sub-tab's ``<name>_help.md``,
:mod:`~pyplay.ui.lesson_page`); the view redraws whenever its state's ``version`` moves."""

from __future__ import annotations

from typing import Any

import panel as pn
from bokeh.models import Plot

from pyplay.ui.lesson_page import LessonPage
from pyplay.ui.text import Text
from pyplay.ui.training import message_alert

__all__ = ["SubTabView", "wide"]


def wide(part: Any) -> Any:
    """A Bokeh figure in a pane as wide as the page; any other part as it is."""
    return pn.pane.Bokeh(part, sizing_mode="stretch_width") if isinstance(part, Plot) else part


class SubTabView(LessonPage):
    """A sub-tab around ``state``: a subclass names its ``state_class``, builds its figures
    in :meth:`build` and supplies :meth:`redraw`, :meth:`controls` and :meth:`body`; it is
    redrawn now and on every new ``version`` of the state. ``panel()`` builds the page on its
    first call and returns the same object after."""

    _page: pn.Row | None = None

    def __init__(self, state: Any = None) -> None:
        super().__init__(state)
        self.build()
        self.state.param.watch(lambda *_: self.redraw(), "version")
        self.redraw()

    def redraw(self) -> None:
        raise NotImplementedError

    def controls(self) -> list[Any]:
        """The settings above the buttons."""
        raise NotImplementedError

    def controls_below(self) -> list[Any]:
        """What goes under the buttons (nothing by default)."""
        return []

    def body(self) -> list[Any]:
        """The view's parts between the status line and the note on departures; a Bokeh
        figure among them is shown as wide as the page (:func:`wide`)."""
        raise NotImplementedError

    def panel(self) -> pn.Row:
        """The sub-tab (built on the first call, the same object after)."""
        if self._page is None:
            s = self.state
            controls = pn.Column(
                *self.controls(), self.buttons(), *self.controls_below(), width=320
            )
            main = pn.Column(
                message_alert(s),
                self.heading,
                pn.pane.Markdown(self.help_text),
                *self.header_extra(),
                Text(s.param.status, css_classes=[self.status_css]),
                *map(wide, self.body()),
                pn.pane.Markdown(self.text.departs),
                sizing_mode="stretch_width",
            )
            self._page = pn.Row(
                controls, main, sizing_mode="stretch_width", css_classes=["pyplay-page"]
            )
        return self._page

    def header_extra(self) -> list[Any]:
        """What stands between the help and the status line (nothing by default)."""
        return []
