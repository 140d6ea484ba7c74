"""What a decoder gives a search: the step function, the state reorder and constraints.

A decoder plugs into :func:`~pyplay.decode.greedy.greedy_decode` and
:class:`~pyplay.decode.beam.BeamSearch` through a *step function* (:class:`StepFunction`): given
the last token of each of N hypotheses and their state, it returns log-probabilities of the next
token,

.. math::

    \\ell_{n,k} = \\log p(y_t = k \\mid y_{<t}^{(n)}, x), \\qquad n < N,\\ k < V,

and the new state. :class:`Reorder` keeps chosen rows of a state (default
:func:`reorder_rows`; a model's dataclass state inherits its ``reorder`` from
:class:`RowsState`); a :class:`Constraint` (e.g. :mod:`pyplay.decode.lexicon`) restricts the
tokens that may extend a hypothesis. :func:`check_step_output` turns every way a step function
can answer wrongly into a ``ValueError`` or ``TypeError`` that says so.
"""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any, ClassVar, Protocol, Self

import numpy as np

from pyplay._checks import check_int, check_rows

__all__ = [
    "NORMALISED_TOL",
    "Constraint",
    "Reorder",
    "RowsState",
    "StepFunction",
    "check_step_output",
    "check_token",
    "constraint_masks",
    "reorder_rows",
]

NORMALISED_TOL = 1e-4  # |logsumexp(row)| allowed by the normalisation check (float32 models)


class StepFunction(Protocol):
    """``step(tokens, state) -> (log_probs, new_state)`` for a batch of N hypotheses.

    ``tokens`` (N,) int64 are the last tokens (BOS at the start); ``log_probs`` (N, V) are
    normalised log-probabilities of the next token (log-softmax, not logits). ``state`` is
    whatever the decoder needs (recurrent state, encoder outputs); it is never mutated.
    """

    def __call__(self, tokens: np.ndarray, state: Any, /) -> tuple[np.ndarray, Any]: ...


class Reorder(Protocol):
    """``reorder(state, index) -> state`` keeps the hypotheses ``index`` (N',) of a state, in
    that order (rows may repeat). Default: :func:`reorder_rows`."""

    def __call__(self, state: Any, index: np.ndarray, /) -> Any: ...


class Constraint(Protocol):
    """Restricts which tokens may extend a hypothesis (e.g. a lexicon, see
    :mod:`pyplay.decode.lexicon`). Each hypothesis carries a constraint state."""

    def initial(self) -> Any:
        """The constraint state of the empty hypothesis."""
        ...

    def mask(self, state: Any) -> np.ndarray:
        """(V,) bool: the tokens allowed next."""
        ...

    def advance(self, state: Any, token: int) -> Any:
        """The state after appending an allowed ``token``."""
        ...

    def can_end(self, state: Any) -> bool:
        """Whether a hypothesis may stop here without EOS (truncated at ``max_length``)."""
        ...


def reorder_rows(state: Any, index: np.ndarray) -> Any:
    """Index every array of a nested tuple/list/dict state along axis 0 (``None`` stays)."""
    if state is None:
        return None
    if isinstance(state, np.ndarray) and state.ndim > 0:
        return state[check_rows("index", index, state.shape[0])]
    if isinstance(state, tuple):
        items = [reorder_rows(s, index) for s in state]
        return type(state)(*items) if hasattr(state, "_fields") else tuple(items)
    if isinstance(state, list):
        return [reorder_rows(s, index) for s in state]
    if isinstance(state, dict):
        return {key: reorder_rows(value, index) for key, value in state.items()}
    raise TypeError(
        "reorder_rows selects rows (axis 0) of arrays in nested tuples, lists and dicts; the "
        f"state holds {type(state).__name__} {state!r:.40}: pass reorder= (the model's own)"
    )


class RowsState:
    """Mixin of a frozen dataclass decoding state whose every field has the batch on axis 0:
    an array, ``None``, or a state with its own ``reorder`` (a stack's key/value caches)."""

    __dataclass_fields__: ClassVar[dict[str, Any]]  # set by @dataclass on the subclass

    def reorder(self, index: Any) -> Self:
        """Keep the batch rows ``index`` (beam search): each array's rows, each nested state's
        own ``reorder``; ``None`` stays."""
        rows = {f.name: _rows(getattr(self, f.name), index) for f in fields(self)}
        return replace(self, **rows)


def _rows(value: Any, index: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, np.ndarray):
        return value[index]  # (N', ...)
    return value.reorder(index)


def check_token(name: str, value: Any, vocab_size: int | None) -> int:
    """``value`` as a token id below ``vocab_size`` (when known), or a clear error."""
    top = None if vocab_size is None else vocab_size - 1
    return check_int(name, value, min_value=0, max_value=top)


def check_step_output(out: Any, n: int, vocab_size: int | None, normalised: bool) -> Any:
    """Validate ``step``'s return value; returns (log_probs as float64 (N, V), state)."""
    if not isinstance(out, tuple) or len(out) != 2:
        raise TypeError(f"step must return a pair (log_probs, state), got {type(out).__name__}")
    lp, state = out
    if not isinstance(lp, np.ndarray) or lp.dtype.kind != "f":
        what = f"dtype {lp.dtype}" if isinstance(lp, np.ndarray) else type(lp).__name__
        raise TypeError(f"step must return log_probs as a float array (N, V), got {what}")
    V = vocab_size if vocab_size is not None else (lp.shape[1] if lp.ndim == 2 else None)
    if lp.ndim != 2 or lp.shape[0] != n or lp.shape[1] != V or lp.shape[1] == 0:
        raise ValueError(
            f"step returned log_probs of shape {lp.shape}, expected (N, V) = "
            f"({n}, {'V' if V is None else V}) for N={n} hypotheses"
        )
    lp = lp.astype(np.float64, copy=False)
    for bad, what in ((np.isnan(lp), "NaN"), (lp == np.inf, "+inf")):
        if bad.any():
            rows = np.flatnonzero(bad.any(axis=1)).tolist()
            raise ValueError(f"step returned log_probs with {what} in row(s) {rows[:10]}")
    if normalised:
        m = lp.max(axis=1)  # (N,)
        if not np.isfinite(m).all():
            rows = np.flatnonzero(~np.isfinite(m)).tolist()
            raise ValueError(f"step returned log_probs rows {rows[:10]} with no finite entry")
        lse = m + np.log(np.exp(lp - m[:, None]).sum(axis=1))  # (N,)
        if (np.abs(lse) > NORMALISED_TOL).any():
            i = int(np.argmax(np.abs(lse)))
            raise ValueError(
                f"step returned log_probs that are not normalised: logsumexp of row {i} is "
                f"{lse[i]:.6g}, expected 0 (within {NORMALISED_TOL}); apply log_softmax"
            )
    return lp, state


def constraint_masks(constraint: Constraint, states: list[Any], V: int) -> np.ndarray:
    """(N, V) bool: the tokens ``constraint`` allows after each of ``states``."""
    rows = []
    for s in states:
        m = np.asarray(constraint.mask(s))
        if m.shape != (V,) or m.dtype != bool:
            raise ValueError(
                f"constraint.mask must return a bool array of shape (V,) = ({V},), "
                f"got shape {m.shape} and dtype {m.dtype}"
            )
        rows.append(m)
    return np.stack(rows)  # (N, V)
