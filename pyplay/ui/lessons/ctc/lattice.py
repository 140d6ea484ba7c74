"""What the CTC lesson shows of the loss itself, for the example on screen (no Panel here):
the forward-backward lattice over the extended labelling, and every frame-level path of a
short label the learner types over the first frames, with the probabilities that the
dynamic programme adds up without listing them."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pyplay.decode.ctc_lattice import Lattice, ctc_lattice, ctc_paths, path_log_prob
from pyplay.ui.lessons.ctc.state import CTCView

__all__ = ["MAX_LABEL", "MAX_PATH_FRAMES", "PathList", "lattice_of", "path_list"]

MAX_LABEL = 4  # symbols of a typed label
MAX_PATH_FRAMES = 8  # frames of the listed paths
SHOWN_PATHS = 30  # paths printed, likeliest first


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

    def text(self) -> str:
        """The list as the page prints it."""
        n = len(self.paths)
        lines = [f"{n} paths of {self.T} frames collapse to {self.label or '(nothing)'}:"]
        lines += [f"  {p}  {q:.3e}" for p, q in self.paths[:SHOWN_PATHS]]
        if n > SHOWN_PATHS:
            lines.append(f"  ... {n - SHOWN_PATHS} more")
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
    target = [view.classes.index(c) for c in symbols]
    with np.errstate(divide="ignore"):
        lp = np.log(view.probs[:T])  # (T, C)
    found = [(p, float(np.exp(path_log_prob(lp, p)))) for p in ctc_paths(target, T)]
    found.sort(key=lambda pq: -pq[1])
    forward = float(np.exp(ctc_lattice(lp, target).log_p))
    shown = [("".join(view.classes[c] for c in p), q) for p, q in found]
    return PathList(symbols, T, shown, float(sum(q for _, q in found)), forward)
