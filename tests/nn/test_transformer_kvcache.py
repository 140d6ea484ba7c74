"""Incremental decoding with a key/value cache: every step equals the full causal recomputation
(float64, 1e-12), states reorder along the batch axis (beam search), and bad input is named.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from pyplay.decode import BeamSearch
from pyplay.nn import (
    LayerState,
    MultiheadAttention,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
    TransformerState,
)
from pyplay.nn.kv_cache import KVCache
from pyplay.nn.transformer import reorder

E, H, F, B, T, S = 8, 2, 12, 3, 5, 4
EXACT = 1e-12
MKPM = np.array([[False] * S, [False, False, True, True], [False, False, False, True]])
TKPM = np.zeros((B, T), bool)
TKPM[1, 3:] = True  # padding at the end of sequence 1
VARIANTS = list(itertools.product([False, True], ["relu", "gelu"]))
VARIANT_IDS = [f"{'pre' if nf else 'post'}-{act}" for nf, act in VARIANTS]


def _randomise(m: Any, seed: int) -> Any:
    rng = np.random.default_rng(seed)
    for name, p in m.params.items():
        base = 1.0 if "norm" in name and name.endswith("weight") else 0.0
        p[...] = base + 0.5 * rng.standard_normal(p.shape)
    return m


def _data(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((B, T, E)), rng.standard_normal((B, S, E))


def _steps(step: Callable[..., tuple], x: np.ndarray, state: Any, chunks: list[int], **kw: Any):
    """Feed ``x`` (B, T, E) in chunks of the given sizes; outputs concatenated, the last
    state and every record."""
    outs, records, t = [], [], 0
    for n in chunks:
        extra = {k: v[:, t : t + n] for k, v in kw.items()}
        out, state, rec = step(x[:, t : t + n], state, **extra)
        outs.append(out)
        records.append(rec)
        t += n
    assert t == x.shape[1]
    return np.concatenate(outs, axis=1), state, records


def assert_exact(a: np.ndarray, b: np.ndarray, what: str) -> None:
    assert a.shape == b.shape, f"{what}: {a.shape} != {b.shape}"
    err = float(np.max(np.abs(a - b)) / np.max(np.abs(b)))
    assert err < EXACT, f"{what}: relative error {err:.2e}"


# ------------------------------------------------------------------- multi-head attention
@pytest.mark.parametrize("chunks", [[1] * T, [2, 1, 2], [T]], ids=["rows", "chunks", "all"])
def test_multihead_step_equals_causal_forward(chunks: list[int]) -> None:
    m = _randomise(MultiheadAttention(E, H, dtype=np.float64, rng=1), 1)
    x, _ = _data(2)
    full, _, cache = m.forward(x, x, x, TKPM, is_causal=True)

    def step(xn: np.ndarray, kv: KVCache | None, key_padding_mask: np.ndarray) -> tuple:
        out, w, kv = m.step(xn, kv, xn, xn, key_padding_mask=key_padding_mask, is_causal=True)
        return out, kv, w

    out, kv, weights = _steps(step, x, None, chunks, key_padding_mask=TKPM)
    assert_exact(out, full, "out")
    assert kv.length == T and np.array_equal(kv.key_padding_mask, TKPM)
    t = 0
    for w, n in zip(weights, chunks, strict=True):  # the rows of the full weights
        assert_exact(w, cache.weights[:, :, t : t + n, : t + n], f"weights {t}")
        t += n


def test_multihead_cross_step_equals_forward() -> None:
    m = _randomise(MultiheadAttention(E, H, kdim=5, vdim=3, dtype=np.float64, rng=3), 3)
    rng = np.random.default_rng(4)
    q, k, v = (
        rng.standard_normal((B, T, E)),
        rng.standard_normal((B, S, 5)),
        rng.standard_normal((B, S, 3)),
    )
    full, w_full, _ = m.forward(q, k, v, MKPM, average_attn_weights=False)
    kv = m.project_key_value(k, v, MKPM)
    assert kv.key.shape == (B, H, S, E // H) and kv.length == S
    for t in range(T):
        out, w, same = m.step(q[:, t : t + 1], kv)
        assert same is kv  # nothing appended
        assert_exact(out, full[:, t : t + 1], f"out {t}")
        assert_exact(w, w_full[:, :, t : t + 1], f"weights {t}")


# ---------------------------------------------------------------------------------- layers
@pytest.mark.parametrize(("norm_first", "act"), VARIANTS, ids=VARIANT_IDS)
def test_encoder_layer_step_equals_forward(norm_first: bool, act: str) -> None:
    m = _randomise(
        TransformerEncoderLayer(E, H, F, activation=act, norm_first=norm_first,
                                dtype=np.float64, rng=5), 5,
    )  # fmt: skip
    x, _ = _data(6)
    full, cache = m.forward(x, src_key_padding_mask=TKPM, is_causal=True)
    rec_full = cache.record()
    out, state, records = _steps(m.step, x, None, [1] * T, src_key_padding_mask=TKPM)
    assert_exact(out, full, "out")
    assert isinstance(state, LayerState) and state.length == T and state.cross_attn is None
    for t, rec in enumerate(records):
        w_full = rec_full["self_attn.weights"][:, :, t : t + 1, : t + 1]
        assert_exact(rec["self_attn.weights"], w_full, "weights")
        assert_exact(rec["residual_norms"], rec_full["residual_norms"][:, :, t : t + 1], "norms")


@pytest.mark.parametrize(("norm_first", "act"), VARIANTS, ids=VARIANT_IDS)
def test_decoder_layer_step_equals_forward(norm_first: bool, act: str) -> None:
    m = _randomise(
        TransformerDecoderLayer(E, H, F, activation=act, norm_first=norm_first,
                                dtype=np.float64, rng=7), 7,
    )  # fmt: skip
    x, mem = _data(8)
    kw = {"tgt_key_padding_mask": TKPM, "memory_key_padding_mask": MKPM}
    full, cache = m.forward(x, mem, **kw, tgt_is_causal=True)
    rec_full = cache.record()
    state = m.init_state(mem, MKPM)
    assert state.length == 0 and state.cross_attn is not None
    out, state, records = _steps(m.step, x, state, [2, 1, 2], tgt_key_padding_mask=TKPM)
    assert_exact(out, full, "out")
    assert state.length == T
    rec = records[-1]  # the last chunk: rows 3 and 4
    assert_exact(rec["multihead_attn.weights"], rec_full["multihead_attn.weights"][:, :, 3:], "w")
    assert_exact(rec["self_attn.weights"], rec_full["self_attn.weights"][:, :, 3:], "w")
    assert rec["residual_norms"].shape == (4, B, 2)


# ---------------------------------------------------------------------------------- stacks
@pytest.mark.parametrize("norm_first", [False, True], ids=["post", "pre"])
def test_encoder_stack_step_equals_forward(norm_first: bool) -> None:
    m = _randomise(
        TransformerEncoder(E, H, 3, F, activation="gelu", norm_first=norm_first, norm=True,
                           dtype=np.float64, rng=9), 9,
    )  # fmt: skip
    x, _ = _data(10)
    full, cache = m.forward(x, src_key_padding_mask=TKPM, is_causal=True)
    out, state, records = _steps(m.step, x, m.init_state(), [1, 3, 1], src_key_padding_mask=TKPM)
    assert_exact(out, full, "out")
    assert isinstance(state, TransformerState) and state.length == T and len(state.layers) == 3
    assert sorted(records[0]) == sorted(cache.record())
    out_none, _, _ = _steps(m.step, x, None, [T], src_key_padding_mask=TKPM)  # None = start
    assert_exact(out_none, full, "out from None")


@pytest.mark.parametrize("norm_first", [False, True], ids=["post", "pre"])
def test_decoder_stack_step_equals_forward(norm_first: bool) -> None:
    m = _randomise(
        TransformerDecoder(E, H, 2, F, norm_first=norm_first, norm=norm_first,
                           dtype=np.float64, rng=11), 11,
    )  # fmt: skip
    x, mem = _data(12)
    full, _ = m.forward(x, mem, memory_key_padding_mask=MKPM, tgt_is_causal=True)
    out, state, _ = _steps(m.step, x, m.init_state(mem, MKPM), [1] * T)
    assert_exact(out, full, "out")
    assert state.length == T


def test_float32_steps() -> None:
    m = TransformerDecoder(E, H, 2, F, activation="gelu", rng=13)
    x, mem = _data(14)
    full, _ = m.forward(x, mem, tgt_is_causal=True, training=False)
    out, state, _ = _steps(m.step, x, m.init_state(mem), [1] * T)
    assert out.dtype == np.float32 and state.layers[0].self_attn.key.dtype == np.float32
    np.testing.assert_allclose(out, full, rtol=1e-4, atol=1e-5)


# --------------------------------------------------------------------------------- reorder
def test_reorder_then_continue_equals_forward_on_the_reordered_prefix() -> None:
    m = _randomise(TransformerDecoder(E, H, 2, F, dtype=np.float64, rng=15), 15)
    x, mem = _data(16)
    idx = np.array([2, 0, 0])  # beam search: hypotheses 2, 0 and a copy of 0
    _, state, _ = _steps(m.step, x[:, :3], m.init_state(mem, MKPM), [1, 1, 1])
    moved = reorder(state, idx)
    assert moved.length == 3 and state.layers[0].self_attn.key.shape[0] == B  # not modified
    rest = np.random.default_rng(17).standard_normal((B, 2, E))
    out, _, _ = _steps(m.step, rest, moved, [1, 1])
    prefix = np.concatenate([x[idx, :3], rest], axis=1)  # (B, 5, E)
    full, _ = m.forward(prefix, mem[idx], memory_key_padding_mask=MKPM[idx], tgt_is_causal=True)
    assert_exact(out, full[:, 3:], "after reorder")


def test_reorder_accepts_each_state_kind_and_checks_the_index() -> None:
    m = TransformerEncoderLayer(E, H, F, dtype=np.float64, rng=18)
    x, _ = _data(19)
    _, layer_state, _ = m.step(x, None, src_key_padding_mask=TKPM)
    stack_state = TransformerState((layer_state, layer_state))
    for s in (layer_state, stack_state, layer_state.self_attn):
        r = reorder(s, [1, 1])
        assert type(r) is type(s)
    kv = reorder(layer_state.self_attn, [1, 0])
    assert np.array_equal(kv.key_padding_mask, TKPM[[1, 0]])
    assert np.array_equal(kv.key, layer_state.self_attn.key[[1, 0]])
    _raises(ValueError, "index", lambda: layer_state.reorder([0, 3]))
    _raises(ValueError, "index", lambda: stack_state.reorder(np.array([-1])))
    _raises(TypeError, "index", lambda: stack_state.reorder(np.array([0.0])))
    _raises(ValueError, "index", lambda: stack_state.reorder(np.zeros((1, 1), int)))
    _raises(TypeError, "state", lambda: reorder({"k": x}, [0]))


def test_beam_search_with_reorder_scores_match_full_recomputation() -> None:
    """A tiny translation model decoded by :class:`BeamSearch` with the KV cache: every
    hypothesis' log-probability equals the one recomputed by a full causal forward."""
    V, bos, eos = 6, 0, 1
    dec = _randomise(TransformerDecoder(E, H, 2, F, norm_first=True, norm=True,
                                        dtype=np.float64, rng=20), 20)  # fmt: skip
    rng = np.random.default_rng(21)
    emb, W_out = rng.standard_normal((V, E)), 2.0 * rng.standard_normal((V, E))
    mem = rng.standard_normal((1, S, E))

    def log_softmax(z: np.ndarray) -> np.ndarray:
        z = z - z.max(axis=-1, keepdims=True)
        return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))

    def step(tokens: np.ndarray, state: TransformerState) -> tuple[np.ndarray, Any]:
        out, state, _ = dec.step(emb[tokens][:, None, :], state)  # (N, 1, E)
        return log_softmax(out[:, 0] @ W_out.T), state  # (N, V)

    search = BeamSearch(
        step, dec.init_state(mem), bos, eos, beam_width=3, max_length=5, reorder=reorder,
        vocab_size=V,
    )  # fmt: skip
    results = search.run()
    assert len(results) == 3 and any(h.length > 2 for h in results)
    for h in results:
        inputs = np.array([[bos, *h.tokens[:-1]]])  # (1, L)
        out, _ = dec.forward(emb[inputs], mem, tgt_is_causal=True)  # (1, L, E)
        logp = log_softmax(out[0] @ W_out.T)[np.arange(h.length), list(h.tokens)].sum()
        assert abs(logp - h.log_prob) < 1e-10 * max(1.0, abs(logp)), h.tokens


