"""The "Dynamic networks" lesson, in the notation of Hagan's *Neural Network Design*: build a
layered digital dynamic network from presets or a palette, see its diagram and equations, run it
on a signal and train it; then the vanishing gradient of a first-order recurrent network with
``lw`` on a slider; and the book's sequence-to-sequence network, its attention over a tapped
delay line of encoder states (:class:`~pyplay.ui.lessons.textbook.view.TextbookSeq2SeqView`);
the adaptive filter trained by LMS (:mod:`~pyplay.ui.lessons.dynamic.adaptive_view`), the
eigenvalues of LW¹˒¹ and what they do to memory (:mod:`~pyplay.ui.lessons.dynamic.stability_view`)
RTRL beside BPTT (:mod:`~pyplay.ui.lessons.dynamic.rtrl_view`) and the LSTM and GRU of
lecture 8 of an NLP course as layered networks (:mod:`~pyplay.ui.lessons.dynamic.book_view`).

Rendering only: actions call :class:`~pyplay.ui.lessons.dynamic.state.LDDNLessonState` and
:class:`~pyplay.ui.lessons.dynamic.lddn_gradient.VanishingGradientState`. The sub-tabs of
:data:`PARTS` are lessons of their own (keys ``"textbook"``, ``"adaptive"``, ``"stability"``,
``"rtrl"``, ``"lecture_rnn"``, :data:`~pyplay.ui.lessons.LESSONS`):
the view shows them through ``parts``, ``show_part``, ``shown_part`` and ``watch_parts`` (see
:mod:`pyplay.ui.location`), so the page address (and autosave, for the textbook's) reach
their states too.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import panel as pn
import param
from bokeh.models import ColumnDataSource
from bokeh.plotting import figure

from pyplay.dynamic.transfer import TRANSFERS
from pyplay.ui.inputs import NumberBox
from pyplay.ui.lesson_view import LessonView
from pyplay.ui.lessons import SPECS
from pyplay.ui.lessons.dynamic.adaptive_view import AdaptiveFilterView
from pyplay.ui.lessons.dynamic.diagram_plot import diagram_figure, update_diagram
from pyplay.ui.lessons.dynamic.lddn_gradient import VanishingGradientState
from pyplay.ui.lessons.dynamic.rtrl_view import RTRLView
from pyplay.ui.lessons.dynamic.stability_view import StabilityView
from pyplay.ui.lessons.dynamic.state import PRESETS, SYSTEM_LABELS, LDDNLessonState
from pyplay.ui.lessons.textbook.view import TextbookSeq2SeqView
from pyplay.ui.plots import legend_outside, line_figure, set_data, watch_placeholder
from pyplay.ui.style import TABS_CSS
from pyplay.ui.text import Text
from pyplay.ui.training import message_alert
from pyplay.ui.try_this import try_box
from pyplay.ui.workbench import INSET, controls_column, sections, workbench

__all__ = ["LECTURE_RNN", "PARTS", "SUBTABS", "DynamicLesson"]

LECTURE_RNN = "lecture_rnn"  # the LSTM and GRU of lecture 8 of an NLP course
PARTS = ("textbook", "adaptive", "stability", "rtrl", LECTURE_RNN)  # lessons of their own
SUBTABS = ("Build and run", "Vanishing gradient", *(SPECS[k].title for k in PARTS))
CONTROLS_PX = 320  # the Build sub-tab's controls column (the palette's width too)

GRADIENT_HELP = (
    "The book's first-order network **a(t) = f(lw a(t−1) + iw p(t))**. Backpropagation "
    "through time asks how much the last output depends on each earlier one: "
    "**∂a(T)/∂a(t) = lw^(T−t)** for purelin. Move lw below 1 and the gradient vanishes "
    "geometrically; above 1 it explodes. With tansig each step also multiplies by "
    "1 − a(t)², so a saturated neuron (try the step input) forgets even faster."
)


def _line_figure(title: str, y_label: str, log: bool = False) -> figure:
    box = ((1.0, 2.0), (0.1, 1.0) if log else (-1.0, 1.0))
    fig = line_figure(title, "time step t", y_label, height=240, log=log, box=box)
    legend_outside(fig)
    return fig


def _signal_figure(
    title: str, y_label: str, columns: tuple[str, ...], output: str, **line: Any
) -> tuple[figure, ColumnDataSource]:
    """A figure of the input p(t) (dots) and the output a(t) (a line labelled ``output``)."""
    fig = _line_figure(title, y_label)
    source = ColumnDataSource({c: [] for c in columns})
    fig.scatter("t", "p", source=source, size=6, color="#7f8c8d", legend_label="input p(t)")
    fig.line("t", "a", source=source, line_width=2, legend_label=output, **line)
    watch_placeholder(fig, source)
    return fig, source


class PaletteNumbers(param.Parameterized):
    """The palette's numbers, each typed in a :class:`~pyplay.ui.inputs.NumberBox`: a text
    that is not a whole number in range is refused with a note under its box (a Bokeh number
    input dropped it silently). Whether a layer or a connection fits the network is the
    state's to say (:meth:`LDDNLessonState.add_layer`, :meth:`LDDNLessonState.connect`)."""

    size = param.Integer(1, bounds=(1, 64), doc="the size S of the layer Add layer appends")
    to = param.Integer(1, bounds=(1, 64), doc="the layer m a connection goes to")
    source = param.Integer(1, bounds=(1, 64), doc="the input or layer l it comes from")


