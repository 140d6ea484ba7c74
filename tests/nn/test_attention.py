"""Attention scorers and the scaled dot-product attend step: central-difference gradient checks,
parity with PyTorch (torch's own function, and direct autograd formulas for the other scores),
mask properties and bad input.

Run with ``-s`` to see the largest relative error met in this module.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradcheck import assert_grad_close, max_rel_error, numeric_grad
from pyplay.nn.attention import (
    SCORERS,
    AdditiveAttention,
    CosineAttention,
    DotAttention,
    GeneralAttention,
    LocationAttention,
    ScaledDotAttention,
)
from pyplay.nn.sdpa import scaled_dot_product_attention, scaled_dot_product_attention_backward

B, TQ, TK, DQ, DK, DV, A = 2, 3, 4, 3, 5, 2, 4
MASK = np.array([[True, True, False, True], [True, False, False, False]])  # (B, Tk)
WORST: dict[str, float] = {}


def build(kind: str, dtype: Any = np.float64, seed: int = 1) -> Any:
    """A scorer and its key size (dot-like scores need Dk = Dq)."""
    if kind == "general":
        return GeneralAttention(DQ, DK, dtype=dtype, rng=seed), DK
    if kind == "additive":
        return AdditiveAttention(DQ, DK, A, dtype=dtype, rng=seed), DK
    if kind == "additive-nobias":
        return AdditiveAttention(DQ, DK, A, bias=False, dtype=dtype, rng=seed), DK
    if kind == "location":
        return LocationAttention(DQ, max_len=TK + 2, dtype=dtype, rng=seed), DK
    if kind == "cosine":
        return CosineAttention(beta=2.5, dtype=dtype), DQ
    return SCORERS[kind](dtype=dtype), DQ


KINDS = ["dot", "scaled_dot", "general", "additive", "additive-nobias", "cosine", "location"]


def inputs(seed: int, Dk: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in ((B, TQ, DQ), (B, TK, Dk), (B, TK, DV))]


# ------------------------------------------------------------------------- gradient checks
@pytest.mark.parametrize("masked", [False, True], ids=["full", "mask"])
@pytest.mark.parametrize("kind", KINDS)
def test_scorer_gradients(kind: str, masked: bool) -> None:
    layer, Dk = build(kind)
    Q, K, V = inputs(3, Dk)
    mask = MASK if masked else None
    rng = np.random.default_rng(4)
    R, Rw = rng.standard_normal((B, TQ, DV)), rng.standard_normal((B, TQ, TK))

    def loss() -> float:
        c, w, _ = layer.forward(Q, K, V, mask=mask)
        return float((c * R).sum() + (w * Rw).sum())  # a loss on the weights too

    _, _, cache = layer.forward(Q, K, V, mask=mask)
    dQ, dK, dV, grads = layer.backward(R, cache, dweights=Rw)
    assert list(grads) == list(layer.params)
    for name, x, d in (("dQ", Q, dQ), ("dK", K, dK), ("dV", V, dV)):
        assert_grad_close(d, numeric_grad(loss, x), f"{kind} {name}")
    for name, p in layer.params.items():
        assert_grad_close(grads[name], numeric_grad(loss, p), f"{kind} {name}")
    if masked:  # masked keys and values get no gradient (their content is never used)
        for d in (dK, dV):
            assert np.all(d[~MASK] == 0.0)


def test_lengths_equal_a_mask() -> None:
    layer, Dk = build("additive")
    Q, K, V = inputs(5, Dk)
    lengths = np.array([4, 2])
    by_mask = layer.forward(Q, K, V, mask=np.arange(TK) < lengths[:, None])
    by_lengths = layer.forward(Q, K, V, lengths=lengths)
    np.testing.assert_array_equal(by_mask[0], by_lengths[0])
    np.testing.assert_array_equal(by_mask[1], by_lengths[1])


def test_per_query_mask_gradients() -> None:
    """A (B, Tq, Tk) mask, e.g. causal self-attention through a scorer."""
    layer = GeneralAttention(DQ, DQ, dtype=np.float64, rng=2)
    X = np.random.default_rng(6).standard_normal((B, TQ, DQ))
    mask = np.broadcast_to(np.tri(TQ, dtype=bool), (B, TQ, TQ))
    R = np.random.default_rng(7).standard_normal((B, TQ, DQ))

    def loss() -> float:
        return float((layer.forward(X, X, X, mask=mask)[0] * R).sum())

    _, w, cache = layer.forward(X, X, X, mask=mask)
    assert np.all(w[:, np.triu_indices(TQ, 1)[0], np.triu_indices(TQ, 1)[1]] == 0.0)
    dQ, dK, dV, grads = layer.backward(R, cache)
    assert_grad_close(dQ + dK + dV, numeric_grad(loss, X), "self-attention dX")
    assert_grad_close(grads["weight"], numeric_grad(loss, layer.params["weight"]), "weight")


def _sdpa_case(seed: int, shape: tuple[int, ...], Tq: int, Tk: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((*shape, T, d)) for T, d in ((Tq, 4), (Tk, 4), (Tk, 3))]


SDPA_CASES = ["none", "key-padding", "2d", "full", "causal", "causal+padding"]


def sdpa_mask(case: str, Tq: int, Tk: int) -> tuple[np.ndarray | None, bool]:
    """A bool mask (True = takes part) broadcasting to (2, 3, Tq, Tk), and is_causal."""
    rng = np.random.default_rng(Tq * Tk)
    mask: np.ndarray | None = None
    if case == "key-padding":
        mask = np.ones((2, 1, 1, Tk), bool)  # (B, 1, 1, Tk)
        mask[0, ..., 2] = False
        mask[1, ..., 1:] = False
    elif case in ("2d", "full"):
        mask = rng.random((Tq, Tk) if case == "2d" else (2, 3, Tq, Tk)) < 0.5
        mask[..., 0] = True  # no query without a key
    elif case == "causal+padding":
        mask = np.arange(Tk) != 2  # (Tk,)
    return mask, case.startswith("causal")


@pytest.mark.parametrize("case", SDPA_CASES)
def test_sdpa_gradients(case: str) -> None:
    mask, causal = sdpa_mask(case, 4, 5)
    q, k, v = _sdpa_case(8, (2, 3), 4, 5)  # (B, heads, T, d)
    R = np.random.default_rng(9).standard_normal((2, 3, 4, 3))
    Rw = np.random.default_rng(10).standard_normal((2, 3, 4, 5))

    def loss() -> float:
        out, w, _ = scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal)
        return float((out * R).sum() + (w * Rw).sum())

    _, _, cache = scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal)
    grads = scaled_dot_product_attention_backward(R, cache, dweights=Rw)
    for name, x, d in zip(("dq", "dk", "dv"), (q, k, v), grads, strict=True):
        assert_grad_close(d, numeric_grad(loss, x), f"{case} {name}")


# --------------------------------------------------------------------------- torch parity
TOL = 1e-6


@pytest.fixture(scope="module", autouse=True)
def _report_worst() -> Iterator[None]:
    yield
    for kind, err in sorted(WORST.items()):
        print(f"\n[parity] max relative error, {kind}: {err:.2e}")


def close(ours: np.ndarray, theirs: Any, what: str, kind: str) -> None:
    ref = theirs.detach().numpy() if hasattr(theirs, "detach") else np.asarray(theirs)
    err = max_rel_error(ours, ref)
    WORST[kind] = max(WORST.get(kind, 0.0), err)
    assert err < TOL, f"{what}: max relative error {err:.2e}"


@pytest.mark.parametrize("scale", [None, 0.3])
@pytest.mark.parametrize("case", SDPA_CASES[:-1])  # torch refuses attn_mask with is_causal
def test_sdpa_matches_torch(case: str, scale: float | None) -> None:
    torch = pytest.importorskip("torch")
    for Tq, Tk in ((4, 5), (6, 3)):  # the causal mask is top-left aligned in both shapes
        m, causal = sdpa_mask(case, Tq, Tk)
        q, k, v = _sdpa_case(11 + Tq, (2, 3), Tq, Tk)
        R = np.random.default_rng(12).standard_normal((2, 3, Tq, 3))
        out, w, cache = scaled_dot_product_attention(q, k, v, m, causal, scale)
        dq, dk, dv = scaled_dot_product_attention_backward(R, cache)
        qt, kt, vt = (torch.tensor(x, requires_grad=True) for x in (q, k, v))
        mt = None if m is None else torch.tensor(m)
        ot = torch.nn.functional.scaled_dot_product_attention(
            qt, kt, vt, attn_mask=mt, is_causal=causal, scale=scale
        )
        (ot * torch.tensor(R)).sum().backward()
        close(out, ot, "out", "sdpa")
        for name, ours, t in (("dq", dq, qt), ("dk", dk, kt), ("dv", dv, vt)):
            close(ours, t.grad, name, "sdpa")
        if m is not None:
            assert np.all(w[~np.broadcast_to(m, w.shape)] == 0.0)


def _torch_scores(kind: str, P: dict[str, Any], Q: Any, K: Any) -> Any:
    """Each score written directly from its formula in torch."""
    torch = pytest.importorskip("torch")
    if kind == "dot":
        return Q @ K.transpose(1, 2)
    if kind == "scaled_dot":
        return Q @ K.transpose(1, 2) / np.sqrt(Q.shape[2])
    if kind == "general":
        return torch.einsum("bqd,de,bke->bqk", Q, P["weight"], K)
    if kind.startswith("additive"):
        pre = (Q @ P["weight_query"].T)[:, :, None] + (K @ P["weight_key"].T)[:, None]
        if "bias" in P:
            pre = pre + P["bias"]
        return torch.tanh(pre) @ P["v"]
    if kind == "cosine":
        cos = torch.nn.functional.cosine_similarity(Q[:, :, None], K[:, None], dim=-1)
        return 2.5 * cos
    return Q @ P["weight"][: K.shape[1]].T  # location


@pytest.mark.parametrize("masked", [False, True], ids=["full", "mask"])
@pytest.mark.parametrize("kind", KINDS)
def test_scorer_matches_torch_formula(kind: str, masked: bool) -> None:
    torch = pytest.importorskip("torch")
    layer, Dk = build(kind, seed=7)
    Q, K, V = inputs(13, Dk)
    mask = MASK if masked else None
    rng = np.random.default_rng(14)
    R, Rw = rng.standard_normal((B, TQ, DV)), rng.standard_normal((B, TQ, TK))
    c, w, cache = layer.forward(Q, K, V, mask=mask)
    dQ, dK, dV, grads = layer.backward(R, cache, dweights=Rw)

    P = {k: torch.tensor(v, requires_grad=True) for k, v in layer.params.items()}
    Qt, Kt, Vt = (torch.tensor(x, requires_grad=True) for x in (Q, K, V))
    e = _torch_scores(kind, P, Qt, Kt)
    if masked:
        e = e.masked_fill(~torch.tensor(MASK)[:, None, :], float("-inf"))
    wt = torch.softmax(e, dim=-1)
    ct = wt @ Vt
    ((ct * torch.tensor(R)).sum() + (wt * torch.tensor(Rw)).sum()).backward()
    close(c, ct, "context", kind)
    close(w, wt, "weights", kind)
    for name, ours, t in (("dQ", dQ, Qt), ("dK", dK, Kt), ("dV", dV, Vt)):
        close(ours, np.zeros_like(ours) if t.grad is None else t.grad, name, kind)
    for name, p in P.items():
        close(grads[name], p.grad, name, kind)


# --------------------------------------------------------------------------- mask properties
@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(
    kind=st.sampled_from(["dot", "scaled_dot", "general", "additive", "cosine", "location"]),
    b=st.integers(1, 4),
    tq=st.integers(1, 4),
    tk=st.integers(1, 6),
    seed=st.integers(0, 2**16),
    dtype=st.sampled_from([np.float32, np.float64]),
    scale=st.sampled_from([0.1, 1.0, 50.0]),  # 50: scores far beyond exp's range
    per_query=st.booleans(),
)
def test_weights_sum_to_one_and_vanish_where_masked(
    kind: str, b: int, tq: int, tk: int, seed: int, dtype: Any, scale: float, per_query: bool
) -> None:
    rng = np.random.default_rng(seed)
    layer = {
        "dot": lambda: DotAttention(dtype=dtype),
        "scaled_dot": lambda: ScaledDotAttention(dtype=dtype),
        "general": lambda: GeneralAttention(3, 2, dtype=dtype, rng=seed),
        "additive": lambda: AdditiveAttention(3, 2, 4, dtype=dtype, rng=seed),
        "cosine": lambda: CosineAttention(beta=scale, dtype=dtype),
        "location": lambda: LocationAttention(3, 6, dtype=dtype, rng=seed),
    }[kind]()
    Dk = 3 if kind in ("dot", "scaled_dot", "cosine") else 2
    Q = scale * rng.standard_normal((b, tq, 3))
    K = scale * rng.standard_normal((b, tk, Dk))
    V = rng.standard_normal((b, tk, 2))
    mask = rng.random((b, tq, tk) if per_query else (b, tk)) < 0.5
    mask[..., rng.integers(tk)] = True  # at least one key per row
    c, w, cache = layer.forward(Q, K, V, mask=mask)
    assert c.dtype == w.dtype == dtype and w.shape == (b, tq, tk)
    np.testing.assert_allclose(w.sum(axis=2), 1.0, rtol=1e-5)
    full = np.broadcast_to(mask if per_query else mask[:, None, :], w.shape)
    assert np.all(w[~full] == 0.0) and np.all(w >= 0.0)
    grads = layer.backward(np.ones_like(c), cache)
    for g in (*grads[:3], *grads[3].values()):
        assert g.dtype == dtype and np.isfinite(g).all()
    # changing what sits at masked keys changes nothing
    K2, V2 = K.copy(), V.copy()
    hidden = ~mask.any(axis=1) if per_query else ~mask  # keys no query may see
    K2[hidden] = 1e3
    V2[hidden] = -7.0
    c2, w2, _ = layer.forward(Q, K2, V2, mask=mask)
    np.testing.assert_array_equal(w2, w)
    np.testing.assert_array_equal(c2, c)


def test_huge_masked_scores_do_not_overflow() -> None:
    layer = DotAttention(dtype=np.float64)
    Q = np.ones((1, 1, 2))
    K = np.array([[[1.0, 0.0], [1e300, 1e300]]])  # the masked score overflows if exp'd
    _, w, _ = layer.forward(Q, K, np.ones((1, 2, 1)), mask=np.array([[True, False]]))
    np.testing.assert_array_equal(w, [[[1.0, 0.0]]])


def test_cosine_zero_vectors_give_uniform_weights_without_nan() -> None:
    layer = CosineAttention(beta=3.0, dtype=np.float64)
    Q = np.zeros((1, 2, 3))
    Q[0, 1] = [1.0, 2.0, 0.0]
    K = np.array([[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    c, w, cache = layer.forward(Q, K, np.eye(3)[None], mask=None)
    np.testing.assert_allclose(w[0, 0], 1 / 3)  # zero query: every cosine 0
    e = 3.0 * np.array([0.0, 1.0, 2.0]) / np.sqrt(5.0)  # zero key: cosine 0
    np.testing.assert_allclose(w[0, 1], np.exp(e) / np.exp(e).sum())
    grads = layer.backward(np.ones_like(c), cache)
    assert all(np.isfinite(g).all() for g in grads[:3])


def test_cosine_gradients_below_eps() -> None:
    """Vectors shorter than eps are divided by eps (linear there): the other branch of the
    normalisation's backward."""
    layer = CosineAttention(beta=4.0, eps=0.5, dtype=np.float64)
    Q, K, V = inputs(21, DQ)
    Q[0, 1] *= 0.3 / np.linalg.norm(Q[0, 1])
    K[1, 2] *= 0.2 / np.linalg.norm(K[1, 2])
    R = np.random.default_rng(22).standard_normal((B, TQ, DV))

    def loss() -> float:
        return float((layer.forward(Q, K, V)[0] * R).sum())

    dQ, dK, _, _ = layer.backward(R, layer.forward(Q, K, V)[2])
    assert_grad_close(dQ, numeric_grad(loss, Q), "dQ")
    assert_grad_close(dK, numeric_grad(loss, K), "dK")


