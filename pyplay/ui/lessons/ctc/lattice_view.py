"""The CTC lesson's look at the loss itself: the forward-backward lattice of the example on
screen (alpha, beta and their product, the occupation gamma) and every path of a short
label over the first frames. Rendering only: the numbers come from
:mod:`pyplay.ui.lessons.ctc.lattice`."""

from __future__ import annotations

from typing import Any

import panel as pn

from pyplay.ui.lectures import lecture, lecture_label
from pyplay.ui.lessons.ctc.lattice import (
    MAX_LABEL,
    MAX_PATH_FRAMES,
    lattice_of,
    lecture_text,
    path_list,
    per_frame,
)
from pyplay.ui.lessons.ctc.state import CTCView
from pyplay.ui.plots import heatmap_figure, label_axis, set_title, update_heatmap
from pyplay.ui.text import Text

__all__ = ["LatticeViews"]

LECTURE_BUTTON = f"{lecture_label('wand')}'s example: H EH L OU"  # the toggle; named in the help
LATTICE_HELP = (
    "The lattice of the example above, over the **extended label** l′ = (_, l₁, _, l₂, …, _): "
    "from one frame to the next a path stays on its row or climbs one (two, over a blank "
    "between different symbols), starting in the bottom two rows and ending in the top two. "
    "**α**ₜ(s) adds up the paths that reach row s at frame t, **β**ₜ(s) those that go on from "
    "there to the end; their product over p(l|x) is **γ**ₜ(s), the share of all paths passing "
    "through (s, t): each frame's column of γ sums to 1, and γ is what the loss's gradient "
    "pushes up. α and β are drawn divided by their sum over each frame's column (their raw "
    "values shrink by orders of magnitude along the frames)."
)
PATHS_HELP = (
    "Every frame-level path of a short label over the first T frames, with the product of "
    "the model's probabilities along it: CTC's p(l|x) is their sum. The forward algorithm "
    "gets the same number without listing a single path, which is what makes the loss "
    f"affordable: the number of paths grows combinatorially with T. **{LECTURE_BUTTON}** "
    f"lists the paths of six frames in {lecture('wand')} that collapse to the label H EH L OU "
    "(hello) over the classes -, H, EH, L, OU (blank first), each with its probability under "
    "a fixed distribution printed above them: the page's own numbers, for illustration (the "
    "slide gives none). Click it again, type a label or move T to return to your label's list."
)


class LatticeViews:
    """The lattice heatmaps and the path list, redrawn by :meth:`update` with the lesson's
    current example."""

    def __init__(self) -> None:
        self.figs: dict[str, Any] = {}
        self.sources: dict[str, Any] = {}
        for key, title in (
            ("gamma", "γₜ(s) = αₜ(s) βₜ(s) / p(l|x)"),
            ("alpha", "αₜ(s), per frame"),
            ("beta", "βₜ(s), per frame"),
        ):
            fig, source = heatmap_figure("p", title, "frame t", "row s of l′")
            self.figs[key], self.sources[key] = fig, source
        self.figs["gamma"].width = 520
        self._rows: list[str] = []
        self.label = pn.widgets.TextInput(
            name=f"Label (up to {MAX_LABEL} symbols)", value="", width=180
        )
        self.frames = pn.widgets.IntSlider(
            name="Frames T", start=1, end=MAX_PATH_FRAMES, value=5, width=180
        )
        self.note = Text("", css_classes=["pyplay-ctc-path-note"])
        self.paths = Text("", css_classes=["pyplay-ctc-path-list"])
        self.lecture = pn.widgets.Toggle(name=LECTURE_BUTTON, value=False, width=260)
        self.lecture_paths = Text("", css_classes=["pyplay-ctc-lecture-paths"], visible=False)
        self.lecture.param.watch(lambda e: self._show_lecture(), "value")
        self.label.param.watch(lambda e: self._back_to_label(), "value")
        self.frames.param.watch(lambda e: self._back_to_label(), "value")
        self._view: CTCView | None = None

    def update(self, view: CTCView) -> None:
        """Redraw the lattice and the path list for ``view`` (the model as it is now)."""
        self._view = view
        lat = lattice_of(view)
        rows = [view.classes[int(c)] for c in lat.extended]
        update_heatmap(self.figs["gamma"], self.sources["gamma"], lat.gamma, "p")
        update_heatmap(self.figs["alpha"], self.sources["alpha"], per_frame(lat.log_alpha), "p")
        update_heatmap(self.figs["beta"], self.sources["beta"], per_frame(lat.log_beta), "p")
        if rows != self._rows:
            self._rows = rows
            for fig in self.figs.values():
                label_axis(fig.yaxis[0], rows)
        set_title(
            self.figs["gamma"],
            f"γₜ(s) = αₜ(s) βₜ(s) / p(l|x) for {view.target}; log p(l|x) = {lat.log_p:.3f}",
        )
        self.update_paths()

    def update_paths(self) -> None:
        """The paths of the typed label (the example's first two symbols when empty); a label
        or T that does not fit is explained next to the inputs and the list is kept."""
        view = self._view
        if view is None:
            return
        label = str(self.label.value or "") or view.target[:2]
        try:
            found = path_list(view, label, int(self.frames.value or 1))
        except (ValueError, TypeError) as err:
            self.note.object = f"Not listed: {err}"
            return
        self.note.object = ""
        self.paths.object = found.text()

    def _show_lecture(self) -> None:
        """Wand's example in place of the typed label's list while the toggle is on
        (that list is kept, and still follows the model, hidden; the example's numbers are
        fixed: computed once)."""
        on = bool(self.lecture.value)
        if on and not self.lecture_paths.object:
            self.lecture_paths.object = lecture_text()
        self.lecture_paths.visible = on
        self.paths.visible = not on

    def _back_to_label(self) -> None:
        """A typed label or a new T hides Wand's example and lists its own paths."""
        self.lecture.value = False
        self.update_paths()

    def sections(self) -> list[Any]:
        return [
            "## The lattice: every alignment at once",
            pn.pane.Markdown(LATTICE_HELP),
            pn.pane.Bokeh(self.figs["gamma"]),
            pn.GridBox(
                pn.pane.Bokeh(self.figs["alpha"]),
                pn.pane.Bokeh(self.figs["beta"]),
                ncols=2,
                sizing_mode="stretch_width",
            ),
            "## Every path of a short label",
            pn.pane.Markdown(PATHS_HELP),
            pn.Row(self.label, self.frames),
            self.lecture,
            self.note,
            self.paths,
            self.lecture_paths,
        ]
