"""Reading a labelling out of per-frame CTC scores: best path and prefix beam search.

*Best path* (greedy) decoding takes the most likely class at every frame and collapses the path
with :math:`\\mathcal{B}` (merge repeats, drop blanks). It finds the most likely *path*, which is
not always the most likely *labelling*: a labelling collects the probability of all its paths,

.. math::

    p(\\mathbf{l} \\mid \\mathbf{x}) = \\sum_{\\pi \\in \\mathcal{B}^{-1}(\\mathbf{l})}
        \\prod_t y^t_{\\pi_t}.

*Prefix beam search* (Graves 2012; Hannun et al. 2014) keeps the ``beam_width`` best prefixes,
each with two log-scores: :math:`p_b(\\ell)` for paths ending in a blank and :math:`p_{nb}(\\ell)`
for paths ending in the last label of :math:`\\ell`. For frame :math:`t` and class :math:`k`:

.. math::

    p_b^{t}(\\ell) &\\mathrel{+}= y^t_{-}\\,(p_b^{t-1}(\\ell) + p_{nb}^{t-1}(\\ell)) \\\\
    p_{nb}^{t}(\\ell k) &\\mathrel{+}= y^t_k\\,(p_b^{t-1}(\\ell) + p_{nb}^{t-1}(\\ell))
        \\quad (k \\ne \\ell_{\\mathrm{last}}) \\\\
    p_{nb}^{t}(\\ell k) &\\mathrel{+}= y^t_k\\,p_b^{t-1}(\\ell), \\quad
    p_{nb}^{t}(\\ell) \\mathrel{+}= y^t_k\\,p_{nb}^{t-1}(\\ell)
        \\quad (k = \\ell_{\\mathrm{last}}),

all in the log domain (products become sums, sums ``logaddexp``). A repeated label only extends
the prefix after a blank; otherwise it merges into the last label. Without pruning (a beam at
least as wide as the number of prefixes) the scores are the exact labelling probabilities.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from pyplay._checks import check_array, check_int, check_lengths
from pyplay.decode.lexicon import WordSequences
from pyplay.limits import MAX_BEAM_WIDTH

__all__ = ["ctc_best_path", "ctc_collapse", "ctc_greedy_decode", "ctc_prefix_beam_search"]

NEG_INF = -math.inf


def _check_scores(
    log_probs: Any, input_lengths: Any, blank: Any
) -> tuple[np.ndarray, np.ndarray, int]:
    lp = check_array("log_probs", log_probs, ndim=3, finite=False, layout="(B, T, C)")
    if np.isnan(lp).any() or (lp == np.inf).any():
        raise ValueError("log_probs must not hold NaN or +inf")
    B, T, C = lp.shape
    blank = check_int("blank", blank, min_value=0, max_value=C - 1)
    if input_lengths is None:
        lengths = np.full(B, T, dtype=np.int64)
    else:
        lengths = check_lengths(input_lengths, B, T, name="input_lengths", min_value=0)
    return lp, lengths, blank


def ctc_collapse(path: Any, blank: int = 0) -> list[int]:
    """The collapse :math:`\\mathcal{B}`: merge runs of the same class, then drop blanks.

    ``ctc_collapse([1, 1, 0, 1, 2, 2, 0]) == [1, 1, 2]``.
    """
    if isinstance(path, list | tuple) and not path:
        return []
    ids = check_array("path", path, ndim=1, kind="i", layout="(T,)")
    blank = check_int("blank", blank)
    if ids.size == 0:
        return []
    first = np.ones(ids.shape, dtype=bool)  # (T,)
    first[1:] = ids[1:] != ids[:-1]
    return [int(k) for k in ids[first & (ids != blank)]]


def ctc_best_path(
    log_probs: Any, input_lengths: Any = None, blank: int = 0
) -> tuple[list[list[int]], list[list[int]]]:
    """The most likely class of every valid frame, and its collapse.

    Parameters
    ----------
    log_probs : (B, T, C) array
        Per-frame log-probabilities (logits work too: the argmax is the same).
    input_lengths : (B,) ints in ``0..T``, optional
        Valid frames per sequence (default: all ``T``).
    blank : int

    Returns
    -------
    paths : list of B lists
        ``argmax_k log_probs[b, t, k]`` for ``t < input_lengths[b]`` (what a lesson shows under
        the frames).
    labels : list of B lists
        ``ctc_collapse(paths[b], blank)``.
    """
    lp, lengths, blank_id = _check_scores(log_probs, input_lengths, blank)
    best = lp.argmax(axis=-1)  # (B, T)
    paths = [[int(k) for k in best[b, : lengths[b]]] for b in range(lp.shape[0])]
    return paths, [ctc_collapse(p, blank_id) for p in paths]


def ctc_greedy_decode(log_probs: Any, input_lengths: Any = None, blank: int = 0) -> list[list[int]]:
    """Best-path decoding: argmax per frame, merge repeats, drop blanks (see
    :func:`ctc_best_path`, which also returns the frame-level path)."""
    return ctc_best_path(log_probs, input_lengths, blank)[1]


def _logaddexp(a: float, b: float) -> float:
    if a == NEG_INF:
        return b
    if b == NEG_INF:
        return a
    if a < b:
        a, b = b, a
    return a + math.log1p(math.exp(b - a))


def _beam_one(
    rows: list[list[float]], beam_width: int, blank: int, lexicon: Any = None
) -> list[tuple[list[int], float]]:
    """Prefix beam search over one sequence's frames (``rows[t][k]`` = log y^t_k).

    ``lexicon`` (optional) constrains the labellings: ``lexicon.initial()`` is the state of the
    empty prefix, ``lexicon.advance(state, k)`` the state after label ``k`` (``None`` when no
    lexicon labelling continues that way: the extension is dropped) and ``lexicon.is_final``
    whether a state may end the labelling (only such labellings are returned).
    """
    beams: dict[tuple[int, ...], tuple[float, float]] = {(): (0.0, NEG_INF)}  # prefix: (pb, pnb)
    states: dict[tuple[int, ...], Any] = {(): None if lexicon is None else lexicon.initial()}
    for row in rows:
        nxt: dict[tuple[int, ...], tuple[float, float]] = {}
        for prefix, (pb, pnb) in beams.items():
            total = _logaddexp(pb, pnb)
            b, n = nxt.get(prefix, (NEG_INF, NEG_INF))
            nxt[prefix] = (_logaddexp(b, total + row[blank]), n)  # a blank keeps the prefix
            last = prefix[-1] if prefix else -1
            for k, lpk in enumerate(row):
                if k == blank or lpk == NEG_INF:
                    continue
                if k == last:
                    b, n = nxt[prefix]
                    nxt[prefix] = (b, _logaddexp(n, pnb + lpk))  # merges into the last label
                    grow = pb + lpk  # a repeat needs the blank in between
                else:
                    grow = total + lpk
                longer = (*prefix, k)
                if longer not in states:
                    state = None if lexicon is None else lexicon.advance(states[prefix], k)
                    if lexicon is not None and state is None:
                        continue  # no lexicon labelling starts with ``longer``
                    states[longer] = state
                b, n = nxt.get(longer, (NEG_INF, NEG_INF))
                nxt[longer] = (b, _logaddexp(n, grow))
        ranked = sorted(nxt.items(), key=lambda item: -_logaddexp(*item[1]))
        beams = dict(ranked[:beam_width])
    scored = [
        (list(p), _logaddexp(pb, pnb))
        for p, (pb, pnb) in beams.items()
        if lexicon is None or lexicon.is_final(states[p])
    ]
    return sorted((s for s in scored if s[1] > NEG_INF), key=lambda item: -item[1])


def ctc_prefix_beam_search(
    log_probs: Any,
    input_lengths: Any = None,
    beam_width: int = 8,
    blank: int = 0,
    *,
    lexicon: Any = None,
) -> Any:
    """The ``beam_width`` most probable labellings found by prefix beam search.

    Parameters
    ----------
    log_probs : (T, C) or (B, T, C) array
        Per-frame log-probabilities (normalised: the scores add probabilities of paths).
    input_lengths : int (for (T, C)) or (B,) ints (for (B, T, C)), optional
        Valid frames (default: all ``T``).
    beam_width : int >= 1
    blank : int
    lexicon : WordSequences, optional
        Only labellings made of its words (:class:`~pyplay.decode.lexicon.WordSequences`, the
        recipe in :mod:`pyplay.decode.ctc_lexicon`; or let
        :func:`~pyplay.decode.ctc_lexicon.ctc_lexicon_beam_search` build one).

    Returns
    -------
    For one sequence, a list of ``(labels, log_score)`` pairs sorted best first (at most
    ``beam_width``; labellings of probability 0 are left out); for a batch, a list of B such
    lists. ``log_score`` is :math:`\\log p(\\mathbf{l} \\mid \\mathbf{x})` summed over the
    paths the beam kept (exact when nothing was pruned).
    """
    beam_width = check_int("beam_width", beam_width, min_value=1, max_value=MAX_BEAM_WIDTH)
    if lexicon is not None and not isinstance(lexicon, WordSequences):
        raise TypeError(f"lexicon must be a WordSequences, got {type(lexicon).__name__}")
    single = np.ndim(log_probs) == 2
    if single:
        lp2 = check_array("log_probs", log_probs, ndim=2, finite=False, layout="(T, C)")
        if input_lengths is not None:
            input_lengths = [check_int("input_lengths", input_lengths)]
        lp, lengths, blank_id = _check_scores(lp2[None], input_lengths, blank)
    else:
        lp, lengths, blank_id = _check_scores(log_probs, input_lengths, blank)
    lp64 = lp.astype(np.float64, copy=False)
    out = [
        _beam_one(lp64[b, : lengths[b]].tolist(), beam_width, blank_id, lexicon)
        for b in range(lp.shape[0])
    ]
    return out[0] if single else out