def test_location_uses_the_first_rows_and_ignores_keys() -> None:
    layer = LocationAttention(DQ, max_len=6, dtype=np.float64, rng=3)
    Q, K, V = inputs(15, DK)
    _, w, _ = layer.forward(Q, K, V)
    _, w2, _ = layer.forward(Q, -K, V)
    np.testing.assert_array_equal(w, w2)
    e = Q @ layer.params["weight"][:TK].T
    np.testing.assert_allclose(w, np.exp(e) / np.exp(e).sum(axis=2, keepdims=True))


def test_float32_agrees_with_float64() -> None:
    lo, Dk = build("additive", dtype=np.float32, seed=5)
    hi, _ = build("additive", seed=5)
    Q, K, V = inputs(16, Dk)
    c_lo, w_lo, cache_lo = lo.forward(Q.astype(np.float32), K, V, mask=MASK)
    c_hi, w_hi, cache_hi = hi.forward(Q, K, V, mask=MASK)
    assert c_lo.dtype == w_lo.dtype == np.float32
    assert max_rel_error(c_lo, c_hi) < 1e-5 and max_rel_error(w_lo, w_hi) < 1e-5
    R = np.ones_like(c_hi)
    g_lo, g_hi = lo.backward(R, cache_lo), hi.backward(R, cache_hi)
    for a, b in zip((*g_lo[:3], *g_lo[3].values()), (*g_hi[:3], *g_hi[3].values()), strict=True):
        assert a.dtype == np.float32 and max_rel_error(a, b) < 1e-4
    q, k, v = _sdpa_case(20, (2, 3), 4, 5)
    out_hi, _, c_hi = scaled_dot_product_attention(q, k, v, is_causal=True)
    f32 = [x.astype(np.float32) for x in (q, k, v)]
    out_lo, w_lo, c_lo = scaled_dot_product_attention(*f32, is_causal=True)
    assert out_lo.dtype == w_lo.dtype == np.float32 and max_rel_error(out_lo, out_hi) < 1e-5
    R = np.ones_like(out_hi)
    g_hi = scaled_dot_product_attention_backward(R, c_hi)
    for a, b in zip(scaled_dot_product_attention_backward(R, c_lo), g_hi, strict=True):
        assert a.dtype == np.float32 and max_rel_error(a, b) < 1e-4


