"""Greedy and beam search over any autoregressive decoder, in the log domain.

A decoder plugs in through a *step function* (:class:`StepFunction`): given the last token of
each of N hypotheses and their state, it returns log-probabilities of the next token,

.. math::

    \\ell_{n,k} = \\log p(y_t = k \\mid y_{<t}^{(n)}, x), \\qquad n < N,\\ k < V,

and the new state. A hypothesis :math:`y_{1..L}` (BOS not counted; EOS counted when it ends
with EOS) has the log-probability :math:`\\log p(y) = \\sum_t \\ell_{t, y_t}` and the score

.. math::

    s(y) = \\frac{\\log p(y)}{\\mathrm{lp}(L)}, \\qquad
    \\mathrm{lp}(L) = \\left(\\frac{5 + L}{6}\\right)^{\\alpha}

(GNMT's length penalty, Wu et al. 2016; ``length_penalty`` is :math:`\\alpha \\ge 0`, and
:math:`\\alpha = 0` gives the plain log-probability).

Beam search (:class:`BeamSearch`) advances one token at a time. Every live hypothesis is
extended by every token; the :math:`N V` candidates are ranked by the stable key
:math:`(-s, \\text{parent}, \\text{token})` and walked best first:

* a candidate ending in EOS *finishes* (it does not take a beam slot);
* at step ``max_length`` a candidate without EOS finishes truncated (it takes a slot);
* otherwise it becomes live, until ``beam_width`` slots are taken ("outside_beam" after);
* a candidate is pruned as "cannot_beat_finished" once ``n_best`` hypotheses have finished and
  even its best reachable final score is below the worst of them. For a live hypothesis of
  length :math:`t` that bound is :math:`\\log p / \\mathrm{lp}(\\text{max\\_length})` (further
  tokens only lower :math:`\\log p \\le 0`, and with :math:`\\alpha \\ge 0` the penalty grows
  with the length), so the pruning never loses an n-best result.

The search stops when no live hypothesis is left or after ``max_length`` steps: then no
hypothesis that was dropped by the last rule could have entered the n-best, and a beam at least
as wide as the number of sequences returns exactly the best ones. Every step is recorded
(:class:`BeamStep`) with the fate of each candidate, for a UI that steps back and draws the tree.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from pyplay._checks import check_float, check_int

__all__ = [
    "FATES",
    "BeamSearch",
    "BeamStep",
    "Candidates",
    "Constraint",
    "GreedyResult",
    "Hypothesis",
    "Reorder",
    "StepFunction",
    "greedy_decode",
    "length_penalty",
    "reorder_rows",
]

FATES = (
    "live",  # kept in the beam
    "eos",  # finished with EOS
    "max_length",  # finished, truncated at max_length
    "outside_beam",  # ranked after the beam_width slots were taken
    "cannot_beat_finished",  # best reachable score below the worst of n_best finished ones
    "disallowed",  # masked by the constraint
    "zero_probability",  # the step function gave log-probability -inf
    "incomplete",  # truncated where the constraint says a hypothesis cannot end
)
_LIVE, _EOS, _MAXLEN, _OUTSIDE, _CANNOT, _DISALLOWED, _ZERO, _INCOMPLETE = range(len(FATES))
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
        return state[index]
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


def length_penalty(length: int, alpha: float) -> float:
    """GNMT's :math:`\\mathrm{lp}(L) = ((5 + L) / 6)^\\alpha`."""
    return ((5.0 + length) / 6.0) ** alpha


def _check_token(name: str, value: Any, vocab_size: int | None) -> int:
    top = None if vocab_size is None else vocab_size - 1
    return check_int(name, value, min_value=0, max_value=top)


def _check_step_output(out: Any, n: int, vocab_size: int | None, normalised: bool) -> Any:
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


def _masks(constraint: Constraint, states: list[Any], V: int) -> np.ndarray:
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


