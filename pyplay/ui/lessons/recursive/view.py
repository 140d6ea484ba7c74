"""The "Recursive networks" lesson: one composition shared by every node of a tree learns to
evaluate arithmetic expressions (or the sentiment of parsed phrases) while a chain LSTM reads
the same examples left to right; type an expression and see its tree, every node's class,
vector and the gradient reaching it.

Rendering only: actions call :class:`~pyplay.ui.lessons.recursive.state.RecursiveLessonState`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import panel as pn

from pyplay.ui.curve_points import stream_curve
from pyplay.ui.lesson_view import LessonView
from pyplay.ui.lessons.recursive.state import EXAMPLES, RecursiveLessonState, TreeView
from pyplay.ui.lessons.recursive.tree_plot import tree_figure, update_tree
from pyplay.ui.plots import heatmap_figure, label_axis, update_heatmap
from pyplay.ui.text import Text
from pyplay.ui.training import int_sliders

__all__ = ["RecursiveLesson"]

TASKS = {"Expressions": "expressions", "Sentiment": "sentiment"}


class RecursiveLesson(LessonView):
    """Builds the Recursive networks lesson around a :class:`RecursiveLessonState`."""

    state_class = RecursiveLessonState
    curve = ("step", "loss", "chain")

    def build(self) -> None:
        self.loss_source.data = {"step": [], "loss": [], "chain": []}
        self.loss_plot.style_curve("recursive net")
        self.loss_plot.add_curve("chain", "chain LSTM", "#27ae60")
        self.tree_fig, self.tree_nodes, self.tree_edges = tree_figure()
        self.vec_fig, self.vec_source = heatmap_figure("h", "Node vectors h", "node", "unit")
        self.grad_fig, self.grad_source = heatmap_figure(
            "dh", "Gradient dL/dh reaching each node", "node", "unit"
        )
        for fig in (self.vec_fig, self.grad_fig):
            fig.width = 420
        self.source_box = pn.widgets.TextInput(
            name="Your expression", value=EXAMPLES["expressions"], width=260
        )
        self.source_box.param.watch(lambda e: self.refresh(), "value")
        self.answer = Text("", css_classes=["pyplay-recursive-answer"])
        self.watch_version()

    # ------------------------------------------------------------------ training
    def _stream(self, records: list[Any]) -> None:
        if records:
            chain = self.state.history["chain"][-len(records) :]
            stream_curve(
                self.loss_source,
                {
                    "step": [r.step for r in records],
                    "loss": [r.loss for r in records],
                    "chain": chain,
                },
            )

    def _example(self, *_: Any) -> None:
        text = EXAMPLES[self.state.task]
        self.source_box.param.update(value=text, value_input=text)

    def _on_version(self, *_: Any) -> None:
        """A new model: the box is named for the task; a new task shows its example (an
        expression is no phrase), a new model of the same task keeps what was typed."""
        task = self.state.task
        self.source_box.name = "Your expression" if task == "expressions" else "Your phrase"
        if task != getattr(self, "_example_task", None) or not self.source_text():
            self._example_task = task
            self._example()
        super()._on_version()

    def refresh(self, *_: Any) -> None:
        view = self.state.explain(self.source_text())
        if view is None:
            return
        update_tree(self.tree_fig, self.tree_nodes, self.tree_edges, view)
        labels = [f"{k}:{t}" for k, t in enumerate(view.text)]
        for fig, source, values, name in (
            (self.vec_fig, self.vec_source, view.vectors, "h"),
            (self.grad_fig, self.grad_source, view.grads, "dh"),
        ):
            update_heatmap(fig, source, np.asarray(values), name)
            label_axis(fig.xaxis, labels)
        self.answer.object = self._answer(view)

    def _answer(self, view: TreeView) -> str:
        truth, mine = int(view.target[-1]), int(view.predicted[-1])
        lines = [
            f"read as     : {view.bracketed}",
            f"true class  : {truth}",
            f"recursive   : {mine} ({'right' if mine == truth else 'wrong'}, "
            f"probability {view.probability[-1]:.2f})",
        ]
        if view.chain is not None:
            ok = "right" if view.chain == truth else "wrong"
            lines.append(f"chain LSTM  : {view.chain} ({ok})")
        return "\n".join(lines)

    # ------------------------------------------------------------------ layout
    def controls(self) -> list[Any]:
        s = self.state
        return [
            pn.widgets.RadioButtonGroup.from_param(s.param.task, name="Task", options=TASKS),
            *int_sliders(s, max_depth="Deepest expression", hidden_size="Vector size H"),
            pn.widgets.Checkbox.from_param(
                s.param.compare_chain, name="Train a chain LSTM beside it"
            ),
        ]

    def sections(self) -> list[Any]:
        return [
            "## Each node's vector and gradient",
            pn.Row(pn.pane.Bokeh(self.vec_fig), pn.pane.Bokeh(self.grad_fig)),
        ]

    def inside(self) -> list[Any]:
        """The workbench's view: an expression's tree as the model reads it, live."""
        example = pn.widgets.Button(name="Example", width=90)
        example.on_click(self._example)
        return [
            pn.Row(self.source_box, example),
            self.answer,
            pn.pane.Bokeh(self.tree_fig, sizing_mode="stretch_width"),
        ]
