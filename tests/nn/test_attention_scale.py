"""The scaled dot product's two divisors: sqrt(D) (Vaswani et al., the IDSIA lecture; the
default) and sqrt(n_source) (Schmidt's Table 1, section 8.2): central-difference gradients,
parity with torch's scaled_dot_product_attention in float64, bad arguments, and the seq2seq
model's setting (saved, and old files loading with the default)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from gradcheck import assert_grad_close, max_rel_error, numeric_grad
from pyplay.models.seq2seq import EncoderDecoder
from pyplay.models.seq2seq.luong import LuongAttention, make_scorer
from pyplay.nn.attention import ScaledDotAttention

B, TQ, TK, D, DV = 3, 2, 5, 4, 3
LENGTHS = np.array([5, 2, 3])
MASK = np.arange(TK) < LENGTHS[:, None]  # (B, Tk) padding
CAUSAL = np.broadcast_to(np.tri(TQ, TK, dtype=bool), (B, TQ, TK))  # (B, Tq, Tk) per query


def _inputs(seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in ((B, TQ, D), (B, TK, D), (B, TK, DV))]


def _keys(case: str) -> dict[str, Any]:
    return {"none": {}, "mask": {"mask": MASK}, "lengths": {"lengths": LENGTHS},
            "per-query": {"mask": CAUSAL}}[case]  # fmt: skip


def test_default_divides_by_the_key_size_as_before() -> None:
    Q, K, V = _inputs(1)
    layer = ScaledDotAttention(dtype=np.float64)
    assert layer.scale_by == "key_size"
    _, w, _ = layer.forward(Q, K, V, mask=MASK)
    e = np.where(MASK[:, None], Q @ K.transpose(0, 2, 1) / np.sqrt(D), -np.inf)
    np.testing.assert_allclose(w, np.exp(e) / np.exp(e).sum(axis=2, keepdims=True), rtol=1e-12)


@pytest.mark.parametrize("case", ["none", "mask", "lengths", "per-query"])
def test_schmidt_table1_source_length_divides_by_the_keys_each_query_sees(case: str) -> None:
    """Schmidt, Table 1: score(S_t, H_t') = S_tᵀ H_t' / sqrt(n_source), n_source the length of
    this source (Tk without a mask, each sequence's own length with padding)."""
    Q, K, V = _inputs(2)
    _, w, _ = ScaledDotAttention(np.float64, "source_length").forward(Q, K, V, **_keys(case))
    keep = {"none": np.ones((B, TQ, TK), bool), "per-query": CAUSAL}.get(case, MASK[:, None])
    n = np.broadcast_to(keep, (B, TQ, TK)).sum(axis=2, keepdims=True)  # (B, Tq, 1)
    e = np.where(keep, Q @ K.transpose(0, 2, 1) / np.sqrt(n), -np.inf)
    np.testing.assert_allclose(w, np.exp(e) / np.exp(e).sum(axis=2, keepdims=True), rtol=1e-12)


@pytest.mark.parametrize("case", ["none", "mask", "lengths", "per-query"])
@pytest.mark.parametrize("scale_by", ["key_size", "source_length"])
def test_schmidt_table1_scaled_dot_gradients(scale_by: str, case: str) -> None:
    layer = ScaledDotAttention(np.float64, scale_by)
    Q, K, V = _inputs(3)
    rng = np.random.default_rng(4)
    R, Rw = rng.standard_normal((B, TQ, DV)), rng.standard_normal((B, TQ, TK))

    def loss() -> float:
        c, w, _ = layer.forward(Q, K, V, **_keys(case))
        return float((c * R).sum() + (w * Rw).sum())

    dQ, dK, dV, grads = layer.backward(R, layer.forward(Q, K, V, **_keys(case))[2], Rw)
    assert grads == {}
    for name, x, d in (("dQ", Q, dQ), ("dK", K, dK), ("dV", V, dV)):
        assert_grad_close(d, numeric_grad(loss, x), f"{scale_by} {case} {name}")


@pytest.mark.parametrize("case", ["none", "mask", "per-query"])
@pytest.mark.parametrize("scale_by", ["key_size", "source_length"])
def test_schmidt_table1_scaled_dot_matches_torch(scale_by: str, case: str) -> None:
    """torch's scaled_dot_product_attention with scale = 1/sqrt(D), or per sequence and query
    1/sqrt(n): float64, 1e-6 relative, outputs and input gradients."""
    torch = pytest.importorskip("torch")
    sdpa = torch.nn.functional.scaled_dot_product_attention
    Q, K, V = _inputs(5)
    R = np.random.default_rng(6).standard_normal((B, TQ, DV))
    kw = _keys(case)
    c, _, cache = ScaledDotAttention(np.float64, scale_by).forward(Q, K, V, **kw)
    dQ, dK, dV, _ = ScaledDotAttention(np.float64, scale_by).backward(R, cache)
    keep = np.broadcast_to(kw["mask"][:, None] if case == "mask" else kw.get("mask", True),
                           (B, TQ, TK))  # fmt: skip
    Qt, Kt, Vt = (torch.tensor(x, requires_grad=True) for x in (Q, K, V))
    rows = []
    for b in range(B):
        for i in range(TQ):  # one query at a time: torch's scale is one number
            n = D if scale_by == "key_size" else int(keep[b, i].sum())
            m = torch.tensor(keep[b, i][None, :])
            rows.append(sdpa(Qt[b, i : i + 1], Kt[b], Vt[b], attn_mask=m, scale=n**-0.5))
    ct = torch.cat(rows).reshape(B, TQ, DV)
    (ct * torch.tensor(R)).sum().backward()
    assert max_rel_error(c, ct.detach().numpy()) < 1e-6
    for ours, t in ((dQ, Qt), (dK, Kt), (dV, Vt)):
        assert max_rel_error(ours, t.grad.numpy()) < 1e-6


def test_float32_stays_float32_with_source_length() -> None:
    Q, K, V = (x.astype(np.float32) for x in _inputs(7))
    layer = ScaledDotAttention(np.float32, "source_length")
    c, w, cache = layer.forward(Q, K, V, lengths=LENGTHS)
    assert c.dtype == w.dtype == np.float32
    assert all(g.dtype == np.float32 for g in layer.backward(np.ones_like(c), cache)[:3])


@pytest.mark.parametrize(
    ("make", "needle"),
    [
        (lambda: ScaledDotAttention(scale_by="n"), "scale_by must be one of 'key_size', "
         "'source_length', got 'n'"),
        (lambda: make_scorer("dot", 4, 4, scale_by="source_length"), "scale_by"),
        (lambda: LuongAttention(4, 4, "scaled_dot", scale_by=2), "got 2"),
        (lambda: EncoderDecoder(5, 5, 4, 4, wiring="init", scale_by="source_length"),
         "scale_by must be 'key_size', got scale_by='source_length'"),
        (lambda: EncoderDecoder(5, 5, 4, 4, wiring="attention", score="general",
                                scale_by="source_length"), "score='general'"),
    ],
    ids=["choice", "scorer", "type", "no-attention", "other-score"],
)  # fmt: skip
def test_bad_scale_by_is_refused_with_what_was_given(make: Any, needle: str) -> None:
    with pytest.raises(ValueError, match="scale_by") as info:
        make()
    assert needle in str(info.value)


@pytest.mark.parametrize("wiring", ["attention", "bahdanau"])
def test_seq2seq_model_uses_and_saves_scale_by(wiring: str) -> None:
    kw: dict[str, Any] = dict(wiring=wiring, score="scaled_dot", dtype=np.float64)
    src = np.array([[3, 4, 5, 6], [5, 3, 0, 0]])
    lengths, tgt = np.array([4, 2]), np.array([[1, 3, 4], [1, 5, 0]])
    by_n = EncoderDecoder(7, 7, 4, 6, scale_by="source_length", **kw)
    by_d = EncoderDecoder(7, 7, 4, 6, **kw)
    assert by_n.config["scale_by"] == "source_length" and by_d.config["scale_by"] == "key_size"
    again = EncoderDecoder.from_config(by_n.config)
    assert again.scale_by == "source_length"
    w_n, w_d = by_n.forward(src, lengths, tgt)[1], by_d.forward(src, lengths, tgt)[1]
    assert w_n is not None and w_d is not None and not np.allclose(w_n, w_d)
    old = {k: v for k, v in by_n.config.items() if k != "scale_by"}  # a file from before
    assert EncoderDecoder.from_config(old).scale_by == "key_size"