# ------------------------------------------------------------------------------ greedy
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
    max_length = check_int("max_length", max_length, min_value=1)
    B = check_int("batch_size", batch_size, min_value=1)
    V = None if vocab_size is None else check_int("vocab_size", vocab_size, min_value=1)
    bos, eos = _check_token("bos", bos, V), _check_token("eos", eos, V)
    tokens = np.full(B, bos, dtype=np.int64)  # (B,)
    cstates = [constraint.initial() if constraint is not None else None] * B
    out: list[list[int]] = [[] for _ in range(B)]
    lps: list[list[float]] = [[] for _ in range(B)]
    status: list[str | None] = [None] * B
    for t in range(1, max_length + 1):
        lp, state = _check_step_output(step(tokens, state), B, V, check_normalised)  # (B, V)
        if V is None:
            V = lp.shape[1]
            _check_token("bos", bos, V)
            _check_token("eos", eos, V)
        if constraint is not None:
            lp = np.where(_masks(constraint, cstates, V), lp, -np.inf)  # (B, V)
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


# ------------------------------------------------------------------------------ beam search
@dataclass(frozen=True)
class Hypothesis:
    """A (partial or finished) hypothesis, as a candidate of one step.

    ``tokens`` exclude BOS and include the final EOS; ``log_prob`` is :math:`\\log p(y)`,
    ``score`` :math:`\\log p(y) / \\mathrm{lp}(L)`; ``parent`` indexes the previous step's live
    hypotheses (-1 for the empty root), ``token`` is the token just added (BOS for the root)
    with log-probability ``step_log_prob``; ``rank`` is its place among the step's candidates;
    ``status`` one of :data:`FATES`; ``bound`` the best final score it can still reach and
    ``threshold`` the worst n-best finished score when it was judged (-inf before).
    """

    tokens: tuple[int, ...]
    log_prob: float
    score: float
    parent: int
    token: int
    step_log_prob: float
    rank: int
    status: str
    bound: float
    threshold: float

    @property
    def length(self) -> int:
        return len(self.tokens)


@dataclass(frozen=True, eq=False)
class Candidates:
    """All N V candidates (parent, token) of one step, as arrays (K,) in rank order."""

    parent: np.ndarray
    token: np.ndarray
    log_prob: np.ndarray
    step_log_prob: np.ndarray
    score: np.ndarray
    bound: np.ndarray
    threshold: np.ndarray
    fate: np.ndarray  # int8 indices into FATES

    def __len__(self) -> int:
        return len(self.fate)

    def count(self, status: str) -> int:
        return int(np.count_nonzero(self.fate == FATES.index(status)))


@dataclass(frozen=True, eq=False)
class BeamStep:
    """The record of one :meth:`BeamSearch.advance`: the hypotheses it extended (``parents``),
    every candidate with its fate, the new ``live`` beam and the hypotheses that ``finished``
    (both in rank order); ``done`` tells whether the search stopped after this step. Records
    compare by identity (they hold arrays)."""

    step: int
    parents: tuple[Hypothesis, ...]
    candidates: Candidates
    live: tuple[Hypothesis, ...]
    finished: tuple[Hypothesis, ...]
    done: bool

    def hypothesis(self, rank: int) -> Hypothesis:
        """The candidate of rank ``rank`` as a :class:`Hypothesis`."""
        c = self.candidates
        p, k = int(c.parent[rank]), int(c.token[rank])
        return Hypothesis(
            (*self.parents[p].tokens, k),
            float(c.log_prob[rank]),
            float(c.score[rank]),
            p,
            k,
            float(c.step_log_prob[rank]),
            int(rank),
            FATES[int(c.fate[rank])],
            float(c.bound[rank]),
            float(c.threshold[rank]),
        )

    @property
    def pruned(self) -> tuple[Hypothesis, ...]:
        """Every candidate that was dropped, in rank order (status = the reason)."""
        return tuple(self.hypothesis(int(r)) for r in np.flatnonzero(self.candidates.fate > 2))


def _order_key(h: Hypothesis) -> tuple[float, tuple[int, ...]]:
    return (-h.score, h.tokens)