class DynamicLesson(LessonView):
    """Builds the "Dynamic networks" lesson around its two states."""

    state_class = LDDNLessonState
    status_css = "pyplay-lddn-status"

    def __init__(self, state: Any = None, gradient: VanishingGradientState | None = None) -> None:
        self.gradient = gradient or VanishingGradientState()
        super().__init__(state)

    def build(self) -> None:
        self.palette_numbers = PaletteNumbers()
        self.seq2seq = TextbookSeq2SeqView()
        self.parts: dict[str, Any] = {  # sub-tabs that are lessons, in the order of PARTS
            "textbook": self.seq2seq,
            "adaptive": AdaptiveFilterView(),
            "stability": StabilityView(),
            "rtrl": RTRLView(),
            LECTURE_RNN: SPECS[LECTURE_RNN].view_class()(),
        }
        self.subtabs: pn.Tabs | None = None
        self._pages: list[Any] = []  # the sub-tabs' layouts, in the order of SUBTABS
        self.diagram_fig, self.diagram_sources = diagram_figure()
        self.equations = Text("", css_classes=["pyplay-lddn-equations"])
        self.weights = Text("", css_classes=["pyplay-lddn-weights"])
        self.values = Text("", css_classes=["pyplay-lddn-values"])
        self.initial = Text("", css_classes=["pyplay-lddn-initial"])
        self.run_fig, self.run_source = _signal_figure(
            "Input and output", "value", ("t", "p", "a", "target"), "output a(t)", color="#2c6fbb"
        )
        self.run_fig.line(
            "t",
            "target",
            source=self.run_source,
            line_dash="dashed",
            color="#c0392b",
            legend_label="reference system",
        )
        self.description = pn.widgets.TextAreaInput(
            name="Description (JSON)", height=160, sizing_mode="stretch_width"
        )
        self._grad_figures()
        self.state.param.watch(self._on_version, "version")
        self.state.param.watch(
            lambda *_: self.refresh(), ["signal", "steps", "typed", "system", "a0"]
        )
        self.state.param.watch(self._on_weights, "weights_version")
        self.gradient.param.watch(
            lambda *_: self.refresh_gradient(), ["lw", "iw", "transfer", "signal", "steps"]
        )
        self._on_version()
        self.refresh_gradient()

    # ------------------------------------------------------------------ build and run
    def _on_version(self, *_: Any) -> None:
        self.description.value = self.state.description
        update_diagram(self.diagram_fig, self.diagram_sources, self.state.diagram())
        super()._on_version()  # the curve, the run, the weights

    def _on_weights(self, *_: Any) -> None:
        """New weights (loaded, a step): redraw now, unless training, whose live redraws
        come at most every ``refresh_interval_s``
        (:meth:`~pyplay.ui.session.TrainingSession.live_refresh`)."""
        if not self.state.running:
            self.refresh()

    def refresh(self, *_: Any) -> None:
        s = self.state
        self.equations.object = "\n".join(s.equations())
        self.weights.object = s.weights_text()
        self.initial.object = s.initial_text()
        run = s.run()
        if run is None:
            return
        T = run.p.size
        target = run.target if run.target is not None else np.full(T, np.nan)
        set_data(
            self.run_source,
            {"t": np.arange(1, T + 1), "p": run.p, "a": run.out[:, 0], "target": target},
        )
        rows = ["  t     p(t)      a(t)" + ("   reference" if run.target is not None else "")]
        for k in range(min(T, 12)):
            row = f"{k + 1:3d} {run.p[k]:8.4f} {run.out[k, 0]:9.4f}"
            rows.append(row + (f" {target[k]:11.4f}" if run.target is not None else ""))
        self.values.object = "\n".join(rows)

    def _palette(self) -> pn.Column:
        s = self.state
        numbers = self.palette_numbers
        size = NumberBox(numbers.param.size, "Size S")
        transfer = pn.widgets.Select(
            name="Transfer", options=list(TRANSFERS), value="tansig", width=110
        )
        bias = pn.widgets.Checkbox(name="bias", value=True, width=60)
        add = pn.widgets.Button(name="Add layer", width=110)
        drop = pn.widgets.Button(name="Remove last layer", width=150)
        add.on_click(lambda _: s.add_layer(numbers.size, str(transfer.value), bias.value))
        drop.on_click(lambda _: s.remove_last_layer())
        kind = pn.widgets.RadioButtonGroup(name="Weight", options=["IW", "LW"], value="LW")
        to = NumberBox(numbers.param.to, "to layer m")
        source = NumberBox(numbers.param.source, "from l")
        for box in (size, to, source):
            box.box.width = 90  # the boxes side by side, each box's note under their row
        delays = pn.widgets.TextInput(name="Delays (empty removes)", value="1", width=150)
        connect = pn.widgets.Button(name="Set connection", width=130)
        connect.on_click(
            lambda _: s.connect(str(kind.value), numbers.to, numbers.source, delays.value or "")
        )
        apply = pn.widgets.Button(name="Apply description", width=150)
        apply.on_click(lambda _: s.apply_description(self.description.value or ""))
        return pn.Column(
            "### Palette",
            pn.Row(size.box, transfer, bias),
            size.note_pane,
            pn.Row(add, drop),
            kind,
            pn.Row(to.box, source.box),
            to.note_pane,
            source.note_pane,
            delays,
            connect,
            self.description,
            apply,
            width=CONTROLS_PX,
        )

    def _build_tab(self) -> pn.Column:
        """The Build sub-tab: a workbench (buttons, status, the preset and the reference
        system, the loss and the network's response, live) over its sections (the network's
        palette, diagram and equations; its response step by step; its weights)."""
        s = self.state
        box = try_box(self)
        shown = [
            self.session.buttons(),
            self.status_line(),
            pn.widgets.Select.from_param(
                s.param.preset, name="Start from", options={k: v for k, v in PRESETS.items()}
            ),
            pn.widgets.Select.from_param(
                s.param.system, name="Reference system", options=dict(SYSTEM_LABELS)
            ),
            *([] if box is None else [box.picker(CONTROLS_PX - 2 * INSET)]),
            message_alert(s),
        ]
        more = [
            pn.widgets.RadioButtonGroup.from_param(s.param.signal, name="Input"),
            pn.widgets.IntSlider.from_param(s.param.steps, name="Steps"),
            pn.widgets.TextInput.from_param(s.param.typed, name="Typed input"),
            pn.widgets.FloatInput.from_param(s.param.a0, name="Initial output a(0)", step=0.1),
            *self.training_inputs(),
        ]
        views = [self.loss_pane(), pn.pane.Bokeh(self.run_fig, sizing_mode="stretch_width")]
        bench = workbench(controls_column(shown, more, CONTROLS_PX), views)
        return pn.Column(
            bench,
            *self.about(),
            *([] if box is None else [box.panel()]),
            self.export.panel(),
            self.help_section(),
            *sections(
                [
                    "## Build the network: palette, diagram, equations",
                    pn.Row(
                        self._palette(),
                        pn.Column(
                            pn.pane.Bokeh(self.diagram_fig, sizing_mode="stretch_width"),
                            "### Equations",
                            self.equations,
                            sizing_mode="stretch_width",
                        ),
                        sizing_mode="stretch_width",
                        css_classes=["pyplay-page"],
                    ),
                    "## Its response, step by step",
                    self.initial,
                    self.values,
                    "## Weights",
                    self.weights,
                ]
            ),
            sizing_mode="stretch_width",
            css_classes=["pyplay-lesson-page"],
        )

    # ------------------------------------------------------------------ vanishing gradient
    def _grad_figures(self) -> None:
        self.response_fig, self.response_source = _signal_figure(
            "Response a(t)", "a(t)", ("t", "a", "p"), "a(t)"
        )
        self.grad_fig = _line_figure(
            "Gradient through time |∂a(T)/∂a(t)|", "|∂a(T)/∂a(t)|", log=True
        )
        self.grad_source = ColumnDataSource({"t": [], "grad": [], "theory": []})
        self.grad_fig.line(
            "t", "grad", source=self.grad_source, line_width=2, color="#2c6fbb", legend_label="BPTT"
        )
        self.grad_fig.scatter(
            "t", "theory", source=self.grad_source, color="#c0392b", legend_label="|lw|^(T−t)"
        )
        watch_placeholder(self.grad_fig, self.grad_source)
        self.grad_text = Text("", css_classes=["pyplay-gradient-text"])

    def refresh_gradient(self) -> None:
        v = self.gradient.view()

        def positive(x: np.ndarray) -> list[float]:
            return np.where(np.abs(x) > 0, np.abs(x), np.nan).tolist()

        self.response_source.data = {"t": v.t.tolist(), "a": v.a.tolist(), "p": v.p.tolist()}
        self.grad_source.data = {
            "t": v.t.tolist(),
            "grad": positive(v.grad),
            "theory": positive(v.theory),
        }
        self.grad_text.object = (
            f"{self.gradient.equation()}\n"
            f"∂a(T)/∂a(1) = {v.grad[0]:.3g}; each step back multiplies it by {v.ratio:.3f} "
            "on average"
        )

    def _gradient_tab(self) -> pn.Row:
        g = self.gradient
        controls = pn.Column(
            pn.widgets.FloatSlider.from_param(g.param.lw, name="lw", step=0.05),
            pn.widgets.FloatSlider.from_param(g.param.iw, name="iw", step=0.1),
            pn.widgets.RadioButtonGroup.from_param(g.param.transfer, name="Transfer"),
            pn.widgets.RadioButtonGroup.from_param(g.param.signal, name="Input"),
            pn.widgets.IntSlider.from_param(g.param.steps, name="Steps T"),
            width=320,
        )
        main = pn.Column(
            "## The vanishing gradient",
            pn.pane.Markdown(GRADIENT_HELP),
            self.grad_text,
            pn.pane.Bokeh(self.grad_fig, sizing_mode="stretch_width"),
            pn.pane.Bokeh(self.response_fig, sizing_mode="stretch_width"),
            sizing_mode="stretch_width",
            css_classes=["pyplay-plot-group"],  # one text alternative for its plots
        )
        return pn.Row(controls, main, sizing_mode="stretch_width", css_classes=["pyplay-page"])

    # ------------------------------------------------------------------ sub-tabs
    def panel(self) -> pn.Tabs:
        """The lesson's sub-tabs (built on the first call, the same object after). Every
        sub-tab's layout is built here, but each enters the page only when its sub-tab is
        first shown: the browser then draws one sub-tab's plots when the lesson opens, not
        all eight (opening the lesson took 5.4 s with seven of them)."""
        if self.subtabs is None:
            parts = (self.parts[k].panel() for k in PARTS)
            built = [self._build_tab(), self._gradient_tab()]
            self.described(pn.Column(*built))  # the sub-tabs' pages describe their own
            self._pages = [*built, *parts]
            slots = [
                pn.Column(sizing_mode="stretch_width", css_classes=["pyplay-lesson"])
                for _ in SUBTABS
            ]
            self.subtabs = pn.Tabs(
                *zip(SUBTABS, slots, strict=True),
                dynamic=False,
                sizing_mode="stretch_width",
                stylesheets=[TABS_CSS],
            )
            self.subtabs.param.watch(lambda event: self._fill(event.new), "active")
            self._fill(0)
        return self.subtabs

    def _fill(self, index: int) -> None:
        """Put sub-tab ``index``'s layout into its slot (once)."""
        assert self.subtabs is not None
        slot = self.subtabs.objects[index]
        if not slot.objects:
            slot.objects = [self._pages[index]]

    def show_part(self, key: str) -> Any:
        """Show the sub-tab of lesson ``key`` (a key of ``parts``; ``"dynamic"``: the first
        sub-tab, if a part is shown) and return its view (None for another key)."""
        tabs = self.panel()
        if key in self.parts:
            tabs.active = SUBTABS.index(SPECS[key].title)
            return self.parts[key]
        if key != self.state.lesson_key:
            return None
        if self.shown_part() is not None:
            tabs.active = 0
        return self

    def shown_part(self) -> str | None:
        """The key of the part whose sub-tab is shown (None: another sub-tab)."""
        title = SUBTABS[int(self.panel().active)]
        return next((k for k in self.parts if SPECS[k].title == title), None)

    def watch_parts(self, callback: Any) -> None:
        """Call ``callback()`` whenever another sub-tab is shown."""
        self.panel().param.watch(lambda *_: callback(), "active")