# ------------------------------------------------------------------------------- bad input
def _raises(exc: type[Exception], name: str, fn: Callable[[], Any]) -> None:
    with pytest.raises(exc) as info:
        fn()
    message = str(info.value)
    assert name in message, f"{name!r} not named in: {message}"
    assert "got" in message, f"the given value is not reported in: {message}"


def test_bad_multihead_step_input() -> None:
    m = MultiheadAttention(E, H, dtype=np.float64, rng=22)
    x, _ = _data(23)
    q = x[:, :1]
    _, _, kv = m.step(q, None, q, q)
    _raises(ValueError, "key and value", lambda: m.step(q, kv, q))
    _raises(ValueError, "cache", lambda: m.step(q))
    _raises(TypeError, "cache", lambda: m.step(q, {"key": q}, q, q))  # type: ignore[arg-type]
    _raises(ValueError, "key_padding_mask", lambda: m.step(q, kv, key_padding_mask=TKPM[:, :1]))
    _raises(ValueError, "key_padding_mask", lambda: m.step(q, kv, q, q, key_padding_mask=TKPM))
    _raises(ValueError, "query", lambda: m.step(x[:2, :1], kv))
    _raises(ValueError, "query", lambda: m.step(x[..., :4], kv))
    _raises(ValueError, "key", lambda: m.step(q, kv, x[:2, :1], x[:2, :1]))
    _raises(ValueError, "query", lambda: m.step(x[:, :2], kv, is_causal=True))  # 2 rows, 1 key
    _raises(TypeError, "is_causal", lambda: m.step(q, kv, is_causal=None))  # type: ignore[arg-type]
    every = np.ones((B, 1), bool)
    _raises(ValueError, "key_padding_mask", lambda: m.step(q, None, q, q, key_padding_mask=every))