# ------------------------------------------------------------------------------- bad input
def _raises(exc: type[Exception], name: str, fn: Callable[[], Any]) -> None:
    with pytest.raises(exc) as info:
        fn()
    message = str(info.value)
    assert name in message, f"{name!r} not named in: {message}"
    assert "got" in message, f"the given value is not reported in: {message}"


def test_bad_scorer_input() -> None:
    Q, K, V = inputs(17, DK)
    gen, _ = build("general")
    dot = DotAttention(dtype=np.float64)
    _raises(ValueError, "query", lambda: gen.forward(Q[0], K, V))
    _raises(ValueError, "key", lambda: gen.forward(Q, K[0], V))
    _raises(ValueError, "value", lambda: gen.forward(Q, K, V[0]))
    _raises(ValueError, "key", lambda: gen.forward(Q, K[:1], V))  # batch
    _raises(ValueError, "value", lambda: gen.forward(Q, K, V[:, :2]))  # steps
    _raises(ValueError, "query", lambda: gen.forward(Q[..., :2], K, V))
    _raises(ValueError, "key", lambda: gen.forward(Q, K[..., :2], V))
    _raises(ValueError, "key", lambda: dot.forward(Q, K, V))  # Dk != Dq
    _raises(TypeError, "query", lambda: gen.forward("Q", K, V))
    _raises(ValueError, "query", lambda: gen.forward(Q * np.nan, K, V))
    loc = LocationAttention(DQ, max_len=2)
    _raises(ValueError, "max_len", lambda: loc.forward(Q, K, V))


