"""Transformer layers and stacks: central-difference gradient checks, parity with
``torch.nn.TransformerEncoderLayer/DecoderLayer``, ``TransformerEncoder/Decoder`` and
``MultiheadAttention(is_causal)``, records, dropout and bad input.

Run with ``-s`` to see the largest relative error met in this module.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

from gradcheck import assert_grad_close, max_rel_error, numeric_grad
from pyplay.nn import (
    LayerNorm,
    MultiheadAttention,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)

E, H, F, B, T, S = 4, 2, 6, 2, 3, 3
KPM = np.array([[False, False, False], [False, False, True]])  # (B, T) True = padding
MKPM = np.array([[False, False, True], [False, False, False]])  # (B, S)
SRC_MASK = np.array([[False, True, False], [False, False, True], [True, False, False]])
MEM_MASK = np.array([[False, True, False], [True, False, False], [False, False, True]])  # (T, S)
WORST: dict[str, float] = {}

VARIANTS = list(itertools.product([False, True], ["relu", "gelu"]))
VARIANT_IDS = [f"{'pre' if nf else 'post'}-{act}" for nf, act in VARIANTS]


def _randomise(m: Any, seed: int) -> Any:
    """Non-trivial weights: biases non-zero, norm weights away from one."""
    rng = np.random.default_rng(seed)
    for name, p in m.params.items():
        base = 1.0 if "norm" in name and name.endswith("weight") else 0.0
        p[...] = base + 0.5 * rng.standard_normal(p.shape)
    return m


def _encoder(nf: bool, act: str, seed: int, **kw: Any) -> TransformerEncoderLayer:
    m = TransformerEncoderLayer(
        E, H, F, activation=act, norm_first=nf, dtype=np.float64, rng=seed, **kw
    )
    return _randomise(m, seed)


def _decoder(nf: bool, act: str, seed: int, **kw: Any) -> TransformerDecoderLayer:
    m = TransformerDecoderLayer(
        E, H, F, activation=act, norm_first=nf, dtype=np.float64, rng=seed, **kw
    )
    return _randomise(m, seed)


def _check_all(
    loss: Callable[[], float],
    inputs: dict[str, tuple[np.ndarray, np.ndarray]],
    params: dict[str, np.ndarray],
    grads: dict[str, np.ndarray],
    tag: str,
) -> None:
    assert list(grads) == list(params)
    for what, (x, d) in inputs.items():
        assert_grad_close(d, numeric_grad(loss, x), f"{tag} {what}")
    for pname, p in params.items():
        assert_grad_close(grads[pname], numeric_grad(loss, p), f"{tag} {pname}")


# ------------------------------------------------------------------------- gradient checks
@pytest.mark.parametrize(("norm_first", "act"), VARIANTS, ids=VARIANT_IDS)
def test_encoder_layer_gradients(norm_first: bool, act: str) -> None:
    m = _encoder(norm_first, act, 1)
    x = np.random.default_rng(2).standard_normal((B, T, E))
    R = np.random.default_rng(3).standard_normal((B, T, E))
    kw = {"src_mask": SRC_MASK, "src_key_padding_mask": KPM, "is_causal": norm_first}

    def loss() -> float:
        return float((m.forward(x, **kw)[0] * R).sum())

    _, cache = m.forward(x, **kw)
    dx, grads = m.backward(R, cache)
    _check_all(loss, {"dsrc": (x, dx)}, m.params, grads, f"encoder {norm_first} {act}")


@pytest.mark.slow
@pytest.mark.parametrize(("norm_first", "act"), VARIANTS, ids=VARIANT_IDS)
def test_decoder_layer_gradients(norm_first: bool, act: str) -> None:
    m = _decoder(norm_first, act, 4)
    rng = np.random.default_rng(5)
    x, mem, R = (rng.standard_normal(s) for s in ((B, T, E), (B, S, E), (B, T, E)))
    kw = {
        "tgt_mask": None if norm_first else SRC_MASK,
        "memory_mask": MEM_MASK,
        "tgt_key_padding_mask": KPM,
        "memory_key_padding_mask": MKPM,
        "tgt_is_causal": True,
    }

    def loss() -> float:
        return float((m.forward(x, mem, **kw)[0] * R).sum())

    _, cache = m.forward(x, mem, **kw)
    dx, dmem, grads = m.backward(R, cache)
    inputs = {"dtgt": (x, dx), "dmemory": (mem, dmem)}
    _check_all(loss, inputs, m.params, grads, f"decoder {norm_first} {act}")


@pytest.mark.slow
def test_gradients_without_bias_and_through_dropout() -> None:
    """bias=False drops every bias (torch's layout); in training, dropout's masks are replayed
    by reseeding so that the loss is a fixed function of the weights."""
    m = _decoder(True, "gelu", 6, bias=False, dropout=0.3)
    assert not any(name.endswith("bias") for name in m.params)
    rng = np.random.default_rng(7)
    x, mem, R = (rng.standard_normal(s) for s in ((B, T, E), (B, S, E), (B, T, E)))

    def run() -> tuple[np.ndarray, Any]:
        gen = np.random.default_rng(8)
        for d in (m.dropout, m.dropout1, m.dropout2, m.dropout3):
            d._rng = gen
        return m.forward(x, mem, tgt_is_causal=True)

    def loss() -> float:
        return float((run()[0] * R).sum())

    out, cache = run()
    eval_out, _ = m.forward(x, mem, tgt_is_causal=True, training=False)
    assert not np.allclose(out, eval_out)  # dropout acted
    dx, dmem, grads = m.backward(R, cache)
    _check_all(loss, {"dtgt": (x, dx), "dmemory": (mem, dmem)}, m.params, grads, "dropout")


@pytest.mark.slow
@pytest.mark.parametrize("norm_first", [False, True], ids=["post", "pre"])
def test_stack_gradients(norm_first: bool) -> None:
    enc = _randomise(
        TransformerEncoder(E, H, 2, F, activation="gelu", norm_first=norm_first, norm=True,
                           dtype=np.float64, rng=9), 9,
    )  # fmt: skip
    dec = _randomise(
        TransformerDecoder(E, H, 2, F, norm_first=norm_first, norm=norm_first,
                           dtype=np.float64, rng=10), 10,
    )  # fmt: skip
    rng = np.random.default_rng(11)
    src, tgt, R = (rng.standard_normal(s) for s in ((B, S, E), (B, T, E), (B, T, E)))

    def out() -> tuple[np.ndarray, Any, Any]:
        mem, c_enc = enc.forward(src, src_key_padding_mask=MKPM)
        y, c_dec = dec.forward(tgt, mem, memory_key_padding_mask=MKPM, tgt_is_causal=True)
        return y, c_enc, c_dec

    def loss() -> float:
        return float((out()[0] * R).sum())

    _, c_enc, c_dec = out()
    dtgt, dmem, g_dec = dec.backward(R, c_dec)
    dsrc, g_enc = enc.backward(dmem, c_enc)
    assert list(g_enc) == list(enc.params) and list(g_dec) == list(dec.params)
    assert_grad_close(dtgt, numeric_grad(loss, tgt), "dtgt")
    assert_grad_close(dsrc, numeric_grad(loss, src), "dsrc")
    # every parameter along a random direction V: <grad, V> = (L(p + hV) - L(p - hV)) / 2h
    rng = np.random.default_rng(12)
    for pname, p, g in [(f"enc.{k}", enc.params[k], g_enc[k]) for k in enc.params] + [
        (f"dec.{k}", dec.params[k], g_dec[k]) for k in dec.params
    ]:
        V, old = rng.standard_normal(p.shape), p.copy()
        p[...] = old + 1e-6 * V
        up = loss()
        p[...] = old - 1e-6 * V
        down = loss()
        p[...] = old
        numeric = np.array((up - down) / 2e-6)
        assert_grad_close(np.array(float((g * V).sum())), numeric, pname)


def test_multihead_is_causal_gradients_and_mask() -> None:
    """is_causal alone is ``tril`` aligned top-left (Tq != Tk here), combined with the masks."""
    m = _randomise(MultiheadAttention(E, H, dtype=np.float64, rng=12), 12)
    rng = np.random.default_rng(13)
    q, kv, R = (rng.standard_normal(s) for s in ((B, T, E), (B, T + 1, E), (B, T, E)))
    kpm = np.zeros((B, T + 1), bool)
    kpm[1, 1] = True
    kw = {"key_padding_mask": kpm, "is_causal": True}

    def loss() -> float:
        return float((m.forward(q, kv, kv, **kw)[0] * R).sum())

    _, w, cache = m.forward(q, kv, kv, **kw, average_attn_weights=False)
    assert np.array_equal(cache.weights, w)  # per-head weights kept in the cache
    allowed = np.tri(T, T + 1, dtype=bool)[None, None] & ~kpm[:, None, None, :]
    assert np.all(w[~np.broadcast_to(allowed, w.shape)] == 0.0)
    assert np.all(w[np.broadcast_to(allowed, w.shape)] > 0.0)
    dq, dk, dv, grads = m.backward(R, cache)
    inputs = {"dquery": (q, dq), "dkv": (kv, dk + dv)}
    # key and value are one array here: their gradients add
    _check_all(loss, inputs, m.params, grads, "mha causal")


# --------------------------------------------------------------------------- torch parity
TOL = 1e-6


@pytest.fixture(scope="module", autouse=True)
def _report_worst() -> Iterator[None]:
    yield
    for kind, err in sorted(WORST.items()):
        print(f"\n[parity] max relative error, {kind}: {err:.2e}")


def close(ours: np.ndarray, theirs: Any, what: str, kind: str) -> None:
    err = max_rel_error(ours, theirs.detach().numpy())
    WORST[kind] = max(WORST.get(kind, 0.0), err)
    assert err < TOL, f"{what}: max relative error {err:.2e}"


def _load(t: Any, params: dict[str, np.ndarray]) -> Any:
    torch = pytest.importorskip("torch")
    state = t.state_dict()
    assert list(state) == list(params)  # torch's keys, in torch's order
    for name, value in state.items():
        assert tuple(value.shape) == params[name].shape, name
    t.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in params.items()})
    t.train()  # training mode, dropout 0: never torch's inference fast path
    return t


def _causal(n: int) -> Any:
    torch = pytest.importorskip("torch")
    return torch.tensor(~np.tri(n, dtype=bool))  # True above the diagonal: the future


def _compare(kind: str, ours: dict[str, np.ndarray], t: Any, tensors: dict[str, Any]) -> None:
    for what, x in tensors.items():
        close(ours[what], x.grad, what, kind)
    for pname, p in t.named_parameters():
        close(ours[pname], p.grad, pname, kind)


def _tensors(*arrays: np.ndarray) -> list[Any]:
    torch = pytest.importorskip("torch")
    return [torch.tensor(a, requires_grad=True) for a in arrays]


@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
@pytest.mark.parametrize(("norm_first", "act"), VARIANTS, ids=VARIANT_IDS)
def test_encoder_layer_matches_torch(norm_first: bool, act: str, bias: bool) -> None:
    torch = pytest.importorskip("torch")
    m = _encoder(norm_first, act, 20, bias=bias)
    t = _load(
        torch.nn.TransformerEncoderLayer(
            E, H, F, dropout=0.0, activation=act, norm_first=norm_first, bias=bias,
            batch_first=True, dtype=torch.float64,
        ),
        m.params,
    )  # fmt: skip
    rng = np.random.default_rng(21)
    x, R = rng.standard_normal((B, T, E)), rng.standard_normal((B, T, E))
    out, cache = m.forward(x, src_key_padding_mask=KPM, is_causal=True)
    dx, grads = m.backward(R, cache)
    (xt,) = _tensors(x)
    ot = t(xt, src_mask=_causal(T), src_key_padding_mask=torch.tensor(KPM), is_causal=True)
    (ot * torch.tensor(R)).sum().backward()
    close(out, ot, "out", "encoder layer")
    _compare("encoder layer", {**grads, "dsrc": dx}, t, {"dsrc": xt})


@pytest.mark.parametrize(("norm_first", "act"), VARIANTS, ids=VARIANT_IDS)
def test_decoder_layer_matches_torch(norm_first: bool, act: str) -> None:
    torch = pytest.importorskip("torch")
    m = _decoder(norm_first, act, 22)
    t = _load(
        torch.nn.TransformerDecoderLayer(
            E, H, F, dropout=0.0, activation=act, norm_first=norm_first, batch_first=True,
            dtype=torch.float64,
        ),
        m.params,
    )  # fmt: skip
    rng = np.random.default_rng(23)
    x, mem, R = (rng.standard_normal(s) for s in ((B, T, E), (B, S, E), (B, T, E)))
    masks = {"tgt_key_padding_mask": KPM, "memory_key_padding_mask": MKPM}
    out, cache = m.forward(x, mem, memory_mask=MEM_MASK, **masks, tgt_is_causal=True)
    dx, dmem, grads = m.backward(R, cache)
    xt, mt = _tensors(x, mem)
    tmasks = {k: torch.tensor(v) for k, v in masks.items()}
    ot = t(xt, mt, _causal(T), torch.tensor(MEM_MASK), **tmasks, tgt_is_causal=True)
    (ot * torch.tensor(R)).sum().backward()
    close(out, ot, "out", "decoder layer")
    _compare(
        "decoder layer", {**grads, "dtgt": dx, "dmemory": dmem}, t, {"dtgt": xt, "dmemory": mt}
    )


@pytest.mark.parametrize("final_norm", [False, True], ids=["no-norm", "norm"])
@pytest.mark.parametrize(("norm_first", "act"), VARIANTS, ids=VARIANT_IDS)
def test_stacks_match_torch(norm_first: bool, act: str, final_norm: bool) -> None:
    torch = pytest.importorskip("torch")
    kw: dict[str, Any] = {"activation": act, "norm_first": norm_first, "dtype": np.float64}
    enc = _randomise(TransformerEncoder(E, H, 2, F, norm=final_norm, rng=24, **kw), 24)
    dec = _randomise(TransformerDecoder(E, H, 2, F, norm=final_norm, rng=25, **kw), 25)
    tkw = {"dropout": 0.0, "activation": act, "norm_first": norm_first, "batch_first": True}

    def tnorm() -> Any:
        return torch.nn.LayerNorm(E, dtype=torch.float64) if final_norm else None

    t_layer = torch.nn.TransformerEncoderLayer(E, H, F, dtype=torch.float64, **tkw)
    t_enc = torch.nn.TransformerEncoder(t_layer, 2, norm=tnorm(), enable_nested_tensor=False)
    t_dlayer = torch.nn.TransformerDecoderLayer(E, H, F, dtype=torch.float64, **tkw)
    t_dec = torch.nn.TransformerDecoder(t_dlayer, 2, norm=tnorm())
    _load(t_enc, enc.params)
    _load(t_dec, dec.params)

    rng = np.random.default_rng(26)
    src, tgt, R = (rng.standard_normal(s) for s in ((B, S, E), (B, T, E), (B, T, E)))
    mem, c_enc = enc.forward(src, src_key_padding_mask=MKPM)
    out, c_dec = dec.forward(
        tgt, mem, tgt_key_padding_mask=KPM, memory_key_padding_mask=MKPM, tgt_is_causal=True
    )
    dtgt, dmem, g_dec = dec.backward(R, c_dec)
    dsrc, g_enc = enc.backward(dmem, c_enc)

    st, tt = _tensors(src, tgt)
    mt = t_enc(st, src_key_padding_mask=torch.tensor(MKPM))
    ot = t_dec(
        tt, mt, tgt_mask=_causal(T), tgt_key_padding_mask=torch.tensor(KPM),
        memory_key_padding_mask=torch.tensor(MKPM), tgt_is_causal=True,
    )  # fmt: skip
    (ot * torch.tensor(R)).sum().backward()
    close(mem, mt, "memory", "stacks")
    close(out, ot, "out", "stacks")
    _compare("stacks", {**g_dec, "dtgt": dtgt}, t_dec, {"dtgt": tt})
    _compare("stacks", {**g_enc, "dsrc": dsrc}, t_enc, {"dsrc": st})


@pytest.mark.parametrize("extra_mask", [False, True], ids=["causal", "causal+mask"])
def test_multihead_is_causal_matches_torch(extra_mask: bool) -> None:
    torch = pytest.importorskip("torch")
    m = _randomise(MultiheadAttention(E, H, dtype=np.float64, rng=27), 27)
    t = _load(torch.nn.MultiheadAttention(E, H, batch_first=True, dtype=torch.float64), m.params)
    rng = np.random.default_rng(28)
    x, R = rng.standard_normal((B, T, E)), rng.standard_normal((B, T, E))
    am = SRC_MASK if extra_mask else None
    out, _, cache = m.forward(x, x, x, KPM, attn_mask=am, is_causal=True)
    dq, dk, dv, grads = m.backward(R, cache)
    (xt,) = _tensors(x)
    torch_mask = _causal(T) | torch.tensor(SRC_MASK) if extra_mask else _causal(T)
    ot, wt = t(
        xt, xt, xt, key_padding_mask=torch.tensor(KPM), attn_mask=torch_mask,
        average_attn_weights=False, is_causal=not extra_mask,
    )  # fmt: skip
    (ot * torch.tensor(R)).sum().backward()
    close(out, ot, "out", "mha is_causal")
    close(cache.weights, wt, "per-head weights", "mha is_causal")
    _compare("mha is_causal", {**grads, "dx": dq + dk + dv}, t, {"dx": xt})


def test_initialisation_like_torch() -> None:
    torch = pytest.importorskip("torch")
    ours = TransformerDecoderLayer(16, 4, 32, rng=0)
    torch.manual_seed(0)  # torch's draw the same whatever ran before (in the same process)
    fresh = torch.nn.TransformerDecoderLayer(16, 4, 32, batch_first=True)
    assert list(fresh.state_dict()) == list(ours.params)
    for name, theirs in fresh.state_dict().items():
        p = ours.params[name]
        assert p.dtype == np.float32 and p.shape == tuple(theirs.shape), name
        if "norm" in name or name.endswith("in_proj_bias") or name.endswith("out_proj.bias"):
            assert np.array_equal(p, theirs.numpy()), name  # ones and zeros
        else:
            bound = float(theirs.abs().max())  # torch's own draw, close to its bound
            assert 0.75 * bound < np.abs(p).max() <= 1.3 * bound, name


# --------------------------------------------------------------- records, dropout, float32
def test_records_expose_weights_and_residual_norms() -> None:
    enc = TransformerEncoder(E, H, 2, F, dtype=np.float64, rng=30)
    dec = TransformerDecoder(E, H, 3, F, norm_first=True, dtype=np.float64, rng=31)
    rng = np.random.default_rng(32)
    src, tgt = rng.standard_normal((B, S, E)), rng.standard_normal((B, T, E))
    mem, c_enc = enc.forward(src)
    out, c_dec = dec.forward(tgt, mem, memory_key_padding_mask=MKPM, tgt_is_causal=True)
    r_enc, r_dec = c_enc.record(), c_dec.record()
    assert sorted(r_enc) == [
        f"layers.{i}.{k}" for i in range(2) for k in ("residual_norms", "self_attn.weights")
    ]
    assert r_enc["layers.1.self_attn.weights"].shape == (B, H, S, S)
    assert r_enc["layers.0.residual_norms"].shape == (3, B, S)
    np.testing.assert_allclose(r_enc["layers.0.residual_norms"][0], np.linalg.norm(src, axis=-1))
    np.testing.assert_allclose(r_enc["layers.1.residual_norms"][-1], np.linalg.norm(mem, axis=-1))
    assert len(r_dec) == 9 and r_dec["layers.2.multihead_attn.weights"].shape == (B, H, T, S)
    np.testing.assert_allclose(r_dec["layers.2.residual_norms"][-1], np.linalg.norm(out, axis=-1))
    w_self = r_dec["layers.1.self_attn.weights"]
    np.testing.assert_allclose(w_self.sum(axis=-1), 1.0)
    assert np.all(w_self[..., ~np.tri(T, dtype=bool)] == 0.0)  # causal
    assert np.all(r_dec["layers.0.multihead_attn.weights"][0, :, :, 2] == 0.0)  # padded memory


def test_dropout_eval_and_float32() -> None:
    x = np.random.default_rng(33).standard_normal((B, T, E))
    m = TransformerEncoderLayer(E, H, F, dropout=0.5, activation="gelu", rng=34)
    ref = TransformerEncoderLayer(E, H, F, dropout=0.0, activation="gelu", rng=34)
    y_eval, _ = m.forward(x, training=False)
    y_ref, _ = ref.forward(x)
    y_train, cache = m.forward(x)
    assert np.array_equal(y_eval, y_ref) and not np.allclose(y_train, y_eval)
    dx, grads = m.backward(np.ones_like(y_train), cache)
    assert all(a.dtype == np.float32 for a in (y_train, dx, *grads.values()))
    hi = TransformerEncoderLayer(E, H, F, activation="gelu", dtype=np.float64, rng=34)
    assert max_rel_error(y_ref, hi.forward(x)[0]) < 1e-5


# ------------------------------------------------------------------------------- bad input
def _raises(exc: type[Exception], name: str, fn: Callable[[], Any]) -> None:
    with pytest.raises(exc) as info:
        fn()
    message = str(info.value)
    assert name in message, f"{name!r} not named in: {message}"
    assert "got" in message, f"the given value is not reported in: {message}"


BAD_ARGS = [
    ({"nhead": 3}, ValueError, "d_model"),
    ({"nhead": 0}, ValueError, "nhead"),
    ({"dim_feedforward": 0}, ValueError, "dim_feedforward"),
    ({"dropout": 1.0}, ValueError, "dropout"),
    ({"dropout": "0.1"}, TypeError, "dropout"),
    ({"activation": "tanh"}, ValueError, "activation"),
    ({"activation": None}, ValueError, "activation"),
    ({"layer_norm_eps": 0.0}, ValueError, "layer_norm_eps"),
    ({"norm_first": 1}, TypeError, "norm_first"),
    ({"bias": None}, TypeError, "bias"),
    ({"dtype": np.int64}, TypeError, "dtype"),
    ({"rng": -1}, ValueError, "rng"),
]


@pytest.mark.parametrize("cls", [TransformerEncoderLayer, TransformerDecoderLayer])
@pytest.mark.parametrize(("kwargs", "exc", "name"), BAD_ARGS, ids=[a[2] for a in BAD_ARGS])
def test_bad_layer_arguments(
    cls: type, kwargs: dict[str, Any], exc: type[Exception], name: str
) -> None:
    args = {"d_model": 4, "nhead": 2, **kwargs}
    _raises(exc, name, lambda: cls(**args))


@pytest.mark.parametrize("cls", [TransformerEncoder, TransformerDecoder])
def test_bad_stack_arguments(cls: type) -> None:
    _raises(ValueError, "num_layers", lambda: cls(4, 2, 0))
    _raises(TypeError, "num_layers", lambda: cls(4, 2, 1.0))
    _raises(ValueError, "nhead", lambda: cls(4, 3, 1))
    _raises(TypeError, "norm", lambda: cls(4, 2, 1, norm="yes"))
    _raises(ValueError, "norm", lambda: cls(4, 2, 1, norm=LayerNorm(5)))
    _raises(TypeError, "norm", lambda: cls(4, 2, 1, norm=LayerNorm(4, dtype=np.float64)))


def test_bad_encoder_input() -> None:
    m = TransformerEncoderLayer(E, H, F, dtype=np.float64)
    x = np.zeros((B, T, E))
    f = m.forward
    _raises(ValueError, "src", lambda: f(x[0]))
    _raises(ValueError, "src", lambda: f(x[..., :3]))
    _raises(TypeError, "src", lambda: f("x"))
    _raises(TypeError, "src_mask", lambda: f(x, src_mask=np.zeros((T, T))))
    _raises(ValueError, "src_mask", lambda: f(x, src_mask=np.zeros((T, T + 1), bool)))
    _raises(ValueError, "src_key_padding_mask", lambda: f(x, src_key_padding_mask=KPM[:, :2]))
    _raises(TypeError, "is_causal", lambda: f(x, is_causal=1))
    _raises(TypeError, "training", lambda: f(x, training=None))
    every = KPM.copy()
    every[1] = True
    _raises(ValueError, "src_key_padding_mask", lambda: f(x, src_key_padding_mask=every))
    _, cache = f(x)
    _raises(ValueError, "dout", lambda: m.backward(np.ones((B, T, 3)), cache))
    _raises(TypeError, "cache", lambda: m.backward(np.ones((B, T, E)), None))  # type: ignore[arg-type]
    stack = TransformerEncoder(E, H, 2, F, dtype=np.float64)
    _raises(ValueError, "mask", lambda: stack.forward(x, mask=np.zeros((2, 2), bool)))
    _raises(TypeError, "cache", lambda: stack.backward(np.ones((B, T, E)), cache))  # type: ignore[arg-type]


def test_bad_decoder_input() -> None:
    m = TransformerDecoderLayer(E, H, F, dtype=np.float64)
    x, mem = np.zeros((B, T, E)), np.zeros((B, S, E))
    f = m.forward
    _raises(ValueError, "tgt", lambda: f(x[..., :3], mem))
    _raises(ValueError, "memory", lambda: f(x, mem[..., :2]))
    _raises(ValueError, "memory", lambda: f(x, mem[:1]))
    _raises(ValueError, "memory", lambda: f(x, mem[0]))
    _raises(ValueError, "tgt_mask", lambda: f(x, mem, tgt_mask=np.zeros((T, T + 1), bool)))
    _raises(ValueError, "memory_mask", lambda: f(x, mem, memory_mask=np.zeros((T, S + 1), bool)))
    _raises(TypeError, "memory_mask", lambda: f(x, mem, memory_mask=MEM_MASK.astype(int)))
    _raises(
        ValueError, "memory_key_padding_mask", lambda: f(x, mem, memory_key_padding_mask=KPM[:, :2])
    )
    _raises(
        ValueError,
        "tgt_key_padding_mask",
        lambda: f(x, mem, tgt_key_padding_mask=np.zeros((B, T + 1), bool)),
    )
    _raises(TypeError, "tgt_is_causal", lambda: f(x, mem, tgt_is_causal="yes"))
    every = np.ones((B, S), bool)
    _raises(ValueError, "memory_key_padding_mask", lambda: f(x, mem, memory_key_padding_mask=every))
    _, cache = f(x, mem)
    _raises(ValueError, "dout", lambda: m.backward(np.ones((B, T + 1, E)), cache))
