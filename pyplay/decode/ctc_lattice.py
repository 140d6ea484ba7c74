"""The CTC lattice of one example, and every path of a short labelling, for looking inside
the loss (Wand's IDSIA lecture's "consider all paths which correspond to the given label").

:func:`ctc_lattice` returns the forward and backward variables of :mod:`pyplay.decode.ctc`
for one sequence, on the extended labelling :math:`\\mathbf{l}' = (-, l_1, -, \\dots, l_S, -)`:
:math:`\\alpha_t(s)` (the frames up to :math:`t`, emission at :math:`t` included),
:math:`\\beta_t(s)` (the frames after :math:`t`), and the posterior occupation

.. math::

    \\gamma_t(s) = \\frac{\\alpha_t(s)\\,\\beta_t(s)}{p(\\mathbf{l} \\mid \\mathbf{x})},
    \\qquad \\sum_s \\gamma_t(s) = 1 \\text{ on every frame}.

:func:`ctc_paths` lists, by brute force, every frame-level path :math:`\\pi` of ``T`` frames
whose collapse :math:`\\mathcal{B}(\\pi)` (merge repeats, drop blanks) is the labelling; the
sum of their probabilities :math:`\\prod_t y^t_{\\pi_t}` is the same
:math:`p(\\mathbf{l} \\mid \\mathbf{x})` that the dynamic programme computes without listing
them (:func:`path_log_prob` gives one path's term).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay._checks import check_array, check_int
from pyplay.decode.ctc import _check_inputs, _extend, _forward_backward

__all__ = ["MAX_PATHS", "Lattice", "ctc_lattice", "ctc_paths", "path_log_prob"]

MAX_PATHS = 5000  # paths listed at most (their number grows combinatorially with T)


@dataclass(frozen=True)
class Lattice:
    """One sequence's lattice: ``extended`` (L,) the classes of :math:`\\mathbf{l}'`
    (L = 2S + 1); ``log_alpha``, ``log_beta`` (T, L) natural logs (-inf where no path
    passes); ``gamma`` (T, L) the posterior occupation; ``log_p`` the log-probability of the
    labelling (-inf when no path of T frames produces it)."""

    extended: np.ndarray
    log_alpha: np.ndarray
    log_beta: np.ndarray
    gamma: np.ndarray
    log_p: float


def ctc_lattice(log_probs: Any, target: Any, blank: int = 0) -> Lattice:
    """The forward-backward lattice of one sequence.

    Parameters
    ----------
    log_probs : (T, C) float array
        Per-frame log-probabilities (a log-softmax output).
    target : (S,) int array
        The labelling: class ids other than ``blank``.
    blank : int
        The blank class.
    """
    lp = check_array("log_probs", log_probs, ndim=2, layout="(T, C)")
    y = check_array("target", target, ndim=1, kind="i", layout="(S,) class ids")
    T, S = lp.shape[0], y.shape[0]
    lp3, y2, in_len, tgt_len, blank = _check_inputs(
        lp[None], y[None], np.array([T]), np.array([S]), blank
    )  # (1, T, C), (1, S)
    ext, _, skip = _extend(y2, tgt_len, blank)  # (1, L) each
    lp64 = lp3.astype(np.float64, copy=False)
    with np.errstate(under="ignore"):
        lp_ext = np.take_along_axis(lp64, np.broadcast_to(ext[:, None, :], (1, T, 2 * S + 1)), 2)
        alpha, beta, log_p = _forward_backward(lp_ext, in_len, tgt_len, skip)  # (1, T, L) x2
        finite = bool(np.isfinite(log_p[0]))
        gamma = np.exp(alpha[0] + beta[0] - log_p[0]) if finite else np.zeros_like(alpha[0])
    return Lattice(ext[0], alpha[0].copy(), beta[0].copy(), gamma, float(log_p[0]))


def ctc_paths(target: Any, T: int, blank: int = 0) -> list[tuple[int, ...]]:
    """Every path of ``T`` frames whose collapse is ``target``, in lexicographic order of
    their positions in :math:`\\mathbf{l}'`: each frame stays on its position, moves to the
    next, or skips a blank between two different labels; a path starts on the first blank
    or the first label and ends on the last label or the last blank.

    Raises ``ValueError`` when there would be more than :data:`MAX_PATHS` of them.
    """
    y = check_array("target", target, ndim=1, kind="i", layout="(S,) class ids")
    T = check_int("T", T, min_value=1, max_value=64)
    blank = check_int("blank", blank, min_value=0)
    if (y == blank).any():
        raise ValueError(f"target must not hold the blank ({blank}), got {y.tolist()}")
    S = y.shape[0]
    ext = np.full(2 * S + 1, blank, dtype=np.int64)  # (L,)
    ext[1::2] = y
    L = ext.shape[0]
    ends = {L - 1, L - 2} if S else {L - 1}
    # count[t][s]: the paths of frames t..T-1 from position s (to refuse a huge list first)
    count = np.zeros((T + 1, L + 2), dtype=object)
    for s in ends:
        count[T - 1, s] = 1
    for t in range(T - 2, -1, -1):
        for s in range(L):
            n = count[t + 1, s] + count[t + 1, s + 1]
            if s + 2 < L and ext[s + 2] != blank and ext[s + 2] != ext[s]:
                n += count[t + 1, s + 2]
            count[t, s] = n
    total = int(sum(count[0, s] for s in range(min(2, L))))
    if total > MAX_PATHS:
        raise ValueError(
            f"T must leave at most {MAX_PATHS} paths for target {y.tolist()}, got T={T} "
            f"({total} paths): fewer frames or a shorter target"
        )
    paths: list[tuple[int, ...]] = []

    def walk(t: int, s: int, so_far: list[int]) -> None:
        so_far.append(int(ext[s]))
        if t == T - 1:
            if s in ends:
                paths.append(tuple(so_far))
        else:
            for nxt in (s, s + 1, s + 2):
                if nxt >= L or (nxt == s + 2 and (ext[nxt] == blank or ext[nxt] == ext[s])):
                    continue
                if count[t + 1, nxt]:
                    walk(t + 1, nxt, so_far)
        so_far.pop()

    for start in range(min(2, L)):
        if count[0, start]:
            walk(0, start, [])
    return paths


def path_log_prob(log_probs: Any, path: Any) -> float:
    """:math:`\\log \\prod_t y^t_{\\pi_t}` of one frame-level path (``log_probs`` (T, C))."""
    lp = check_array("log_probs", log_probs, ndim=2, layout="(T, C)")
    pi = check_array("path", path, ndim=1, kind="i", layout="(T,) class ids")
    if pi.shape[0] != lp.shape[0] or (pi.size and (pi.min() < 0 or pi.max() >= lp.shape[1])):
        raise ValueError(
            f"path must hold one class id in 0..{lp.shape[1] - 1} per frame (T={lp.shape[0]}), "
            f"got {pi.tolist()}"
        )
    return float(lp[np.arange(pi.shape[0]), pi].astype(np.float64).sum())
