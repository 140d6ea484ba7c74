"""What the CTC lesson shows of the loss itself, for the example on screen (no Panel here):
the forward-backward lattice over the extended labelling, and every frame-level path of a
short label the learner types over the first frames, with the probabilities that the
dynamic programme adds up without listing them; and the example of Wand's lecture, the paths
that collapse to "H EH L OU" (hello) over six frames, under a fixed distribution of the
page's own (the slide lists paths, no probabilities)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pyplay.decode.ctc_lattice import Lattice, ctc_lattice, ctc_paths, path_log_prob
from pyplay.ui.lessons.ctc.state import CTCView

__all__ = [
    "HELLO_CLASSES",
    "HELLO_PROBS",
    "MAX_LABEL",
    "MAX_PATH_FRAMES",
    "PathList",
    "lattice_of",
    "lecture_paths",
    "lecture_text",
    "path_list",
]

MAX_LABEL = 4  # symbols of a typed label
MAX_PATH_FRAMES = 8  # frames of the listed paths
SHOWN_PATHS = 30  # paths printed, likeliest first

HELLO_CLASSES = ("-", "H", "EH", "L", "OU")  # Wand's blank, then his phones
HELLO_LABEL = ("H", "EH", "L", "OU")
# y^t_k, one row per frame t = 1..6 over HELLO_CLASSES: the page's own illustrative numbers
HELLO_PROBS = np.array(
    [
        [0.40, 0.40, 0.10, 0.05, 0.05],
        [0.20, 0.40, 0.30, 0.05, 0.05],
        [0.20, 0.10, 0.40, 0.20, 0.10],
        [0.20, 0.05, 0.15, 0.50, 0.10],
        [0.20, 0.05, 0.05, 0.30, 0.40],
        [0.40, 0.05, 0.05, 0.10, 0.40],
    ]
)  # (T, C) = (6, 5)


def lattice_of(view: CTCView) -> Lattice:
    """The lattice of the example's target under the model's probabilities (T, C)."""
    target = [view.classes.index(c) for c in view.target]
    with np.errstate(divide="ignore"):
        return ctc_lattice(np.log(view.probs), target)


def per_frame(log_values: np.ndarray) -> np.ndarray:
    """exp(v) divided by its sum over the positions of each frame (T, L); 0 on a frame no
    path reaches."""
    top = np.max(log_values, axis=1, keepdims=True)  # (T, 1)
    safe = np.where(np.isfinite(top), top, 0.0)
    e = np.exp(log_values - safe)  # (T, L)
    total = e.sum(axis=1, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


@dataclass(frozen=True)
class PathList:
    """Every path of ``label`` over the first ``T`` frames: ``paths`` (path, probability),
    likeliest first; ``total`` their sum; ``forward`` p(label | those frames) from the
    forward algorithm."""

    label: str
    T: int
    paths: list[tuple[str, float]]
    total: float
    forward: float

    def text(self, shown: int = SHOWN_PATHS) -> str:
        """The list as the page prints it, the ``shown`` likeliest paths."""
        n = len(self.paths)
        width = max((len(p) for p, _ in self.paths), default=0)
        lines = [f"{n} paths of {self.T} frames collapse to {self.label or '(nothing)'}:"]
        lines += [f"  {p:<{width}}  {q:.3e}" for p, q in self.paths[:shown]]
        if n > shown:
            lines.append(f"  ... {n - shown} more")
        lines.append(f"sum over the {n} paths : {self.total:.6e}")
        lines.append(f"forward algorithm p    : {self.forward:.6e}")
        return "\n".join(lines)


def path_list(view: CTCView, label: str, T: int) -> PathList:
    """Every path of ``label`` (symbols of the lesson, blank excluded; spaces ignored) over
    the first ``T`` frames of the example, under the model's probabilities. ValueError names
    the argument that does not fit."""
    if not isinstance(label, str):
        raise TypeError(f"label must be text, got {type(label).__name__}")
    symbols = label.replace(" ", "").upper()
    allowed = view.classes[1:]
    bad = sorted({c for c in symbols if c not in allowed})
    if bad or len(symbols) > MAX_LABEL:
        raise ValueError(
            f"label must be at most {MAX_LABEL} of the symbols {''.join(allowed)}, got {label!r}"
        )
    n = view.probs.shape[0]
    if not 1 <= T <= min(n, MAX_PATH_FRAMES):
        raise ValueError(f"T must be in 1..{min(n, MAX_PATH_FRAMES)}, got {T}")
    return _listed(view.probs[:T], view.classes, list(symbols), "")


def _listed(probs: np.ndarray, classes: Sequence[str], label: list[str], sep: str) -> PathList:
    """Every path of ``label`` (class names) over all frames of ``probs`` (T, C), likeliest
    first, names joined by ``sep``; their sum and the forward algorithm's p(label)."""
    target = [list(classes).index(c) for c in label]
    T = probs.shape[0]
    with np.errstate(divide="ignore"):
        lp = np.log(probs)  # (T, C)
    found = [(p, float(np.exp(path_log_prob(lp, p)))) for p in ctc_paths(target, T)]
    found.sort(key=lambda pq: -pq[1])
    forward = float(np.exp(ctc_lattice(lp, target).log_p))
    shown = [(sep.join(classes[c] for c in p), q) for p, q in found]
    return PathList(sep.join(label), T, shown, float(sum(q for _, q in found)), forward)


def lecture_paths() -> PathList:
    """The example of Wand's lecture: every path of six frames over (-, H, EH, L, OU) that
    collapses to H EH L OU, under :data:`HELLO_PROBS`."""
    return _listed(HELLO_PROBS, HELLO_CLASSES, list(HELLO_LABEL), " ")


def lecture_text() -> str:
    """Wand's example as the page prints it: the distribution, every path, their sum
    and the forward probability, and the repeated L that needs a blank between."""
    found = lecture_paths()
    head = "      " + "".join(f"{c:>6}" for c in HELLO_CLASSES)
    rows = [
        f"t = {t + 1} " + "".join(f"{q:6.2f}" for q in row) for t, row in enumerate(HELLO_PROBS)
    ]
    twice = [*HELLO_LABEL[:3], "L", HELLO_LABEL[3]]
    only = _listed(HELLO_PROBS, HELLO_CLASSES, twice, " ").paths
    return "\n".join(
        [
            "Frame probabilities y(t, k), the page's own (illustrative: the slide gives none):",
            head,
            *rows,
            "",
            found.text(shown=len(found.paths)),
            "",
            f"{' '.join(twice)} needs a blank between the L's (merged otherwise):",
            f"over {found.T} frames its only path is {' and '.join(p for p, _ in only)}.",
        ]
    )
