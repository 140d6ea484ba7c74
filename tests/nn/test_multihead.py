"""Multi-head attention: central-difference gradient checks, parity with
``torch.nn.MultiheadAttention(batch_first=True)`` and bad input.

Run with ``-s`` to see the largest relative error met in this module.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

from gradcheck import assert_grad_close, max_rel_error, numeric_grad
from pyplay.nn.multihead import MultiheadAttention

E, H, B, TQ, TK = 6, 2, 2, 3, 4
KPM = np.array([[False, False, True, False], [False, True, True, True]])  # True = ignore
WORST: dict[str, float] = {}


def _randomise(m: MultiheadAttention, seed: int) -> MultiheadAttention:
    """Non-zero biases so that their gradients and parity mean something."""
    rng = np.random.default_rng(seed)
    for p in m.params.values():
        p[...] = 0.5 * rng.standard_normal(p.shape)
    return m


# (kdim, vdim, bias, key_padding_mask, attn_mask kind)
CONFIGS: dict[str, tuple[int | None, int | None, bool, bool, str | None]] = {
    "cross": (None, None, True, False, None),
    "cross-kpm": (None, None, True, True, None),
    "cross-kpm-mask2d": (None, None, True, True, "2d"),
    "cross-mask3d": (None, None, True, False, "3d"),
    "kdim-vdim-kpm": (5, 3, True, True, None),
    "nobias": (None, None, False, True, None),
    "kdim-nobias": (4, 7, False, False, "2d"),
}


def _attn_mask(kind: str | None, Tq: int, Tk: int) -> np.ndarray | None:
    """torch's convention: True = may not attend; never a whole row."""
    if kind is None:
        return None
    rng = np.random.default_rng(3)
    mask = rng.random((Tq, Tk) if kind == "2d" else (B * H, Tq, Tk)) < 0.4
    mask[..., 0] = False
    return mask


def _case(name: str, seed: int) -> tuple[MultiheadAttention, list[np.ndarray], dict[str, Any]]:
    kdim, vdim, bias, kpm, am = CONFIGS[name]
    m = _randomise(MultiheadAttention(E, H, bias, kdim, vdim, dtype=np.float64, rng=seed), seed)
    rng = np.random.default_rng(seed + 1)
    xs = [rng.standard_normal(s) for s in ((B, TQ, E), (B, TK, m.kdim), (B, TK, m.vdim))]
    masks = {"key_padding_mask": KPM if kpm else None, "attn_mask": _attn_mask(am, TQ, TK)}
    return m, xs, masks


# ------------------------------------------------------------------------- gradient checks
@pytest.mark.parametrize("name", list(CONFIGS))
def test_cross_attention_gradients(name: str) -> None:
    m, (xq, xk, xv), masks = _case(name, 1)
    R = np.random.default_rng(2).standard_normal((B, TQ, E))

    def loss() -> float:
        return float((m.forward(xq, xk, xv, **masks)[0] * R).sum())

    _, _, cache = m.forward(xq, xk, xv, **masks)
    dq, dk, dv, grads = m.backward(R, cache)
    assert list(grads) == list(m.params)
    for what, x, d in (("dquery", xq, dq), ("dkey", xk, dk), ("dvalue", xv, dv)):
        assert_grad_close(d, numeric_grad(loss, x), f"{name} {what}")
    for pname, p in m.params.items():
        assert_grad_close(grads[pname], numeric_grad(loss, p), f"{name} {pname}")
    if masks["key_padding_mask"] is not None:  # ignored keys and values get no gradient
        assert np.all(dk[KPM] == 0.0) and np.all(dv[KPM] == 0.0)


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_self_attention_gradients_sum_over_the_three_inputs(causal: bool) -> None:
    m = _randomise(MultiheadAttention(E, 3, dtype=np.float64, rng=4), 4)
    x = np.random.default_rng(5).standard_normal((B, TK, E))
    R = np.random.default_rng(6).standard_normal((B, TK, E))
    am = ~np.tri(TK, dtype=bool) if causal else None  # True above the diagonal: the future
    kw = {"key_padding_mask": KPM, "attn_mask": am}

    def loss() -> float:
        return float((m.forward(x, x, x, **kw)[0] * R).sum())

    _, _, cache = m.forward(x, x, x, **kw)
    dq, dk, dv, grads = m.backward(R, cache)
    assert_grad_close(dq + dk + dv, numeric_grad(loss, x), "dx (summed)")
    assert not np.allclose(dq, dq + dk + dv)  # each path contributes
    for pname, p in m.params.items():
        assert_grad_close(grads[pname], numeric_grad(loss, p), pname)


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


