"""The template of a trained lesson's page: :class:`LessonView`.

It owns what every such page has: the message alert, the status line, the loss curve (with
the task's baseline), the export bar, the Train / Pause / Step / Reset buttons (from
:class:`~pyplay.ui.training.TrainingView`) and the controls column they sit in. A lesson
names its state class, has its heading and help in its folder's ``help.md``
(:mod:`~pyplay.ui.lesson_page`), builds its parts in :meth:`LessonView.build` and supplies
its settings' widgets (:meth:`LessonView.controls`), its look-inside sections
(:meth:`LessonView.sections`) and their redraw (:meth:`LessonView.refresh`); a step goes view
-> ``state.train`` -> trainer -> state -> view (:meth:`LessonView._stream`).

The page::

    Row(Column(*controls, buttons, *controls_below),
        Column(alert, try this, heading, help, status, loss curve, export bar, *sections))
"""

from __future__ import annotations

from typing import Any, ClassVar

import panel as pn

from pyplay.ui.export_bar import ExportBar, curve_data
from pyplay.ui.lesson_page import LessonPage
from pyplay.ui.plot_loss import LossPlot
from pyplay.ui.text import Text
from pyplay.ui.training import (
    lr_input,
    message_alert,
    seed_input,
    stream_losses,
)
from pyplay.ui.try_this import try_this

__all__ = ["KEEP_NOTE", "LessonView"]

KEEP_NOTE = (
    "A new model setting, **Reset** or **Try this** starts a new model; the one trained so "
    "far is kept in **Saved work** (when this browser can store it)."
)


class LessonView(LessonPage):
    """A lesson's page around its ``state`` (a lesson state with ``train``, ``reset``,
    ``history``, ``status``, ``message`` and ``version``; by default a new ``state_class``).

    The heading and help that open the training part are the lesson's ``help.md``
    (:class:`~pyplay.ui.lesson_page.LessonPage`); class attributes: ``curve`` the columns of
    the loss curve's source, ``controls_width`` the controls column's width. A lesson builds
    its own parts in :meth:`build`, called once the loss curve and the export bar exist.
    """

    curve: ClassVar[tuple[str, ...]] = ("step", "loss")
    controls_width: ClassVar[int] = 320

    def __init__(self, state: Any = None) -> None:
        super().__init__(state)
        self.loss_plot = LossPlot()  # log or linear, the learner's switch under it
        self.loss_source, self.baseline = self.loss_plot.source, self.loss_plot.baseline
        self.export = ExportBar(self.state.lesson_key, self.state)  # model file, metrics, code
        self.build()

    # ------------------------------------------------------------------ hooks
    def controls(self) -> list[Any]:
        """The widgets of the lesson's settings (above the buttons)."""
        return []

    def controls_below(self) -> list[Any]:
        """What goes under the buttons in the controls column (nothing by default)."""
        return []

    def training_inputs(self) -> list[Any]:
        """The inputs every lesson state has, after its own settings: learning rate and seed."""
        return [lr_input(self.state), seed_input(self.state)]

    def sections(self) -> list[Any]:
        """The lesson's parts after the export bar (look inside, decode, data ...)."""
        return []

    def refresh(self, *_: Any) -> None:
        """Redraw the look-inside views from the current model (nothing by default)."""

    def source_text(self) -> str:
        """What is typed in the lesson's ``source_box`` (``value_input`` follows every
        keystroke, ``value`` only Enter or leaving the box)."""
        box = self.source_box
        return str(box.value_input or box.value or "")

    # ------------------------------------------------------------------ training
    def _stream(self, records: list[Any]) -> None:
        stream_losses(self.loss_source, records)

    def after_training(self) -> None:
        self.refresh()

    def watch_version(self) -> None:
        """Redraw whenever the model is rebuilt or loaded, and now."""
        self.state.param.watch(self._on_version, "version")
        self._on_version()

    def _on_version(self, *_: Any) -> None:
        """A new or loaded model: the curve from the state's history, the task's baseline,
        the look-inside views redrawn."""
        self.reset_curve()
        task = getattr(self.state, "task_obj", None)
        if task is not None:
            self.baseline.location = float(task.baseline_loss())
        self.refresh()

    def reset_curve(self) -> None:
        """The loss curve drawn afresh from ``state.history`` (after a rebuild: empty)."""
        self.loss_source.data = curve_data(self.state.history, self.curve)
        self.loss_plot.fit_scale()  # a loaded curve that spans less than a decade: linear

    # ------------------------------------------------------------------ layout
    def status_line(self) -> Text:
        """The status line (step, loss, speed)."""
        return Text(self.state.param.status, css_classes=[self.status_css])

    def loss_pane(self) -> pn.Column:
        """The loss curve and its log / linear switch."""
        return self.loss_plot.panel()

    def training(self) -> list[Any]:
        """Heading, help, status line, loss curve and export bar."""
        help_pane = pn.pane.Markdown(self.help_text)
        return [self.heading, help_pane, self.status_line(), self.loss_pane(), self.export.panel()]

    def controls_column(self) -> pn.Column:
        """The settings, the four buttons, the note that a new model keeps the trained one,
        and what goes below them."""
        return pn.Column(
            *self.controls(),
            *self.training_inputs(),
            self.buttons(),
            pn.pane.Markdown(KEEP_NOTE, css_classes=["pyplay-keep-note"]),
            *self.controls_below(),
            width=self.controls_width,
        )

    def panel(self) -> pn.viewable.Viewable:
        """The page: the controls column beside the alert, the training part and the
        lesson's sections."""
        main = pn.Column(
            message_alert(self.state),
            *try_this(self),
            *self.training(),
            *self.sections(),
            sizing_mode="stretch_width",
        )
        return pn.Row(
            self.controls_column(), main, sizing_mode="stretch_width", css_classes=["pyplay-page"]
        )
