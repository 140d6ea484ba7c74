"""The "Memory" lesson: a recurrent net with an external memory learns associative recall or the
copy task; watch where each head reads and writes over the memory cells at every step (by
content, or by location with its stages), and what the memory holds, next to an LSTM and an
LSTM that attends to its own earlier states.

Rendering only: actions call :class:`~pyplay.ui.lessons.memory.state.MemoryLessonState`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import panel as pn
from bokeh.models import ColumnDataSource, HoverTool

from pyplay.ui.lectures import lecture, lecture_label
from pyplay.ui.lesson_view import LessonView
from pyplay.ui.lessons.memory.equations import lecture_equations
from pyplay.ui.lessons.memory.state import STAGES, MemoryLessonState
from pyplay.ui.plots import heatmap_figure, label_axis, set_data, set_title, update_heatmap
from pyplay.ui.text import Text
from pyplay.ui.training import int_sliders

__all__ = ["MemoryLesson"]

LOCATION_HELP = (
    f'**Addressing by location** (the *direct* addressing of {lecture("solberg")}, "the '
    'content at cell 4", '
    "made differentiable as in the Neural Turing Machine). From the state `sᵗ` a head emits a "
    "query `qᵗ` and `β` (content), a gate `g`, shift weights `σ` over −1, 0, +1 and `γ ≥ 1`; "
    "its weights over the cells go through four stages, the four columns above:\n\n"
    "1. content: `pᶜⱼ = softmaxⱼ(β cos(qᵗ, Mⱼ))`\n"
    "2. gate: `pᵍ = g pᶜ + (1 − g) pᵗ⁻¹` (jump to the content, or keep the last place)\n"
    "3. shift: `p̃ⱼ = Σₖ σₖ pᵍⱼ₋ₖ` (circular: from the last cell, +1 is cell 0)\n"
    "4. sharpen: `pᵗⱼ = p̃ⱼᵞ / Σᵢ p̃ᵢᵞ`\n\n"
    "With `g ≈ 0` and all of `σ` on +1 (or −1) the head moves one cell per step whatever the "
    "cells hold: on the copy task the write head lays the symbols in consecutive cells, and "
    "after the marker → the read head walks the same cells in the same order."
)
STAGE_AXIS = "content → gate → shift → sharpen"
MODELS = {"Memory net": "memnet", "LSTM": "lstm", "Attending RNN": "attend"}
HARD = {"Soft": "none", "Hard reads": "read", "Hard writes": "write", "Both hard": "both"}
FEEDBACK = {"Controller reads x, r": "none", f"x, y, r ({lecture_label('solberg')})": "output"}
FORMS = {"Attend: read as input": "input", f"s̃ replaces s ({lecture_label('solberg')})": "state"}
SIZES = dict(read_heads="Read heads", write_heads="Write heads", memory_size="Memory cells N",
             n_pairs="Pairs (recall)", seq_len="Symbols (copy)")  # fmt: skip
DRAWN = " (□ the cell drawn)"
MAP_WIDTH = 300  # pixels: the read, write and memory maps side by side in the workbench


def _marks(fig: Any) -> ColumnDataSource:
    """Hollow squares over the heatmap's cells (x step, y cell): the cells hard heads drew."""
    source = ColumnDataSource({"x": [], "y": []})
    for tool in fig.select(type=HoverTool):  # the heatmap's values only, not the marks
        tool.renderers = list(fig.renderers)
    fig.scatter(
        "x", "y", source=source, marker="square", size=11, fill_alpha=0.0,
        line_color="#ff2d6f", line_width=2,
    )  # fmt: skip
    return source


def _show_marks(source: ColumnDataSource, cells: np.ndarray | None, k: int) -> None:
    """Mark head ``k``'s drawn cell at every step (``cells`` (T, heads)); none for soft heads."""
    if cells is None:
        set_data(source, {"x": [], "y": []})
        return
    set_data(source, {"x": list(range(len(cells))), "y": [int(j) for j in cells[:, k]]})


