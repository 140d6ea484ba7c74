"""Accuracy by source length: how well a trained sequence-to-sequence model decodes sources of
each length, in and beyond the lengths it was trained on.

For every length :math:`L` of a range, ``n`` fresh pairs whose sources have exactly :math:`L`
tokens are drawn from a copy of the task (its own seed: the task's training stream is not
advanced) and decoded greedily. Two rates per length, over the ``n`` pairs :math:`(x, y)` with
greedy outputs :math:`\\hat y` (up to EOS):

.. math::

    \\mathrm{EM}(L) = \\frac{1}{n} \\sum_{i} [\\hat y_i = y_i], \\qquad
    \\mathrm{acc}(L) = \\frac{1}{n} \\sum_{i} \\frac{1}{|y_i|}
        \\sum_{t=1}^{|y_i|} [\\hat y_{i,t} = y_{i,t}],

exact match (the whole output right, length included) and per-token accuracy (the target's
tokens written at their place; a missing token counts as wrong, extra tokens after the
target's end cost nothing in it, only in exact match).

This is the experiment behind the classic figure of Bahdanau, Cho and Bengio (2015, fig. 2):
an encoder-decoder without attention squeezes the whole source into one fixed-size vector and
loses long sources; with attention the decoder keeps every encoder state at hand.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay._checks import as_generator, check_int
from pyplay.tasks.pairs import PairBatch, output_scores, reverse_sources

__all__ = ["LengthCurve", "accuracy_by_length", "check_lengths_range"]

MAX_EVAL_PAIRS = 100_000  # lengths x n: what one evaluation may decode
CHUNK_ROWS = 1024  # rows decoded in one batch (all of a length in the same batch)


@dataclass(frozen=True)
class LengthCurve:
    """Exact match and per-token accuracy (K,) at each source length of ``lengths`` (K,),
    each over ``n`` pairs."""

    lengths: np.ndarray  # (K,) int64
    exact_match: np.ndarray  # (K,) float64
    token_accuracy: np.ndarray  # (K,) float64
    n: int

    def at(self, length: int) -> tuple[float, float]:
        """``(exact match, token accuracy)`` at source length ``length``."""
        hits = np.flatnonzero(self.lengths == length)
        if hits.size == 0:
            raise ValueError(
                f"length {length!r} was not evaluated (lengths {self.lengths.tolist()})"
            )
        k = int(hits[0])
        return float(self.exact_match[k]), float(self.token_accuracy[k])


def check_lengths_range(lengths: Iterable[int]) -> np.ndarray:
    """``lengths`` as a sorted array of distinct positive integers (K,), else ValueError."""
    if isinstance(lengths, str | bytes) or not isinstance(lengths, Iterable):
        raise TypeError(
            f"lengths must be a range or a sequence of integers, got {type(lengths).__name__}"
        )
    values = [check_int("lengths", v, min_value=1) for v in lengths]
    if not values:
        raise ValueError("lengths must hold at least one length, got none")
    if len(set(values)) != len(values):
        raise ValueError(f"lengths must be distinct, got {values}")
    return np.array(sorted(values), dtype=np.int64)  # (K,)


def accuracy_by_length(
    model: Any,
    task: Any,
    lengths: Iterable[int],
    n: int = 100,
    *,
    reverse_source: bool = False,
    rng: np.random.Generator | int | None = 1234,
) -> LengthCurve:
    """Greedy exact match and per-token accuracy of ``model`` on ``task`` at each source length.

    Parameters
    ----------
    model : a sequence-to-sequence model with ``greedy(src, src_lengths, max_length)``
        (:class:`~pyplay.models.seq2seq.EncoderDecoder` in any wiring,
        :class:`~pyplay.models.transformer.seq2seq.TransformerSeq2Seq`).
    task : a pair task that draws sources of a chosen length (``pairs_of_length``: reversal,
        copy, sorting); it is copied with ``rng`` as its seed, so its own stream is untouched.
    lengths : range or sequence of int
        The source lengths, e.g. ``range(3, 21)``; any of them may lie outside the task's own
        range (that is the point).
    n : int
        Pairs per length.
    reverse_source : bool
        Feed the sources backwards, as to a model trained with Sutskever's trick.
    rng : Generator or seed
        Seeds the task's copy.

    Returns
    -------
    LengthCurve
        ``lengths`` (K,), ``exact_match`` (K,), ``token_accuracy`` (K,).
    """
    if not callable(getattr(model, "greedy", None)):
        raise TypeError(
            f"model must decode greedily (a greedy(src, src_lengths, max_length) method), "
            f"got {type(model).__name__}"
        )
    if not callable(getattr(task, "pairs_of_length", None)) or not hasattr(task, "config"):
        raise TypeError(f"task must be a pyplay pair task, got {type(task).__name__}")
    L = check_lengths_range(lengths)  # (K,)
    n = check_int("n", n, min_value=1, max_value=MAX_EVAL_PAIRS)
    if L.size * n > MAX_EVAL_PAIRS:
        raise ValueError(
            f"lengths x n must be at most {MAX_EVAL_PAIRS:,} pairs, got {L.size} x {n}"
        )
    if not isinstance(reverse_source, bool):
        raise TypeError(f"reverse_source must be True or False, got {reverse_source!r}")
    fresh = type(task)(**{**task.config, "rng": as_generator(rng)})
    pairs = [pair for m in L.tolist() for pair in fresh.pairs_of_length(n, m)]
    exact = np.zeros(L.size)  # (K,)
    token = np.zeros(L.size)  # (K,)
    per_chunk = max(n, CHUNK_ROWS // n * n)  # whole lengths per chunk
    for first in range(0, len(pairs), per_chunk):
        batch = PairBatch.of(pairs[first : first + per_chunk])  # (N, S), N = lengths x n
        src = reverse_sources(batch.src, batch.src_lengths) if reverse_source else batch.src
        # one step past the longest target: a row still writing then is wrong either way
        predicted = model.greedy(src, batch.src_lengths, max_length=batch.tgt_out.shape[1])
        for j in range(0, len(predicted), n):
            k = (first + j) // n
            rows = PairBatch.of(pairs[first + j : first + j + n])
            exact[k], token[k] = output_scores(predicted[j : j + n], rows)
    return LengthCurve(L, exact, token, n)