def _torch_twin(m: MultiheadAttention) -> Any:
    torch = pytest.importorskip("torch")
    kdim = None if m.kdim == m.embed_dim else m.kdim
    vdim = None if m.vdim == m.embed_dim else m.vdim
    t = torch.nn.MultiheadAttention(
        m.embed_dim,
        m.num_heads,
        bias="out_proj.bias" in m.params,
        kdim=kdim,
        vdim=vdim,
        batch_first=True,
        dtype=torch.float64,
    )
    state = t.state_dict()
    assert list(state) == list(m.params)  # names and order as torch
    for name, value in state.items():
        assert tuple(value.shape) == m.params[name].shape
    t.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in m.params.items()})
    return t


PARITY = [(n, False) for n in CONFIGS] + [(n, True) for n in CONFIGS if "kdim" not in n]


@pytest.mark.parametrize(
    ("name", "self_attention"), PARITY, ids=[n + ("-self" if s else "") for n, s in PARITY]
)
def test_matches_torch(name: str, self_attention: bool) -> None:
    torch = pytest.importorskip("torch")
    m, (xq, xk, xv), masks = _case(name, 7)
    if self_attention:
        xk = xv = xq = np.random.default_rng(8).standard_normal((B, TK, E))
        masks["attn_mask"] = _attn_mask(CONFIGS[name][4], TK, TK)
    t = _torch_twin(m)
    R = np.random.default_rng(9).standard_normal((B, xq.shape[1], E))
    out, w_avg, _ = m.forward(xq, xk, xv, **masks)
    _, w_heads, cache = m.forward(xq, xk, xv, **masks, average_attn_weights=False)
    dq, dk, dv, grads = m.backward(R, cache)

    tensors = [torch.tensor(x, requires_grad=True) for x in (xq, xk, xv)]
    if self_attention:
        tensors = [tensors[0]] * 3  # one tensor: torch sums the three gradients
    tmasks = {k: None if v is None else torch.tensor(v) for k, v in masks.items()}
    ot, wt_avg = t(*tensors, **tmasks)
    _, wt_heads = t(*tensors, **tmasks, average_attn_weights=False)
    (ot * torch.tensor(R)).sum().backward()

    kind = "self" if self_attention else "cross"
    close(out, ot, "out", kind)
    close(w_avg, wt_avg, "averaged weights", "weights")
    close(w_heads, wt_heads, "per-head weights", "weights")
    assert w_heads.shape == (B, H, xq.shape[1], xk.shape[1])
    if self_attention:
        close(dq + dk + dv, tensors[0].grad, "dx", kind)
    else:
        for what, ours, x in zip(("dquery", "dkey", "dvalue"), (dq, dk, dv), tensors, strict=True):
            close(ours, x.grad, what, kind)
    for pname, p in t.named_parameters():
        close(grads[pname], p.grad, pname, kind)


def test_initialisation_like_torch() -> None:
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)  # torch's draw the same whatever ran before (in the same process)
    for kdim, vdim in ((None, None), (5, 3)):
        m = MultiheadAttention(16, 4, kdim=kdim, vdim=vdim, rng=0)
        fresh = torch.nn.MultiheadAttention(16, 4, kdim=kdim, vdim=vdim, batch_first=True)
        for name, theirs in fresh.state_dict().items():
            ours = m.params[name]
            assert ours.dtype == np.float32 and ours.shape == tuple(theirs.shape)
            bound = float(theirs.abs().max())  # torch's own draw, close to its bound
            if "bias" in name:
                assert np.all(ours == 0.0) and bound == 0.0
            else:
                assert 0.8 * bound < np.abs(ours).max() <= 1.25 * bound, name


def test_need_weights_and_float32() -> None:
    m = MultiheadAttention(E, H, rng=3)
    x = np.random.default_rng(0).standard_normal((B, TQ, E))
    out, w, cache = m.forward(x, x, x, need_weights=False)
    assert w is None and out.dtype == np.float32 and out.shape == (B, TQ, E)
    grads = m.backward(np.ones_like(out), cache)
    assert all(g.dtype == np.float32 for g in (*grads[:3], *grads[3].values()))
    hi = MultiheadAttention(E, H, dtype=np.float64, rng=3)
    out_hi, _, _ = hi.forward(x, x, x, key_padding_mask=KPM[:, :TQ])
    out_lo, _, _ = m.forward(x, x, x, key_padding_mask=KPM[:, :TQ])
    assert max_rel_error(out_lo, out_hi) < 1e-5