def test_bad_masks() -> None:
    Q, K, V = inputs(18, DK)
    gen, _ = build("general")
    _raises(TypeError, "mask", lambda: gen.forward(Q, K, V, mask=MASK.astype(int)))
    _raises(ValueError, "mask", lambda: gen.forward(Q, K, V, mask=MASK[:, :3]))
    _raises(ValueError, "mask", lambda: gen.forward(Q, K, V, mask=MASK[0]))  # (Tk,)
    empty = MASK.copy()
    empty[1] = False
    _raises(ValueError, "mask", lambda: gen.forward(Q, K, V, mask=empty))
    _raises(ValueError, "lengths", lambda: gen.forward(Q, K, V, lengths=[4, 0]))
    _raises(ValueError, "lengths", lambda: gen.forward(Q, K, V, lengths=[4]))
    _raises(ValueError, "mask or lengths", lambda: gen.forward(Q, K, V, MASK, [4, 4]))
    _, _, cache = gen.forward(Q, K, V)
    _raises(ValueError, "dcontext", lambda: gen.backward(np.ones((B, TQ, 3)), cache))
    _raises(ValueError, "dweights", lambda: gen.backward(np.ones((B, TQ, DV)), cache, np.ones(3)))


def test_bad_sdpa_input() -> None:
    q, k, v = _sdpa_case(19, (2,), 4, 5)
    sdpa = scaled_dot_product_attention
    _raises(ValueError, "query", lambda: sdpa(q[0, 0], k, v))
    _raises(ValueError, "key", lambda: sdpa(q, k[..., :3], v))
    _raises(ValueError, "key", lambda: sdpa(q, k[:1], v))
    _raises(ValueError, "key", lambda: sdpa(q, k[0], v))
    _raises(ValueError, "value", lambda: sdpa(q, k, v[:, :2]))
    _raises(TypeError, "attn_mask", lambda: sdpa(q, k, v, attn_mask=np.ones((4, 5))))
    _raises(ValueError, "attn_mask", lambda: sdpa(q, k, v, attn_mask=np.ones((5, 4), bool)))
    empty = np.ones((4, 5), bool)
    empty[2] = False
    _raises(ValueError, "attn_mask", lambda: sdpa(q, k, v, attn_mask=empty))
    _raises(TypeError, "is_causal", lambda: sdpa(q, k, v, is_causal=1))
    _raises(ValueError, "scale", lambda: sdpa(q, k, v, scale=float("inf")))
    _, _, cache = sdpa(q, k, v)
    _raises(ValueError, "dout", lambda: scaled_dot_product_attention_backward(q, cache))


