"""The "Image attention" lesson: captions written while attending over a grid of image
features (soft beside hard, on the same batches, each word's attention map live), and a
recurrent attention model taking glimpses of a cluttered canvas (its path live), the same
model with random glimpses beside it.

Rendering only: actions call :class:`~pyplay.ui.lessons.images.state.ImagesLessonState`.
"""

from __future__ import annotations

from typing import Any, ClassVar

import panel as pn
from bokeh.core.properties import value
from bokeh.models import LegendItem

from pyplay.ui.curve_points import stream_curve, thinned
from pyplay.ui.lectures import lecture
from pyplay.ui.lesson_view import LessonView
from pyplay.ui.lessons.images.figures import (
    MAIN,
    OTHER,
    accuracy_figure,
    caption_figure,
    glimpse_figure,
    name_accuracy_curves,
    show_captions,
    show_paths,
)
from pyplay.ui.lessons.images.state import (
    CANVAS,
    EXAMPLES,
    IMAGE_SIZE,
    ImagesLessonState,
    beside_name,
)
from pyplay.ui.training import int_sliders

__all__ = ["ImagesLesson"]

TASK_NAMES = {"Captions": "scenes", "Glimpses": "cluttered"}
ATTENTION_NAMES = {"Soft": "soft", "Hard": "hard", "None": "none"}
SLIDERS = ("shapes", "glimpses", "scales", "clutter", "hidden_size")
CAPTION_SETTINGS = ("attention", "shapes")  # shown for captions only
GLIMPSE_SETTINGS = ("glimpses", "scales", "clutter")  # shown for glimpses only
COMPARE_LABELS = {  # the compare box's label for each task: what trains beside
    "scenes": "Train a second captioner beside it (the other attention)",
    "cluttered": "Train the same model with random glimpses beside it",
}

CAPTION_EQUATIONS = (
    f'**Captions** ({lecture("wand")}, "Image Captioning with Visual Attention"; '
    f"{lecture('solberg')}, content-based attention over conv features). A small conv net "
    "turns the 24 x 24 scene into a 6 x 6 grid of annotation vectors `aᵢ`. Before word t the "
    "LSTM's state `hₜ₋₁` scores every cell, `eₜᵢ = wᵀ tanh(W_a aᵢ + U_a hₜ₋₁ + b)`, and "
    "`αₜ = softmax(eₜ)` is the map drawn over the scene for that word. **Soft** attention "
    "reads `ẑₜ = Σᵢ αₜᵢ aᵢ` and learns by backpropagation; **hard** attention reads one cell "
    "`aₛ`, `s ~ αₜ`, and, since no gradient passes through the draw, learns where to look by "
    "REINFORCE: `∇ E[L] = E[∇L + (L − b) Σₜ ∇ log αₜ,ₛₜ]` with `b` a running mean of the "
    "loss; **none** reads the mean of the cells, so it cannot say where a shape is. The "
    "drawn map of the hard model is its `αₜ`; it writes the caption looking at the most "
    "likely cell."
)
GLIMPSE_EQUATIONS = (
    f"**Glimpses** ({lecture('solberg')}, location-based attention with recurrent glimpses; "
    "Mnih et al. 2014). Glimpse t crops the canvas around `lₜ₋₁` (a 6 x 6 patch and, with "
    "more resolutions, 12 x 12 and 24 x 24 ones averaged down to 6 x 6), a small network "
    "turns crop and location into `gₜ`, an RNN updates `hₜ = tanh(W gₜ + U hₜ₋₁ + b)`, and "
    "until the last glimpse a location network proposes `μₜ = tanh(W_μ hₜ)` and the next "
    "centre is drawn, `lₜ ~ N(μₜ, σ²)`; after the last one the class is read from `h_τ`. "
    "The class learns by backpropagation; the locations by a policy gradient with the "
    "reward `R = 1` for a right answer and a learned baseline `bₜ`: `(R − bₜ) ∇ log π(lₜ)`. "
    "The path drawn is the policy's means `μₜ` (no draws), the first glimpse at the centre. "
    "Beside it (the second box), the page's baseline (not in the slides): the same model with "
    "random glimpses, `lₜ ~ U[−1, 1]²` for every t ≥ 1, trained on the same batches."
)


