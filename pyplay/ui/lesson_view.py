"""The template of a trained lesson's page: :class:`LessonView`.

A lesson is an instrument (:mod:`pyplay.ui.workbench`): at its top the **workbench**, on one
screen, holds the Train / Pause / Step / Reset buttons, the status line, the lesson's first
settings (:attr:`LessonView.key_controls`; the rest, learning rate and seed under "More
settings"), the message of the last change, the loss curve (with the task's baseline and,
after a setting built a new model, the run before it, faded) and the lesson's main look-inside
view (:meth:`LessonView.inside`), all live while the model trains. Below it: one line of what
the lesson shows, its "Try this" experiments, the export bar, and the lesson's sections
(:meth:`LessonView.sections`, each closed until opened), the first of them its help
(``help.md``, :mod:`~pyplay.ui.lesson_page`).

What a new lesson declares:

- ``state_class``: its state (``train``, ``reset``, ``history``, ``status``, ``message``,
  ``version``);
- :meth:`LessonView.build`: its figures and widgets, made once;
- :meth:`LessonView.controls`: its settings' widgets (the first :attr:`LessonView.key_controls`
  in sight);
- :meth:`LessonView.inside`: its main look-inside view, beside the loss curve;
- :meth:`LessonView.sections`: its parts below the workbench;
- :meth:`LessonView.refresh`: the redraw of its look-inside views from the model as it is.

The view's ``session`` (:class:`~pyplay.ui.session.TrainingSession`) owns the loop: Train /
Pause / Step / Reset, a slice at a time, the live redraws (``refresh``, through
:meth:`LessonView.after_training`) while training; a step goes session -> ``state.train`` ->
trainer -> state -> view (:meth:`LessonView._stream`, which a lesson extends when it plots
more than the loss). A lesson tunes its session by declaring timing on its class
(``budget_s = 0.12``), and "one training at a time" with its comparisons as data
(:func:`~pyplay.ui.session.one_at_a_time`). Rarer hooks: ``controls_below``,
``training_inputs``, ``curve``.

The page::

    Column(Row(Column(buttons, status, settings, Try this menu, alert, More settings),
               Column(loss curve, *inside)),
           about line, try this, export bar, *sections)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import panel as pn

from pyplay.ui.export_bar import ExportBar, curve_data
from pyplay.ui.landing import course_strip
from pyplay.ui.lesson_page import LessonPage
from pyplay.ui.lessons import spec_of
from pyplay.ui.plot_loss import LossPlot
from pyplay.ui.text import Text
from pyplay.ui.training import (
    lr_input,
    message_alert,
    seed_input,
    stream_losses,
)
from pyplay.ui.try_this import TryThis, try_box
from pyplay.ui.workbench import (
    INSET,
    Section,
    SectionLayout,
    controls_column,
    fit_width,
    section,
    sections,
    workbench,
)

__all__ = ["KEEP_NOTE", "LessonView"]

KEEP_NOTE = (
    "A new model setting builds a new model and goes on training it (the run before stays "
    "on the loss plot, faded); **Reset** or **Try this** starts afresh. The model trained so "
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
    controls_width: ClassVar[int] = 300
    key_controls: ClassVar[int] = 4  # settings in sight; the rest under "More settings"
    loss_height: ClassVar[int] = 220  # the workbench's loss curve, pixels
    # shows a playground tab by its title; the playground sets it, and the line under the
    # workbench then carries the course path (:func:`~pyplay.ui.landing.course_strip`)
    open_tab: Callable[[str], object] | None = None

    def __init__(self, state: Any = None) -> None:
        super().__init__(state)
        # log or linear, the learner's switch under it; the legend inside fits a phone
        self.loss_plot = LossPlot(height=self.loss_height, legend_inside=True)
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

    def inside(self) -> list[Any]:
        """The lesson's main look-inside view, in the workbench under the loss curve (live
        while training); nothing by default."""
        return []

    def sections(self) -> list[Any]:
        """The lesson's parts below the workbench (look inside, decode, data ...), a flat list
        in which a heading (``"## Title"``, or a layout that starts with one) opens a section
        (:func:`~pyplay.ui.workbench.sections`)."""
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
        """The loss curve drawn afresh from ``state.history`` (after a rebuild: empty), with
        the run a setting's rebuild replaced (``state.previous_run``) faded beside it."""
        self.loss_source.data = curve_data(self.state.history, self.curve)
        before = getattr(self.state, "previous_run", None)
        if before is None:
            self.loss_plot.clear_before()
        else:
            self.loss_plot.show_before(*before)
        self.loss_plot.fit_scale()  # a loaded curve that spans less than a decade: linear

    # ------------------------------------------------------------------ layout
    def status_line(self) -> Text:
        """The status line (step, loss, speed)."""
        return Text(self.state.param.status, css_classes=[self.status_css])

    def loss_pane(self) -> pn.Column:
        """The loss curve and its log / linear switch."""
        return self.loss_plot.panel()

    def about(self) -> list[Any]:
        """What the lesson shows, in one line under the workbench (its spec's ``about``), and,
        in the playground, the course path: where the lesson sits and the lessons either side."""
        try:
            spec = spec_of(type(self.state))
        except KeyError:
            return []
        line = f"**{spec.title}**: {spec.about}. Open the sections below for more."
        about = pn.pane.Markdown(line, sizing_mode="stretch_width", css_classes=["pyplay-about"])
        if self.open_tab is None or spec.parent is not None:
            return [about]
        return [about, course_strip(spec.title, self.open_tab)]

    def help_section(self) -> Section:
        """The lesson's help (``help.md``) as its first section."""
        help_pane = pn.pane.Markdown(self.help_text)
        return section("How to use this lesson", pn.pane.Markdown(self.heading), help_pane)

    def controls_column(self, box: TryThis | None = None) -> pn.Column:
        """The workbench's controls: the buttons, the status line, the first
        :attr:`key_controls` settings, the lesson's Try this menu (``box``) and its message
        in sight; under "More settings" the other settings, learning rate and seed, the note
        that a new model keeps the trained one, and what the lesson puts below them."""
        settings = self.controls()
        picker = [] if box is None else [box.picker(self.controls_width - 2 * INSET)]
        shown = [
            self.session.buttons(),
            self.status_line(),
            *settings[: self.key_controls],
            *picker,
            message_alert(self.state),
        ]
        more = [
            *settings[self.key_controls :],
            *self.training_inputs(),
            pn.pane.Markdown(KEEP_NOTE, css_classes=["pyplay-keep-note"]),
            *self.controls_below(),
        ]
        return controls_column(shown, more, self.controls_width)

    def panel(self) -> pn.viewable.Viewable:
        """The page: the workbench, the line of what the lesson shows, Try this, the export
        bar and the lesson's sections."""
        box = try_box(self)
        bench = workbench(self.controls_column(box), [self.loss_pane(), *self.inside()])
        page = pn.Column(
            bench,
            *self.about(),
            *([] if box is None else [box.panel()]),
            self.export.panel(),
            self.help_section(),
            *sections(self.sections()),
            sizing_mode="stretch_width",
            css_classes=["pyplay-lesson-page"],
        )
        fit_width(page)  # the sections' figures too fit a phone (the workbench's already do)
        self.described(page)  # text alternatives for its plots
        for layout in page.select(SectionLayout):  # and so do those made when first opened
            if layout.section is not None:
                layout.section.when_built(self._built)
        return page

    def _built(self, body: pn.Column) -> None:
        """A section's parts made at its first opening (:class:`~pyplay.ui.workbench.Later`):
        fitted and described like the rest of the page."""
        fit_width(body)
        self.describe_more(body)