@pytest.mark.parametrize(
    ("make", "exc", "name"),
    [
        (lambda: GeneralAttention(0, 3), ValueError, "query_size"),
        (lambda: GeneralAttention(3, 2.0), TypeError, "key_size"),
        (lambda: AdditiveAttention(3, 3, 0), ValueError, "attn_size"),
        (lambda: AdditiveAttention(3, 3, 2, bias=1), TypeError, "bias"),
        (lambda: CosineAttention(beta=-1.0), ValueError, "beta"),
        (lambda: CosineAttention(eps=0.0), ValueError, "eps"),
        (lambda: LocationAttention(3, 0), ValueError, "max_len"),
        (lambda: ScaledDotAttention(dtype=np.int32), TypeError, "dtype"),
        (lambda: GeneralAttention(3, 3, rng="x"), TypeError, "rng"),
    ],
    ids=["query_size", "key_size", "attn_size", "bias", "beta", "eps", "max_len", "dtype", "rng"],
)
def test_bad_constructor_arguments(
    make: Callable[[], Any], exc: type[Exception], name: str
) -> None:
    _raises(exc, name, make)


def test_scorer_registry() -> None:
    assert SCORERS["concat"] is SCORERS["additive"] is AdditiveAttention
    assert set(SCORERS) == {
        "dot",
        "scaled_dot",
        "general",
        "additive",
        "concat",
        "cosine",
        "location",
    }