# ------------------------------------------------------------------------------- bad input
def _raises(exc: type[Exception], name: str, fn: Callable[[], Any]) -> None:
    with pytest.raises(exc) as info:
        fn()
    message = str(info.value)
    assert name in message, f"{name!r} not named in: {message}"
    assert "got" in message, f"the given value is not reported in: {message}"


@pytest.mark.parametrize(
    ("kwargs", "exc", "name"),
    [
        ({"embed_dim": 6, "num_heads": 4}, ValueError, "embed_dim"),
        ({"embed_dim": 0, "num_heads": 1}, ValueError, "embed_dim"),
        ({"embed_dim": 6, "num_heads": 0}, ValueError, "num_heads"),
        ({"embed_dim": 6, "num_heads": 2.0}, TypeError, "num_heads"),
        ({"embed_dim": 6, "num_heads": 2, "bias": 1}, TypeError, "bias"),
        ({"embed_dim": 6, "num_heads": 2, "kdim": 0}, ValueError, "kdim"),
        ({"embed_dim": 6, "num_heads": 2, "vdim": "3"}, TypeError, "vdim"),
        ({"embed_dim": 6, "num_heads": 2, "dtype": np.int64}, TypeError, "dtype"),
        ({"embed_dim": 6, "num_heads": 2, "rng": -1}, ValueError, "rng"),
    ],
    ids=[
        "divisible",
        "embed_dim",
        "num_heads",
        "num_heads-type",
        "bias",
        "kdim",
        "vdim",
        "dtype",
        "rng",
    ],
)
def test_bad_constructor_arguments(kwargs: dict[str, Any], exc: type[Exception], name: str) -> None:
    _raises(exc, name, lambda: MultiheadAttention(**kwargs))


def test_bad_forward_input() -> None:
    m, (xq, xk, xv), _ = _case("kdim-vdim-kpm", 10)
    f = m.forward
    _raises(ValueError, "query", lambda: f(xq[0], xk, xv))
    _raises(ValueError, "key", lambda: f(xq, xk[0], xv))
    _raises(ValueError, "value", lambda: f(xq, xk, xv[..., None]))
    _raises(ValueError, "query", lambda: f(xq[..., :4], xk, xv))  # embed_dim
    _raises(ValueError, "key", lambda: f(xq, xk[..., :4], xv))  # kdim
    _raises(ValueError, "value", lambda: f(xq, xk, xv[..., :2]))  # vdim
    _raises(ValueError, "key", lambda: f(xq, xk[:1], xv))  # batch
    _raises(ValueError, "value", lambda: f(xq, xk, xv[:, :2]))  # steps
    _raises(TypeError, "key_padding_mask", lambda: f(xq, xk, xv, KPM.astype(float)))
    _raises(ValueError, "key_padding_mask", lambda: f(xq, xk, xv, KPM[:, :3]))
    _raises(ValueError, "key_padding_mask", lambda: f(xq, xk, xv, KPM[0]))
    _raises(TypeError, "attn_mask", lambda: f(xq, xk, xv, attn_mask=np.zeros((TQ, TK))))
    _raises(ValueError, "attn_mask", lambda: f(xq, xk, xv, attn_mask=np.zeros((TK, TQ), bool)))
    _raises(ValueError, "attn_mask", lambda: f(xq, xk, xv, attn_mask=np.zeros((B, TQ, TK), bool)))
    _raises(TypeError, "need_weights", lambda: f(xq, xk, xv, need_weights=None))
    _raises(TypeError, "average_attn_weights", lambda: f(xq, xk, xv, average_attn_weights=0))
    every = np.zeros((B, TK), bool)
    every[1] = True
    _raises(ValueError, "key_padding_mask", lambda: f(xq, xk, xv, every))
    row = np.zeros((TQ, TK), bool)
    row[2, 0] = True  # with KPM, query 2 of sequence 1 sees nothing
    _raises(ValueError, "key_padding_mask and attn_mask", lambda: f(xq, xk, xv, KPM, attn_mask=row))
    _, _, cache = f(xq, xk, xv)
    _raises(ValueError, "dout", lambda: m.backward(np.ones((B, TQ, 4)), cache))