class BeamSearch:
    """Beam search that advances one step per :meth:`advance` call (see the module docstring).

    Parameters
    ----------
    step : StepFunction
    state : Any
        The decoder state of one source (one row).
    bos, eos : int
        Start and end tokens, in ``0..V-1``.
    beam_width : int >= 1
        Live hypotheses kept per step.
    max_length : int >= 1
        Most tokens generated (EOS included).
    length_penalty : float >= 0
        GNMT's :math:`\\alpha`.
    n_best : int in ``1..beam_width``, optional
        Finished hypotheses returned by :meth:`results` (default ``beam_width``).
    reorder : Reorder, optional
        Selects state rows (default :func:`reorder_rows`, axis 0 of every array).
    constraint : Constraint, optional
        Masks the tokens each hypothesis may take next.
    vocab_size : int, optional
        V, to check ``bos``/``eos`` at once (else after the first step).
    check_normalised : bool
        Refuse log-prob rows whose logsumexp is not 0.
    """

    def __init__(
        self,
        step: StepFunction,
        state: Any,
        bos: int,
        eos: int,
        beam_width: int = 5,
        max_length: int = 20,
        length_penalty: float = 0.0,
        n_best: int | None = None,
        reorder: Reorder | None = None,
        constraint: Constraint | None = None,
        vocab_size: int | None = None,
        check_normalised: bool = True,
    ) -> None:
        if not callable(step):
            raise TypeError(f"step must be callable, got {type(step).__name__}")
        self.beam_width = check_int("beam_width", beam_width, min_value=1)
        self.max_length = check_int("max_length", max_length, min_value=1)
        self.length_penalty = check_float("length_penalty", length_penalty, min_value=0.0)
        self.n_best = self.beam_width if n_best is None else n_best
        check_int("n_best", self.n_best, min_value=1, max_value=self.beam_width)
        V = None if vocab_size is None else check_int("vocab_size", vocab_size, min_value=1)
        self.vocab_size = V
        self.bos, self.eos = _check_token("bos", bos, V), _check_token("eos", eos, V)
        self.constraint = constraint
        self.check_normalised = bool(check_normalised)
        self._step, self._reorder = step, reorder if reorder is not None else reorder_rows
        root = Hypothesis((), 0.0, 0.0, -1, self.bos, 0.0, 0, "live", 0.0, -math.inf)
        self._live: tuple[Hypothesis, ...] = (root,)
        self._state = state
        self._cstates = [constraint.initial() if constraint is not None else None]
        self._finished: list[Hypothesis] = []  # best first, by (-score, tokens)
        self._t = 0
        self._history: list[BeamStep] = []
        self._undo: list[tuple[Any, ...]] = []

    @property
    def done(self) -> bool:
        """Whether the search has stopped (no live hypothesis, or ``max_length`` steps)."""
        return not self._live or self._t == self.max_length

    @property
    def step(self) -> int:
        """Steps taken (= length of the live hypotheses)."""
        return self._t

    @property
    def live(self) -> tuple[Hypothesis, ...]:
        return self._live

    @property
    def history(self) -> list[BeamStep]:
        """The records of all steps taken, oldest first."""
        return list(self._history)

    def results(self) -> list[Hypothesis]:
        """The ``n_best`` finished hypotheses so far, best first (score, then tokens)."""
        return self._finished[: self.n_best]

    def run(self) -> list[Hypothesis]:
        """Advance until done; returns :meth:`results`."""
        while not self.done:
            self.advance()
        return self.results()

    def back(self) -> BeamStep:
        """Undo the last step (the search is exactly as before it); returns its record."""
        if not self._undo:
            raise RuntimeError("back() needs a step to undo: no step has been taken")
        self._live, self._state, self._cstates, self._finished, self._t = self._undo.pop()
        return self._history.pop()

    def _threshold(self, finished_scores: list[float]) -> float:
        if len(finished_scores) < self.n_best:
            return -math.inf
        return sorted(finished_scores, reverse=True)[self.n_best - 1]

    def advance(self) -> BeamStep:
        """Extend every live hypothesis by one token; returns the step's record."""
        if self.done:
            raise RuntimeError("the search is done (see .done); back() undoes a step")
        t, N, eos, cons = self._t + 1, len(self._live), self.eos, self.constraint
        tokens = np.array([h.token for h in self._live], dtype=np.int64)  # (N,)
        out = self._step(tokens, self._state)
        lp, new_state = _check_step_output(out, N, self.vocab_size, self.check_normalised)
        V = lp.shape[1]  # lp: (N, V)
        if self.vocab_size is None:
            self.vocab_size = V
            _check_token("bos", self.bos, V)
            _check_token("eos", eos, V)
        allowed = None if cons is None else _masks(cons, self._cstates, V)  # (N, V)
        step_lp = lp if allowed is None else np.where(allowed, lp, -np.inf)  # (N, V)
        total = np.array([h.log_prob for h in self._live])[:, None] + step_lp  # (N, V)

        K = N * V
        flat = total.ravel()  # (K,), flat index = parent * V + token
        parent, token = np.repeat(np.arange(N), V), np.tile(np.arange(V), N)  # (K,)
        score = flat / length_penalty(t, self.length_penalty)
        if t == self.max_length:
            bound = score.copy()
        else:
            longest = length_penalty(self.max_length, self.length_penalty)
            bound = np.where(token == eos, score, flat / longest)
        finite = np.isfinite(flat)
        ranked = np.flatnonzero(finite)
        ranked = ranked[np.lexsort((token[ranked], parent[ranked], -score[ranked]))]
        fate = np.full(K, _OUTSIDE, dtype=np.int8)
        masked = np.zeros(K, dtype=bool) if allowed is None else ~allowed.ravel()
        fate[~finite] = np.where(masked[~finite], _DISALLOWED, _ZERO)
        threshold = np.full(K, np.nan)

        finished_scores = [h.score for h in self._finished]
        thr = self._threshold(finished_scores)
        live_idx: list[int] = []
        live_c: list[Any] = []
        filled = 0
        for pos, f in enumerate(ranked.tolist()):
            if filled == self.beam_width:
                break
            threshold[f] = thr
            if bound[f] < thr:
                fate[f] = _CANNOT
                if token[f] != eos:  # every later candidate scores lower: none can beat it
                    rest = ranked[pos + 1 :]
                    fate[rest], threshold[rest] = _CANNOT, thr
                    break
                continue
            if token[f] == eos:
                fate[f] = _EOS
            elif t < self.max_length:
                fate[f] = _LIVE
                live_idx.append(f)
                live_c.append(
                    None if cons is None else cons.advance(self._cstates[parent[f]], int(token[f]))
                )
                filled += 1
                continue
            elif cons is not None and not cons.can_end(
                cons.advance(self._cstates[parent[f]], int(token[f]))
            ):
                fate[f] = _INCOMPLETE
                continue
            else:
                fate[f] = _MAXLEN
                filled += 1
            finished_scores.append(float(score[f]))
            thr = self._threshold(finished_scores)
        threshold[np.isnan(threshold)] = thr

        order = np.concatenate([ranked, np.flatnonzero(~finite)])  # rank -> flat index
        cands = Candidates(
            parent[order], token[order], flat[order], step_lp.ravel()[order], score[order],
            bound[order], threshold[order], fate[order],
        )  # fmt: skip
        draft = BeamStep(t, self._live, cands, (), (), False)
        live = tuple(draft.hypothesis(int(r)) for r in np.flatnonzero(cands.fate == _LIVE))
        ended = np.flatnonzero((cands.fate == _EOS) | (cands.fate == _MAXLEN))
        finished = tuple(draft.hypothesis(int(r)) for r in ended)

        self._undo.append((self._live, self._state, self._cstates, self._finished, self._t))
        if live:
            self._state = self._reorder(new_state, parent[np.array(live_idx)])
        self._live, self._cstates, self._t = live, live_c, t
        self._finished = sorted([*self._finished, *finished], key=_order_key)
        record = BeamStep(t, draft.parents, cands, live, finished, self.done)
        self._history.append(record)
        return record
