"""What the dynamic-network lesson's small sub-tabs share (the adaptive filter, stability,
RTRL, the LSTM and GRU of lecture 8 of an NLP course): a settings column with the buttons
beside a page of heading, help, status line, the view's own parts and a note of where the
page departs from that lecture (:attr:`SubTabView.lecture_key`; heading, help and note are
prose in the sub-tab's ``<name>_help.md``, :mod:`~pyplay.ui.lesson_page`); the view redraws
whenever its state's ``version`` moves."""

from __future__ import annotations

from typing import Any, ClassVar

import panel as pn
from bokeh.models import Plot

from pyplay.ui.lectures import lecture
from pyplay.ui.lesson_page import LessonPage
from pyplay.ui.text import Text
from pyplay.ui.training import message_alert
from pyplay.ui.workbench import controls_column, section, workbench

__all__ = ["SubTabView", "wide"]


def wide(part: Any) -> Any:
    """A Bokeh figure in a pane as wide as the page; any other part as it is."""
    return pn.pane.Bokeh(part, sizing_mode="stretch_width") if isinstance(part, Plot) else part


class SubTabView(LessonPage):
    """A sub-tab around ``state``: a subclass names its ``state_class``, builds its figures
    in :meth:`build` and supplies :meth:`redraw`, :meth:`controls` and :meth:`body`; it is
    redrawn now and on every new ``version`` of the state. ``panel()`` builds the page on its
    first call and returns the same object after."""

    _page: pn.Column | None = None
    # the lecture the sub-tabs follow (the adaptive filter, stability, RTRL and the LSTM and
    # GRU are all lecture 8 of an NLP course), named in the title of the note on departures
    lecture_key: ClassVar[str] = "nlp"
    key_controls = 4  # settings in sight; the rest under "More settings"
    controls_width = 320

    def __init__(self, state: Any = None) -> None:
        super().__init__(state)
        self.build()
        self.state.param.watch(lambda *_: self.redraw(), "version")
        self.redraw()

    def redraw(self) -> None:
        raise NotImplementedError

    def controls(self) -> list[Any]:
        """The settings, under the buttons: the first :attr:`key_controls` in sight, the
        rest under "More settings"."""
        raise NotImplementedError

    def controls_below(self) -> list[Any]:
        """What stays in sight under the first settings (nothing by default)."""
        return []

    def body(self) -> list[Any]:
        """The view's parts, beside the controls; a Bokeh figure among them is shown as wide
        as the page (:func:`wide`)."""
        raise NotImplementedError

    def panel(self) -> pn.Column:
        """The sub-tab (built on the first call, the same object after): the workbench, then
        the help and the note on departures as closed sections."""
        if self._page is None:
            s = self.state
            settings = self.controls()
            shown = [
                self.session.buttons(),
                Text(s.param.status, css_classes=[self.status_css]),
                *settings[: self.key_controls],
                message_alert(s),
                *self.controls_below(),
            ]
            more = settings[self.key_controls :]
            views = [*self.header_extra(), *map(wide, self.body())]
            bench = workbench(controls_column(shown, more, self.controls_width), views)
            help_pane = pn.pane.Markdown(self.help_text)
            how = section("How to use this", pn.pane.Markdown(self.heading), help_pane)
            parts: list[Any] = [how]
            if self.text.departs:
                departs = pn.pane.Markdown(self.text.departs)
                title = f"Where this departs from {lecture(self.lecture_key)}"
                parts.append(section(title, departs))
            self._page = self.described(pn.Column(bench, *parts, sizing_mode="stretch_width"))
        return self._page

    def header_extra(self) -> list[Any]:
        """What stands between the help and the status line (nothing by default)."""
        return []
