"""The "LSTM and GRU (lecture 8)" sub-tab of the dynamic networks lesson: the LSTM and GRU of
lecture 8 of an NLP course as six-layer networks in the book's notation, their diagram (drawn by
:mod:`~pyplay.ui.lessons.dynamic.diagram_plot`, like the "Build and run" network) and
equations for the chosen variant, every layer's output on the input signal from the network's
own ``forward``, and training on a reference system with Train / Pause / Step / Reset.

Rendering only: actions call :class:`~pyplay.ui.lessons.dynamic.book_state.BookRNNState`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import panel as pn

from pyplay.ui.export_bar import curve_data
from pyplay.ui.lectures import lecture, lecture_label
from pyplay.ui.lessons.dynamic.book_state import NETWORKS, BookRNNState
from pyplay.ui.lessons.dynamic.diagram_plot import diagram_figure, update_diagram
from pyplay.ui.lessons.dynamic.state import SYSTEM_LABELS
from pyplay.ui.lessons.dynamic.subtab import SubTabView
from pyplay.ui.plot_loss import LossPlot
from pyplay.ui.plots import set_data
from pyplay.ui.text import Text
from pyplay.ui.training import lr_input, seed_input, stream_losses, typed_number

__all__ = ["PYTORCH", "BookRNNView"]

_NLP = lecture_label("nlp")  # the lecture the sub-tab follows, as a label names it


PYTORCH = (
    f"**The GRU of {lecture('nlp')} is not PyTorch's.** Two differences (`pyplay.nn.GRU` "
    "follows PyTorch; `BookGRU.from_torch` maps one onto the other). (1) *Where the reset "
    "gate acts*: "
    f"{_NLP} resets the delayed output before the weight, n¹ = IW¹˒¹ p + LW¹˒³ (a² ∘ a⁶(t−1)) "
    "+ b¹; PyTorch after it, n = W_in x + b_in + r ∘ (W_hn h + b_hn). The two agree only when "
    "W_hn is diagonal (a diagonal matrix commutes with ∘) and b_hn = 0; otherwise they "
    "differ, and the tests measure by how much. (2) *z and 1 − z*: PyTorch writes "
    f"h_t = (1 − z) ∘ n + z ∘ h_{{t−1}}, {_NLP} a⁶ = a⁴ ∘ a¹ + (1 − a⁴) ∘ a⁶(t−1), so its "
    "update gate is a⁴ = 1 − z: the same network with the z weights and bias "
    f"negated, which maps exactly. The LSTM of {_NLP} equals PyTorch's (`pyplay.nn.LSTM`) "
    "to 1e-12 with the gates i, f, g, o as layers 2, 3, 1, 4, c as a⁵ and h as a⁶."
)


def _note(problem: Any) -> Text:
    """The message under a control, shown while the state's ``problem`` parameter holds one."""
    return Text(problem, css_classes=["pyplay-local-note", "pyplay-book-problem"],
                visible=pn.bind(bool, problem), sizing_mode="stretch_width")  # fmt: skip


class BookRNNView(SubTabView):
    """The sub-tab around a :class:`BookRNNState`; ``panel()`` returns it."""

    state_class = BookRNNState
    status_css = "pyplay-book-status"

    def build(self) -> None:
        from pyplay.ui.lessons.dynamic.view import _signal_figure  # the lesson's run figure

        self.diagram_fig, self.diagram_sources = diagram_figure()
        self.diagram_fig.height = 360
        self.equations = Text("", css_classes=["pyplay-book-equations"])
        self.values = Text("", css_classes=["pyplay-book-values"])
        self.run_fig, self.run_source = _signal_figure(
            "Input and read-out", "value", ("t", "p", "a", "target"), "read-out a⁷(t)",
            color="#2c6fbb",
        )  # fmt: skip
        self.run_fig.line("t", "target", source=self.run_source, line_dash="dashed",
                          color="#c0392b", legend_label="reference system")  # fmt: skip
        self.loss_plot = LossPlot()

    def redraw(self) -> None:
        """A new network or setting: the diagram, the equations, the run and the curve."""
        s = self.state
        update_diagram(self.diagram_fig, self.diagram_sources, s.diagram())
        self.equations.object = "\n".join(s.equations())
        self.loss_plot.source.data = curve_data(s.history, ("step", "loss"))
        baseline = self.loss_plot.baseline  # predicting the mean; drawn beside a curve only
        baseline.update(location=float(np.var(s.y)), visible=bool(s.history["step"]))
        self.loss_plot.fit_scale()
        self.after_training()

    def after_training(self) -> None:
        """The run on the input signal with the weights as they are now."""
        run = self.state.run()
        T = run.p.size
        set_data(self.run_source, {"t": np.arange(1, T + 1), "p": run.p, "a": run.a7,
                                   "target": run.target})  # fmt: skip
        self.values.object = self.state.values_text(run)

    def _stream(self, result: Any) -> None:
        stream_losses(self.loss_plot.source, result)
        self.loss_plot.baseline.visible = bool(self.state.history["step"])

    def controls(self) -> list[Any]:
        s = self.state
        forget = pn.widgets.Checkbox.from_param(
            s.param.forget_gate, name="Forget gate, layer 3 (off: the original LSTM)"
        )
        peephole = pn.widgets.Checkbox.from_param(
            s.param.peephole, name="Peepholes LWᵐ˒⁵ (m = 2, 3, 4)"
        )
        bias = typed_number(  # a refused text is named where the state's problem is
            s.param.forget_bias, "Forget-gate bias b³ at start (1+ helps)", ("pyplay-book-problem",)
        )
        variant = pn.Column(
            forget, peephole, bias, _note(s.param.problem), sizing_mode="stretch_width"
        )

        def follow(*_: Any) -> None:
            variant.visible = s.network == "lstm"
            bias.disabled = not s.forget_gate

        s.param.watch(follow, ["network", "forget_gate"])
        follow()
        return [
            pn.widgets.Select.from_param(s.param.network, name="Network", options=NETWORKS),
            pn.widgets.IntSlider.from_param(s.param.hidden_size, name="Neurons a layer S"),
            variant,
            pn.widgets.RadioButtonGroup.from_param(s.param.signal, name="Input"),
            pn.widgets.IntSlider.from_param(s.param.steps, name="Steps T"),
            pn.widgets.Select.from_param(
                s.param.system, name="Reference system", options=dict(SYSTEM_LABELS)
            ),
            lr_input(s),
            _note(s.param.lr_problem),
            seed_input(s),
        ]

    def body(self) -> list[Any]:
        """The workbench's views: the read-out's loss and every layer on the input signal,
        live; then the network's diagram and its equations."""
        return [
            self.loss_plot.panel(),
            self.run_fig,
            self.values,
            "### The network and its equations",
            self.diagram_fig,
            self.equations,
            pn.pane.Markdown(PYTORCH),
        ]