class ImagesLesson(LessonView):
    """Builds the "Image attention" lesson around an :class:`ImagesLessonState`."""

    state_class = ImagesLessonState
    curve = ("step", "loss", "beside")
    key_controls: ClassVar[int] = 8  # the task and its own settings; the others hidden

    def build(self) -> None:
        self.loss_source.data = {"step": [], "loss": [], "beside": []}
        self.loss_plot.style_curve("model", MAIN)
        self.loss_plot.add_curve("beside", "captioner beside", OTHER)
        self.caption_fig, *texts = caption_figure(IMAGE_SIZE)
        self.caption_sources = (texts[0], texts[1])
        self.glimpse_fig, self.glimpse_sources = glimpse_figure(CANVAS)
        self.accuracy_fig, self.accuracy_source = accuracy_figure()
        self.example = pn.widgets.IntSlider(name="Scene", start=1, end=EXAMPLES, value=1, width=220)
        self.example.param.watch(lambda e: self.refresh(), "value")
        self.caption_pane = pn.Column(self.example, pn.pane.Bokeh(self.caption_fig))
        self.glimpse_pane = pn.Column(pn.pane.Bokeh(self.glimpse_fig))
        self.settings = self._settings()
        self.watch_version()

    def _settings(self) -> dict[str, Any]:
        s = self.state
        radio = pn.widgets.RadioButtonGroup.from_param
        sliders = int_sliders(
            s, shapes="Shapes per scene, at most", glimpses="Glimpses τ",
            scales="Resolutions per glimpse", clutter="Fragments (clutter)",
            hidden_size="Hidden size H",
        )  # fmt: skip
        return {
            "task": radio(s.param.task, name="Model", options=TASK_NAMES),
            "attention": radio(s.param.attention, name="Attention", options=ATTENTION_NAMES),
            "compare": pn.widgets.Checkbox.from_param(s.param.compare, name=COMPARE_LABELS[s.task]),
            **dict(zip(SLIDERS, sliders, strict=True)),
        }

    # ------------------------------------------------------------------ training
    def _stream(self, records: list[Any]) -> None:
        if not records:
            return
        n, h = len(records), self.state.history
        stream_curve(
            self.loss_source,
            {"step": h["step"][-n:], "loss": h["loss"][-n:], "beside": h["beside"][-n:]},
        )
        stream_curve(
            self.accuracy_source,
            {"step": h["step"][-n:], "accuracy": h["accuracy"][-n:],
             "beside": h["beside_accuracy"][-n:], "on_target": h["on_target"][-n:]},
        )  # fmt: skip

    def reset_curve(self) -> None:
        super().reset_curve()
        s, h = self.state, self.state.history
        self.accuracy_source.data = thinned({
            "step": list(h["step"]), "accuracy": list(h["accuracy"]),
            "beside": list(h["beside_accuracy"]), "on_target": list(h["on_target"]),
        })  # fmt: skip
        captions = s.task == "scenes"
        beside, main = beside_name(s.task, s.attention), s.model_name
        self.loss_plot.style_curve(main, MAIN)
        self._name_beside(f"{beside}, same batches", s.beside)
        name_accuracy_curves(self.accuracy_fig, main, None if s.beside is None else beside)
        self.settings["compare"].name = COMPARE_LABELS[s.task]
        for name, widget in self.settings.items():
            if name in CAPTION_SETTINGS:
                widget.visible = captions
            elif name in GLIMPSE_SETTINGS:
                widget.visible = not captions
        self.caption_pane.visible = captions
        self.glimpse_pane.visible = not captions

    def _name_beside(self, label: str, shown: Any) -> None:
        """The legend's entry of the model beside: named after it, hidden without one."""
        for fig in self.loss_plot.figures:
            for item in fig.legend[0].items:
                if not isinstance(item, LegendItem):
                    continue
                if any(getattr(r.glyph, "y", None) == "beside" for r in item.renderers):
                    item.update(label=value(label), visible=shown is not None)

    def refresh(self, *_: Any) -> None:
        s = self.state
        if s.task == "scenes":
            k = int(self.example.value or 1) - 1
            view = s.captions(k)
            if view is not None:
                show_captions(self.caption_fig, self.caption_sources, view, k)
            return
        paths = s.paths()
        if paths is not None:
            show_paths(self.glimpse_sources, paths)

    # ------------------------------------------------------------------ layout
    def controls(self) -> list[Any]:
        return list(self.settings.values())

    def inside(self) -> list[Any]:
        """The workbench's view: each word's attention map, or the glimpse path, live."""
        return [self.caption_pane, self.glimpse_pane]

    def sections(self) -> list[Any]:
        return [
            "### Accuracy",
            pn.pane.Bokeh(self.accuracy_fig, sizing_mode="stretch_width"),
            pn.pane.Markdown(
                "Words right (teacher forcing) for a captioner, the digit for the glimpse "
                "model (chance: 0.1). Dotted, the model beside it (the second box): the "
                "captioner with the other attention, or the same glimpse model with random "
                "glimpses, trained on the same batches.",
                sizing_mode="stretch_width",
            ),
            "## The equations",
            pn.pane.Markdown(CAPTION_EQUATIONS, sizing_mode="stretch_width"),
            pn.pane.Markdown(GLIMPSE_EQUATIONS, sizing_mode="stretch_width"),
        ]
