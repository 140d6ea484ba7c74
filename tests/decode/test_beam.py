"""Greedy and beam search: beam width 1 is greedy, a wide beam is exhaustive enumeration, the
length penalty ranks as its formula says, the step records are consistent, bad input is named."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from pyplay.decode import (
    FATES,
    BeamSearch,
    BeamStep,
    greedy_decode,
    length_penalty,
    reorder_rows,
)


def log_softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def markov_step(seed: int, V: int, scale: float = 1.5) -> Callable[..., Any]:
    """log p(next | last token) from a fixed random table (V, V); the state is unused."""
    table = log_softmax(np.random.default_rng(seed).normal(size=(V, V)) * scale)  # (V, V)
    return lambda tokens, state: (table[tokens], state)


def prefix_step(seed: int, V: int, scale: float = 2.0) -> Callable[..., Any]:
    """log p(next | whole prefix): a log-softmax row seeded by the prefix; the state is the
    prefix itself (N, t) so the default reorder keeps it aligned."""

    def step(tokens: np.ndarray, state: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        prefix = np.concatenate([state, tokens[:, None]], axis=1)  # (N, t + 1)
        rows = [np.random.default_rng([seed, V, *p.tolist()]).normal(size=V) for p in prefix]
        return log_softmax(np.array(rows) * scale), prefix  # (N, V)

    return step


START = np.zeros((1, 0), dtype=np.int64)  # the empty prefix of prefix_step


def enumerate_all(step, state, bos, eos, V, max_length, alpha=0.0):
    """Every output (ending in EOS, or truncated at max_length) with log-prob and score,
    sorted by (-score, tokens): a depth-first walk calling ``step`` on one hypothesis."""
    out = []

    def visit(tokens, last, st, logp):
        lp, nxt = step(np.array([last]), st)
        for k in range(V):
            seq, total = (*tokens, k), logp + lp[0, k]
            if k == eos or len(seq) == max_length:
                out.append((seq, total, total / length_penalty(len(seq), alpha)))
            else:
                visit(seq, k, reorder_rows(nxt, np.array([0])), total)

    visit((), bos, state, 0.0)
    return sorted(out, key=lambda item: (-item[2], item[0]))


def assert_same(results, expected):
    assert [h.tokens for h in results] == [e[0] for e in expected]
    np.testing.assert_allclose([h.log_prob for h in results], [e[1] for e in expected], atol=1e-12)
    np.testing.assert_allclose([h.score for h in results], [e[2] for e in expected], atol=1e-12)


# ------------------------------------------------------------------------------ greedy = beam 1
@pytest.mark.parametrize("kind", ["markov", "prefix"])
def test_beam_width_one_is_greedy(kind):
    rng = np.random.default_rng(0)
    for seed in range(40):
        V, L = int(rng.integers(3, 7)), int(rng.integers(1, 9))
        bos, eos = int(rng.integers(V)), int(rng.integers(V))
        step = markov_step(seed, V) if kind == "markov" else prefix_step(seed, V)
        state = None if kind == "markov" else START
        g = greedy_decode(step, state, bos, eos, L)[0]
        res = BeamSearch(step, state, bos, eos, beam_width=1, max_length=L).run()
        assert len(res) == 1
        assert res[0].tokens == g.tokens
        assert res[0].status == g.status
        assert res[0].log_prob == pytest.approx(g.log_prob, abs=1e-12)
        assert g.step_log_probs.shape == (len(g.tokens),)
        assert g.step_log_probs.sum() == pytest.approx(g.log_prob, abs=1e-12)


def test_greedy_batch_matches_rows():
    V, L = 5, 7
    rows = [np.random.default_rng(s).normal(size=(V, V)) for s in range(3)]
    tables = np.stack([log_softmax(r * 2) for r in rows])  # (B, V, V): one chain per source

    def step(tokens, state):
        return tables[state["src"], tokens], state  # (N, V)

    batch = greedy_decode(step, {"src": np.arange(3)}, 0, 4, L, batch_size=3)
    for b in range(3):
        one = greedy_decode(step, {"src": np.array([b])}, 0, 4, L)[0]
        assert batch[b].tokens == one.tokens
        assert batch[b].log_prob == one.log_prob
        assert batch[b].status == one.status
        if one.status == "eos":
            assert one.tokens[-1] == 4 and 4 not in one.tokens[:-1]
        else:
            assert len(one.tokens) == L and 4 not in one.tokens


# ------------------------------------------------------------------------------ exactness
@pytest.mark.parametrize("alpha", [0.0, 0.6, 2.0])
@pytest.mark.parametrize("seed", range(4))
def test_wide_beam_is_exhaustive(seed, alpha):
    V, L = (4, 4) if seed % 2 == 0 else (5, 3)
    bos, eos = 0, 1 + seed % (V - 1)
    step = prefix_step(seed, V)
    expected = enumerate_all(step, START, bos, eos, V, L, alpha)
    assert len(expected) == sum((V - 1) ** (n - 1) for n in range(1, L + 1)) + (V - 1) ** L
    width = V**L
    every = BeamSearch(step, START, bos, eos, width, L, alpha, n_best=width).run()
    assert_same(every, expected)  # nothing pruned: every output, best first
    for n in (1, 3, 7):
        bs = BeamSearch(step, START, bos, eos, width, L, alpha, n_best=n)
        assert_same(bs.run(), expected[:n])
        steps = bs.history
        assert not any(s.candidates.count("outside_beam") for s in steps)
        if n == 1 and alpha == 0.0:  # early stopping prunes here
            assert sum(s.candidates.count("cannot_beat_finished") for s in steps) > 0


def test_early_stopping_stops_before_max_length():
    """EOS is likely: once n_best outputs end, nothing live can beat them."""
    V, eos = 4, 3
    table = np.full((V, V), 0.1 / (V - 1))
    table[:, eos] = 0.9
    step = lambda tokens, state: (np.log(table[tokens]), state)  # noqa: E731
    bs = BeamSearch(step, None, 0, eos, beam_width=3, max_length=30)
    res = bs.run()
    assert bs.done and bs.step < 5 and not bs.live
    assert res[0].tokens == (eos,)
    assert res[0].log_prob == pytest.approx(math.log(0.9))
    assert [h.tokens for h in res] == [(eos,), (0, eos), (1, eos)]


def test_length_penalty_ranks_by_the_formula():
    # tokens 0 "a", 1 "b" (also BOS), 2 EOS; [EOS] has log p = -1, [a, EOS] log 0.36
    table = np.array([[0.3, 0.1, 0.6], [0.6, 1 - 0.6 - math.exp(-1), math.exp(-1)], [1 / 3] * 3])
    step = lambda tokens, state: (np.log(table[tokens]), state)  # noqa: E731
    best = {}
    for alpha in (0.0, 1.0):
        res = BeamSearch(step, None, 1, 2, 27, 3, alpha, n_best=27).run()
        best[alpha] = res[0].tokens
        for h in res:
            lp = ((5 + len(h.tokens)) / 6) ** alpha
            assert h.score == pytest.approx(h.log_prob / lp, abs=1e-12)
        assert [h.score for h in res] == sorted((h.score for h in res), reverse=True)
    assert best[0.0] == (2,)  # -1 > 2 log 0.6 = -1.02
    assert best[1.0] == (0, 2)  # -1.02 / (7/6) = -0.876 > -1 / 1
    assert length_penalty(1, 1.0) == 1.0 and length_penalty(7, 0.5) == pytest.approx(2**0.5)


def test_pruning_bound_accounts_for_the_length_penalty():
    """[a] scores below the finished [EOS] at step 1, yet [a, EOS] wins once normalised."""
    table = np.log(np.array([[0.025, 0.025, 0.95], [0.45, 0.05, 0.5], [1 / 3] * 3]))
    step = lambda tokens, state: (table[tokens], state)  # noqa: E731
    bs = BeamSearch(step, None, 1, 2, beam_width=9, max_length=3, length_penalty=2.0, n_best=1)
    res = bs.run()
    assert res[0].tokens == (0, 2)
    assert res[0].score == pytest.approx(math.log(0.45 * 0.95) / (7 / 6) ** 2)
    first = bs.history[0]
    assert first.live[0].tokens == (0,) and first.live[0].score < first.finished[0].score
    assert_same(res, enumerate_all(step, None, 1, 2, 3, 3, 2.0)[:1])


def test_ties_break_by_parent_then_token():
    uniform = np.full((4, 4), -math.log(4))
    step = lambda tokens, state: (uniform[tokens], state)  # noqa: E731
    bs = BeamSearch(step, None, 0, 3, beam_width=2, max_length=3)
    res = bs.run()
    steps = bs.history
    assert [h.tokens for h in steps[0].live] == [(0,), (1,)]
    assert [h.status for h in steps[0].pruned] == ["outside_beam"] * 2  # (2,), then EOS (3,)
    assert [h.tokens for h in steps[1].live] == [(0, 0), (0, 1)]
    assert [h.tokens for h in res] == [(0, 0, 0), (0, 0, 1)]
    assert greedy_decode(step, None, 0, 3, 3)[0].tokens == (0, 0, 0)
    # a live candidate that only ties the worst finished score is kept (pruning is strict)
    bs = BeamSearch(step, None, 1, 0, beam_width=3, max_length=2, n_best=1)
    first = bs.advance()
    assert [h.tokens for h in first.finished] == [(0,)]
    assert [h.tokens for h in first.live] == [(1,), (2,), (3,)]
    assert first.live[0].bound == first.live[0].threshold
    second = bs.advance()
    assert {h.status for h in second.pruned} == {"cannot_beat_finished"}
    assert bs.done and [h.tokens for h in bs.results()] == [(0,)]


# ------------------------------------------------------------------------------ records
def check_records(bs: BeamSearch, V: int) -> None:
    steps = bs.history
    root = steps[0].parents
    assert len(root) == 1 and root[0].tokens == () and root[0].token == bs.bos
    finished_all = []
    for i, rec in enumerate(steps):
        assert rec.step == i + 1
        if i:
            assert rec.parents == steps[i - 1].live
        c = rec.candidates
        K = len(rec.parents) * V
        assert len(c) == K
        assert len(rec.live) + len(rec.finished) + len(rec.pruned) == K
        assert sorted(zip(c.parent.tolist(), c.token.tolist(), strict=True)) == [
            (p, k) for p in range(len(rec.parents)) for k in range(V)
        ]
        fin = np.isfinite(c.log_prob)
        keys = list(zip(-c.score[fin], c.parent[fin], c.token[fin], strict=True))
        assert keys == sorted(keys)  # the stable rank order
        assert len(rec.live) <= bs.beam_width
        for h in (*rec.live, *rec.finished, *rec.pruned):
            par = rec.parents[h.parent]
            assert h.tokens == (*par.tokens, h.token)
            assert h.log_prob == pytest.approx(par.log_prob + h.step_log_prob, abs=1e-12)
            assert rec.hypothesis(h.rank) == h
        for h in rec.live:
            assert h.status == "live" and h.token != bs.eos and h.bound >= h.threshold
        for h in rec.finished:
            assert (h.status == "eos") == (h.tokens[-1] == bs.eos)
            assert h.status == "eos" or len(h.tokens) == bs.max_length
        slots = [h.rank for h in rec.live] + [h.rank for h in rec.finished if h.status != "eos"]
        for h in rec.pruned:
            assert h.status in FATES[3:]
            if h.status == "outside_beam":
                assert len(slots) == bs.beam_width and h.rank > max(slots)
            if h.status == "cannot_beat_finished":
                assert h.bound < h.threshold
        assert rec.done == (i == len(steps) - 1)
        finished_all += rec.finished
    best = sorted(finished_all, key=lambda h: (-h.score, h.tokens))[: bs.n_best]
    assert bs.results() == best


def trace(bs: BeamSearch, h) -> tuple[int, ...]:
    """Follow parent pointers from a hypothesis finished at step len(h.tokens) to the root."""
    steps, tokens, parent = bs.history, [h.token], h.parent
    for rec in reversed(steps[: len(h.tokens) - 1]):
        tokens.append(rec.live[parent].token)
        parent = rec.live[parent].parent
    assert parent == 0  # the root
    return tuple(reversed(tokens))


def same_record(a: BeamStep, b: BeamStep) -> bool:
    pairs = zip(vars(a.candidates).values(), vars(b.candidates).values(), strict=True)
    same = all(np.array_equal(x, y) for x, y in pairs)
    fields = ("step", "parents", "live", "finished", "done")
    return same and all(getattr(a, f) == getattr(b, f) for f in fields)


@pytest.mark.parametrize("alpha", [0.0, 0.8])
def test_records_are_consistent_and_replayable(alpha):
    V = 6
    step = prefix_step(3, V)
    for width, n_best in ((3, 3), (4, 2), (1, 1)):
        bs = BeamSearch(step, START, 0, 5, width, 8, alpha, n_best=n_best)
        res = bs.run()
        check_records(bs, V)
        for h in res:
            assert trace(bs, h) == h.tokens
        recorded = bs.history
        for k in range(1, len(recorded) + 1):  # Back k steps, then forward again
            for _ in range(k):
                bs.back()
            assert bs.history == recorded[: len(recorded) - k] and not bs.done
            assert bs.step == len(recorded) - k
            for j in range(len(recorded) - k, len(recorded)):
                assert same_record(bs.advance(), recorded[j])
            assert bs.results() == res
        with pytest.raises(RuntimeError, match="done"):
            bs.advance()
    fresh = BeamSearch(step, START, 0, 5)
    with pytest.raises(RuntimeError, match="back"):
        fresh.back()


def test_zero_probability_candidates_are_recorded():
    V = 4
    table = log_softmax(np.random.default_rng(1).normal(size=(V, V)))
    table[:, 2] = -np.inf  # token 2 never occurs
    table = log_softmax(table)
    bs = BeamSearch(lambda t, s: (table[t], s), None, 0, 3, beam_width=2, max_length=4)
    res = bs.run()
    check_records(bs, V)
    assert all(2 not in h.tokens for h in res)
    rec = bs.history[1]
    assert rec.candidates.count("zero_probability") == len(rec.parents)
    assert all(h.status == "zero_probability" for h in rec.pruned if h.token == 2)


def test_seq2seq_decoder_plugs_in():
    from pyplay.models.seq2seq import EncoderDecoder
    from pyplay.tasks.pairs import BOS, EOS

    model = EncoderDecoder(7, 6, 8, 12, wiring="attention", dtype=np.float64, rng=0)
    src, lengths = np.array([[3, 4, 5, 6, 2]]), np.array([5])
    greedy = model.greedy(src, lengths, max_length=9)[0]
    kw = dict(max_length=9, reorder=model.reorder)
    one = BeamSearch(model.step, model.start(src, lengths), BOS, EOS, 1, **kw).run()[0]
    assert [k for k in one.tokens if k != EOS] == greedy
    bs = BeamSearch(model.step, model.start(src, lengths), BOS, EOS, 4, **kw)
    bs.run()
    check_records(bs, 6)
    with pytest.raises(TypeError, match="reorder="):  # a dataclass state needs its reorder
        BeamSearch(model.step, model.start(src, lengths), BOS, EOS, 2, 9).run()


# ------------------------------------------------------------------------------ bad input
STEP = markov_step(0, 5)


@pytest.mark.parametrize(
    "kwargs, exc, name",
    [
        ({"beam_width": 0}, ValueError, "beam_width"),
        ({"beam_width": 2.0}, TypeError, "beam_width"),
        ({"max_length": 0}, ValueError, "max_length"),
        ({"n_best": 6}, ValueError, "n_best"),
        ({"length_penalty": -0.5}, ValueError, "length_penalty"),
        ({"length_penalty": math.nan}, ValueError, "length_penalty"),
        ({"bos": -1}, ValueError, "bos"),
        ({"eos": 5, "vocab_size": 5}, ValueError, "eos"),
        ({"bos": 9, "vocab_size": 5}, ValueError, "bos"),
        ({"vocab_size": 0}, ValueError, "vocab_size"),
    ],
)
def test_bad_arguments(kwargs, exc, name):
    args: dict[str, Any] = dict(step=STEP, state=None, bos=0, eos=4, beam_width=5)
    with pytest.raises(exc, match=name) as info:
        BeamSearch(**{**args, **kwargs})
    assert "got" in str(info.value)


def test_eos_outside_the_returned_vocabulary():
    step = lambda t, s: (np.full((len(t), 5), -math.log(5)), s)  # noqa: E731
    for fn in (
        lambda: BeamSearch(step, None, 0, 7).advance(),
        lambda: greedy_decode(step, None, 0, 7, 3),
    ):
        with pytest.raises(ValueError, match=r"eos must be <= 4, got 7"):
            fn()


GOOD = np.log(np.full((1, 4), 0.25))
BAD_OUTPUTS = [
    (GOOD[0], ValueError, r"shape \(4,\), expected \(N, V\) = \(1, V\)"),
    (np.log(np.full((2, 4), 0.25)), ValueError, r"shape \(2, 4\)"),
    (np.zeros((1, 4)), ValueError, "not normalised: logsumexp of row 0 is 1.38629"),
    (np.array([[np.nan, 0.0, -1.0, -1.0]]), ValueError, r"NaN in row\(s\) \[0\]"),
    (np.array([[np.inf, 0.0, -1.0, -1.0]]), ValueError, r"\+inf"),
    (np.full((1, 4), -np.inf), ValueError, "no finite entry"),
    (np.zeros((1, 4), dtype=np.int64), TypeError, "float array"),
    ([[0.0, -1.0]], TypeError, "float array"),
]


@pytest.mark.parametrize("lp, exc, match", BAD_OUTPUTS)
def test_step_output_is_checked(lp, exc, match):
    step = lambda t, s: (lp, s)  # noqa: E731
    with pytest.raises(exc, match=match):
        BeamSearch(step, None, 0, 3).advance()
    with pytest.raises(exc, match=match):
        greedy_decode(step, None, 0, 3, 4)


def test_step_must_return_a_pair_and_keep_its_vocabulary():
    with pytest.raises(TypeError, match="pair"):
        BeamSearch(lambda t, s: GOOD, None, 0, 3).advance()
    sizes = iter([4, 5])
    step = lambda t, s: (np.log(np.full((len(t), next(sizes)), 0.25)), s)  # noqa: E731
    bs = BeamSearch(step, None, 0, 3, check_normalised=False)
    bs.advance()
    with pytest.raises(ValueError, match=r"shape \(3, 5\), expected \(N, V\) = \(3, 4\)"):
        bs.advance()
    with pytest.raises(ValueError, match="max_length"):
        greedy_decode(STEP, None, 0, 4, 0)
    with pytest.raises(ValueError, match="batch_size"):
        greedy_decode(STEP, None, 0, 4, 3, batch_size=0)
    with pytest.raises(TypeError, match="step must be callable"):
        BeamSearch(None, None, 0, 4)  # type: ignore[arg-type]


def test_reorder_rows():
    state = {"h": (np.arange(6).reshape(3, 2), [np.arange(3)]), "none": None}
    out = reorder_rows(state, np.array([2, 2, 0]))
    assert out["none"] is None
    np.testing.assert_array_equal(out["h"][0], [[4, 5], [4, 5], [0, 1]])
    np.testing.assert_array_equal(out["h"][1][0], [2, 2, 0])
    with pytest.raises(TypeError, match="reorder="):
        reorder_rows((np.zeros(3), 1.5), np.array([0]))


def test_rows_state_reorder_keeps_rows_of_every_field():
    """The memory models' states reorder every array field, keep None, and delegate to a
    nested state's own reorder (the transformer LM's key/value caches)."""
    from pyplay.models.memory import AttendState, MemoryState
    from pyplay.models.transformer import TransformerModel

    a = np.arange(12.0).reshape(3, 4)  # (B=3, 4)
    idx = np.array([2, 2, 0])
    m = MemoryState(a, a + 1, a + 2, a[:, :, None] + 3, None, a + 5).reorder(idx)
    assert type(m) is MemoryState and m.w is None
    for got, shift in ((m.h, 0), (m.c, 1), (m.r, 2), (m.M[:, :, 0], 3), (m.y, 5)):
        np.testing.assert_array_equal(got, a[idx] + shift)
    s = AttendState(a, a + 1, a[:, :, None], cells=None, y=a + 2).reorder(idx)
    assert type(s) is AttendState and s.cells is None
    np.testing.assert_array_equal(s.history[:, :, 0], a[idx])
    np.testing.assert_array_equal(s.y, a[idx] + 2)
    model = TransformerModel(5, 5, d_model=8, nhead=2, num_layers=1, rng=0)
    _, state, _ = model.forward(np.array([[1, 2], [3, 4], [0, 1]]), training=False)
    moved = state.reorder(idx)
    np.testing.assert_array_equal(
        moved.stack.layers[0].self_attn.key, state.stack.layers[0].self_attn.key[idx]
    )