def test_bad_layer_and_stack_step_input() -> None:
    x, mem = _data(24)
    enc = TransformerEncoder(E, H, 2, F, dtype=np.float64, rng=25)
    dec = TransformerDecoder(E, H, 2, F, dtype=np.float64, rng=26)
    layer = dec.layers[0]
    _raises(TypeError, "state", lambda: dec.step(x[:, :1], None))  # type: ignore[arg-type]
    _raises(ValueError, "state", lambda: dec.step(x[:, :1], TransformerState((LayerState(),))))
    _raises(ValueError, "state", lambda: layer.step(x[:, :1], LayerState()))
    _raises(TypeError, "state", lambda: layer.step(x[:, :1], dec.init_state(mem)))  # type: ignore[arg-type]
    _raises(ValueError, "tgt", lambda: dec.step(x[:2, :1], dec.init_state(mem)))
    _raises(ValueError, "tgt", lambda: dec.step(x[:, :1, :4], dec.init_state(mem)))
    _raises(ValueError, "memory", lambda: dec.init_state(mem[..., :4]))
    _raises(ValueError, "memory_key_padding_mask", lambda: dec.init_state(mem, TKPM))
    state = dec.init_state(mem)
    bad_kpm = np.zeros((B, 2), bool)
    x1 = x[:, :1]
    _raises(
        ValueError,
        "tgt_key_padding_mask",
        lambda: dec.step(x1, state, tgt_key_padding_mask=bad_kpm),
    )
    _raises(ValueError, "src", lambda: enc.step(x[0]))
    _raises(ValueError, "src_key_padding_mask", lambda: enc.step(x1, src_key_padding_mask=bad_kpm))
    float_kpm = np.zeros((B, 1))
    _raises(TypeError, "src_key_padding_mask", lambda: enc.step(x1, src_key_padding_mask=float_kpm))
    _, enc_state, _ = enc.step(x1)
    deeper = TransformerEncoder(E, H, 3, F, dtype=np.float64)
    _raises(ValueError, "state", lambda: deeper.step(x1, enc_state))
    _raises(ValueError, "src", lambda: enc.step(x[:2, :1], enc_state))  # batch differs