def _label_time_axis(fig: Any, labels: list[str]) -> None:
    """Put the input of every step under its column (cell k is centred on x = k)."""
    if fig.xaxis[0].major_label_overrides != {k: str(t) for k, t in enumerate(labels)}:
        label_axis(fig.xaxis[0], labels)


class MemoryLesson(LessonView):
    """Builds the Memory lesson around a :class:`MemoryLessonState`."""

    state_class = MemoryLessonState

    def build(self) -> None:
        self.read_fig, self.read_source = heatmap_figure(
            "p", "Read weights, head 1", "input at step", "memory cell j"
        )
        self.write_fig, self.write_source = heatmap_figure(
            "p", "Write weights, head 1", "input at step", "memory cell j"
        )
        self.read_marks, self.write_marks = _marks(self.read_fig), _marks(self.write_fig)
        self.equations = pn.pane.Markdown("", sizing_mode="stretch_width", max_width=720)
        self.memory_fig, self.memory_source = heatmap_figure(
            "M", "Memory before the first step", "memory cell j", "component"
        )
        self.read_stages_fig, self.read_stages_source = heatmap_figure(
            "p", "Read head 1, stages", STAGE_AXIS, "memory cell j"
        )
        self.write_stages_fig, self.write_stages_source = heatmap_figure(
            "p", "Write head 1, stages", STAGE_AXIS, "memory cell j"
        )
        for fig in (self.read_fig, self.write_fig, self.memory_fig):
            fig.width = MAP_WIDTH  # three side by side beside the controls at 1280 px
        for fig in (self.read_stages_fig, self.write_stages_fig):
            fig.width, fig.height = 340, 240
            label_axis(fig.xaxis[0], STAGES)
        self.example = pn.widgets.IntSlider(name="Example", start=0, end=7, value=0, width=200)
        self.head = pn.widgets.IntSlider(name="Head", start=1, end=2, value=1, width=200)
        self.at_step = pn.widgets.IntSlider(
            name="Memory after step", start=0, end=1, value=0, width=250
        )
        for widget in (self.example, self.head, self.at_step):
            widget.param.watch(lambda e: self.refresh(), "value")
        self.answer = Text("", css_classes=["pyplay-memory-answer"])
        self.read_pane = pn.pane.Bokeh(self.read_fig)
        self.write_pane = pn.pane.Bokeh(self.write_fig)
        self.memory_pane = pn.pane.Bokeh(self.memory_fig)
        self.stages_help = pn.pane.Markdown(LOCATION_HELP, width=680)
        self.stages = pn.Column(
            "### Location addressing at the step above, stage by stage",
            pn.Row(pn.pane.Bokeh(self.read_stages_fig), pn.pane.Bokeh(self.write_stages_fig)),
            self.stages_help,
            visible=False,
        )
        self.no_memory = pn.pane.Markdown(
            "The LSTM has no memory to look into: all it keeps is its state (h, c)."
        )
        self.watch_version()

    def refresh(self, *_: Any) -> None:
        view = self.state.view(int(self.example.value or 0))
        if view is None:
            return
        T = len(view.labels)
        verdict = "right" if view.answer == view.target else "wrong"
        self.answer.object = (
            "input : " + "  ".join(view.labels) + "\n"
            f"answer: {view.answer}   target: {view.target}   ({verdict})"
        )
        heads = view.read.shape[1]
        self.head.end = max(heads, 2)  # a slider needs start < end; heads count from 1
        self.head.disabled = heads == 1
        h = min(int(self.head.value or 1), heads) - 1
        drawn = DRAWN if view.read_cells is not None else ""
        set_title(self.read_fig, f"Read weights, head {h + 1}{drawn}")
        _show_marks(self.read_marks, view.read_cells, h)
        if view.memory is None and view.write is None and view.read.shape[-1] == T:
            self.read_fig.yaxis.axis_label = "earlier step attended"
        else:
            self.read_fig.yaxis.axis_label = "memory cell j"
        update_heatmap(self.read_fig, self.read_source, view.read[:, h, :], "p")
        _label_time_axis(self.read_fig, view.labels)
        self.write_pane.visible = view.write is not None
        if view.write is not None:
            hw = min(h, view.write.shape[1] - 1)
            drawn = DRAWN if view.write_cells is not None else ""
            set_title(self.write_fig, f"Write weights, head {hw + 1}{drawn}")
            _show_marks(self.write_marks, view.write_cells, hw)
            update_heatmap(self.write_fig, self.write_source, view.write[:, hw, :], "p")
            _label_time_axis(self.write_fig, view.labels)
        has_memory = view.memory is not None
        self.at_step.visible = self.memory_pane.visible = has_memory
        if view.memory is not None:
            self.at_step.end = T
            t = min(int(self.at_step.value or 0), T)
            update_heatmap(self.memory_fig, self.memory_source, np.asarray(view.memory[t]), "M")
            set_title(
                self.memory_fig,
                "Memory before the first step"
                if t == 0
                else f"Memory after step {t} ({view.labels[t - 1]})",
            )
        self._show_stages(view, h)
        s = self.state
        self.read_pane.visible = s.model != "lstm"
        self.no_memory.visible = s.model == "lstm"
        self.equations.object = lecture_equations(
            s.model, s.hard, s.feedback, s.update, s.attend_form
        )
        self.equations.visible = s.model != "lstm"

    def _show_stages(self, view: Any, h: int) -> None:
        """Location addressing's stages (content, gated, shifted, sharpened) of head ``h``
        at the step the memory slider shows (the first step before any)."""
        self.stages.visible = view.read_stages is not None
        if view.read_stages is None or view.write_stages is None:
            return
        t = max(min(int(self.at_step.value or 0), len(view.labels)), 1) - 1
        at = f"step {t + 1} ({view.labels[t]})"
        hw = min(h, view.write_stages.shape[1] - 1)
        for fig, source, stages, name, k in (
            (self.read_stages_fig, self.read_stages_source, view.read_stages, "Read", h),
            (self.write_stages_fig, self.write_stages_source, view.write_stages, "Write", hw),
        ):
            set_title(fig, f"{name} head {k + 1}, {at}")
            update_heatmap(fig, source, stages[t, k], "p")  # (4, N)

    def controls(self) -> list[Any]:
        s = self.state
        return [
            pn.widgets.RadioButtonGroup.from_param(s.param.model, name="Model", options=MODELS),
            pn.widgets.RadioButtonGroup.from_param(
                s.param.task, name="Task", options={v.capitalize(): v for v in s.param.task.objects}
            ),
            pn.widgets.RadioButtonGroup.from_param(
                s.param.addressing,
                name="Addressing",
                options={v.capitalize(): v for v in s.param.addressing.objects},
            ),
            pn.widgets.RadioButtonGroup.from_param(
                s.param.key_function,
                name="Key function K",
                options={"K(M_j) = M_j": "identity", "K(M_j) = W_k M_j": "linear"},
            ),
            pn.widgets.RadioButtonGroup.from_param(
                s.param["update"],
                name="Write rule",
                options={"Overwrite": "overwrite", "Residual": "residual"},
            ),
            pn.widgets.RadioButtonGroup.from_param(s.param.hard, name="Heads", options=HARD),
            pn.widgets.RadioButtonGroup.from_param(
                s.param.feedback, name="Controller sᵗ =", options=FEEDBACK
            ),
            pn.widgets.RadioButtonGroup.from_param(
                s.param.attend_form, name="Attending RNN", options=FORMS
            ),
            *int_sliders(s, **SIZES),
        ]

    def inside(self) -> list[Any]:
        """The workbench's view: the heads' reads and writes and the memory, live."""
        return [
            pn.Row(self.example, self.head, self.at_step),
            self.answer,
            pn.GridBox(
                self.read_pane,
                self.write_pane,
                self.memory_pane,
                ncols=3,
                sizing_mode="stretch_width",
                css_classes=["pyplay-bench-maps"],
            ),
        ]

    def sections(self) -> list[Any]:
        return [
            "## Inside, step by step",
            self.equations,
            self.no_memory,
            self.stages,
        ]
