"""Greedy decoding over any autoregressive decoder, in the log domain.

At every step each of ``batch_size`` sequences takes its most likely next token (ties: the
lowest id) under the decoder's step function (:class:`~pyplay.decode.step.StepFunction`),

.. math::

    y_t = \\arg\\max_k \\ell_{t,k}, \\qquad \\log p(y) = \\sum_t \\ell_{t, y_t},

until EOS or ``max_length``. Under a constraint (:class:`~pyplay.decode.step.Constraint`) only
allowed tokens count, and at the last step only those after which the hypothesis may end, so
that :class:`~pyplay.decode.beam.BeamSearch` with ``beam_width=1`` gives the same result.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay._checks import check_int
from pyplay.decode.step import (
    Constraint,
    StepFunction,
    check_step_output,
    check_token,
    constraint_masks,
)
from pyplay.limits import MAX_ELEMENTS, MAX_STEPS

__all__ = ["GreedyResult", "greedy_decode"]


@dataclass(frozen=True)
class GreedyResult:
    """One greedily decoded sequence.

    ``tokens`` include the final EOS; ``step_log_probs`` (L,) are :math:`\\ell_{t, y_t}` and
    ``log_prob`` their sum; ``status`` is "eos", "max_length" or "dead_end" (no allowed token
    of non-zero probability: ``log_prob`` is that of the tokens so far).
    """

    tokens: tuple[int, ...]
    log_prob: float
    step_log_probs: np.ndarray
    status: str


def greedy_decode(
    step: StepFunction,
    state: Any,
    bos: int,
    eos: int,
    max_length: int,
    *,
    batch_size: int = 1,
    constraint: Constraint | None = None,
    vocab_size: int | None = None,
    check_normalised: bool = True,
) -> list[GreedyResult]:
    """The most likely next token at every step (ties: the lowest id), for ``batch_size``
    sequences whose states are the rows of ``state``.

    Finished rows keep being fed EOS until every row is done. Under a ``constraint`` only
    allowed tokens are considered, and at the last step only those after which the
    hypothesis may end, so that ``BeamSearch`` with ``beam_width=1`` gives the same result.
    """
    max_length = check_int("max_length", max_length, min_value=1, max_value=MAX_STEPS)
    B = check_int("batch_size", batch_size, min_value=1, max_value=MAX_ELEMENTS)
    V = None if vocab_size is None else check_int("vocab_size", vocab_size, min_value=1)
    bos, eos = check_token("bos", bos, V), check_token("eos", eos, V)
    tokens = np.full(B, bos, dtype=np.int64)  # (B,)
    cstates = [constraint.initial() if constraint is not None else None] * B
    out: list[list[int]] = [[] for _ in range(B)]
    lps: list[list[float]] = [[] for _ in range(B)]
    status: list[str | None] = [None] * B
    for t in range(1, max_length + 1):
        lp, state = check_step_output(step(tokens, state), B, V, check_normalised)  # (B, V)
        if V is None:
            V = lp.shape[1]
            check_token("bos", bos, V)
            check_token("eos", eos, V)
        if constraint is not None:
            lp = np.where(constraint_masks(constraint, cstates, V), lp, -np.inf)  # (B, V)
            if t == max_length:
                for b in range(B):
                    for j in np.flatnonzero(np.isfinite(lp[b])).tolist():
                        if j != eos and not constraint.can_end(constraint.advance(cstates[b], j)):
                            lp[b, j] = -np.inf
        best = lp.argmax(axis=1)  # (B,)
        for b in range(B):
            k = int(best[b])
            if status[b] is not None:
                best[b] = eos
            elif lp[b, k] == -np.inf:
                status[b] = "dead_end"
                best[b] = eos
            else:
                out[b].append(k)
                lps[b].append(float(lp[b, k]))
                if constraint is not None:
                    cstates[b] = constraint.advance(cstates[b], k)
                if k == eos or t == max_length:
                    status[b] = "eos" if k == eos else "max_length"
        if all(s is not None for s in status):
            break
        tokens = best
    return [
        GreedyResult(tuple(out[b]), float(sum(lps[b])), np.array(lps[b]), str(status[b]))
        for b in range(B)
    ]
