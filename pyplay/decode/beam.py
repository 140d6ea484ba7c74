"""Beam search over any autoregressive decoder, in the log domain.

A decoder plugs in through a *step function* (:class:`~pyplay.decode.step.StepFunction`): given
the last token of each of N hypotheses and their state, it returns log-probabilities of the
next token,

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
  with the length), so this pruning never loses an n-best result;
* with a :class:`~pyplay.decode.pruning.Pruning`, a candidate scoring more than its threshold
  below the step's best is "below_threshold", and one that would become live at a node that
  already holds ``per_node`` live hypotheses is "per_node" (these may lose the best result, as
  a narrow beam may).

The search stops when no live hypothesis is left or after ``max_length`` steps: then no
hypothesis dropped as "cannot_beat_finished" could have entered the n-best, and a beam at least
as wide as the number of sequences (and no :class:`~pyplay.decode.pruning.Pruning`) returns
exactly the best ones. Every step is recorded (:class:`BeamStep`) with the fate of each
candidate, for a UI that steps back and draws the tree.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay._checks import check_float, check_int
from pyplay.decode.pruning import PRUNING_FATES, Pruning, node_of
from pyplay.decode.step import (
    Constraint,
    Reorder,
    StepFunction,
    check_step_output,
    check_token,
    constraint_masks,
    reorder_rows,
)
from pyplay.limits import MAX_BEAM_WIDTH, MAX_STEPS

__all__ = [
    "FATES",
    "BeamSearch",
    "BeamStep",
    "Candidates",
    "Hypothesis",
    "length_penalty",
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
    *PRUNING_FATES,  # the limits of a Pruning: "per_node", "below_threshold"
)
_LIVE, _EOS, _MAXLEN, _OUTSIDE, _CANNOT, _DISALLOWED, _ZERO, _INCOMPLETE = range(8)
_PER_NODE, _BELOW = FATES.index("per_node"), FATES.index("below_threshold")


def length_penalty(length: int, alpha: float) -> float:
    """GNMT's :math:`\\mathrm{lp}(L) = ((5 + L) / 6)^\\alpha`."""
    return ((5.0 + length) / 6.0) ** alpha


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
    pruning : Pruning, optional
        A count per node and a score threshold besides the width (:mod:`~pyplay.decode.pruning`).
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
        pruning: Pruning | None = None,
    ) -> None:
        if not callable(step):
            raise TypeError(f"step must be callable, got {type(step).__name__}")
        self.beam_width = check_int("beam_width", beam_width, min_value=1, max_value=MAX_BEAM_WIDTH)
        self.max_length = check_int("max_length", max_length, min_value=1, max_value=MAX_STEPS)
        self.length_penalty = check_float("length_penalty", length_penalty, min_value=0.0)
        self.n_best = self.beam_width if n_best is None else n_best
        check_int("n_best", self.n_best, min_value=1, max_value=self.beam_width)
        V = None if vocab_size is None else check_int("vocab_size", vocab_size, min_value=1)
        self.vocab_size = V
        self.bos, self.eos = check_token("bos", bos, V), check_token("eos", eos, V)
        self.constraint = constraint
        self.check_normalised = bool(check_normalised)
        if pruning is not None and not isinstance(pruning, Pruning):
            raise TypeError(f"pruning must be a Pruning, got {type(pruning).__name__}")
        self.pruning = pruning if pruning is not None else Pruning()
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
        lp, new_state = check_step_output(out, N, self.vocab_size, self.check_normalised)
        V = lp.shape[1]  # lp: (N, V)
        if self.vocab_size is None:
            self.vocab_size = V
            check_token("bos", self.bos, V)
            check_token("eos", eos, V)
        allowed = None if cons is None else constraint_masks(cons, self._cstates, V)  # (N, V)
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
        cut = self.pruning.cut(float(score[ranked[0]])) if ranked.size else -math.inf
        per_node = self.pruning.per_node
        at_node: dict[Any, int] = {}  # node -> live hypotheses there
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
            if score[f] < cut:  # every later candidate scores lower: all are below it
                fate[ranked[pos:]], threshold[ranked[pos:]] = _BELOW, thr
                break
            if token[f] == eos:
                fate[f] = _EOS
            elif t < self.max_length:
                c = None if cons is None else cons.advance(self._cstates[parent[f]], int(token[f]))
                node = node_of(int(token[f]), c)
                if per_node is not None and at_node.get(node, 0) == per_node:
                    fate[f] = _PER_NODE
                    continue
                at_node[node] = at_node.get(node, 0) + 1
                fate[f] = _LIVE
                live_idx.append(f)
                live_c.append(c)
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
