"""Parity with PyTorch (float64): modules, packed variable-length batches, and a step-unrolled
torch reference for the records, the gradient records and the peephole LSTM.

Run with ``-s`` to see the largest relative error met in this module.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

from gradcheck import max_rel_error
from pyplay.nn._ops import gate_mode
from pyplay.nn.gru import GRU
from pyplay.nn.lstm import LSTM
from pyplay.nn.rnn import RNN

torch = pytest.importorskip("torch")

TOL = 1e-6
F, T = 5, 6
LENGTHS = {3: np.array([4, 6, 1]), 128: np.random.default_rng(7).integers(1, T + 1, size=128)}
CONFIGS = [(1, False), (1, True), (2, False), (2, True)]  # (num_layers, bidirectional)
WORST: dict[str, float] = {}


@pytest.fixture(scope="module", autouse=True)
def _report_worst() -> Iterator[None]:
    yield
    for kind, err in sorted(WORST.items()):
        print(f"\n[parity] max relative error, {kind}: {err:.2e}")


def close(ours: np.ndarray, theirs: Any, what: str, kind: str) -> None:
    ref = theirs.detach().numpy() if isinstance(theirs, torch.Tensor) else np.asarray(theirs)
    err = max_rel_error(ours, ref)
    WORST[kind] = max(WORST.get(kind, 0.0), err)
    assert err < TOL, f"{what}: max relative error {err:.2e}"


# ---------------------------------------------------------------------------- module parity
MODULES: dict[str, tuple[Callable[..., Any], Any, dict[str, Any]]] = {
    "rnn-tanh": (RNN, torch.nn.RNN, {"nonlinearity": "tanh"}),
    "rnn-relu": (RNN, torch.nn.RNN, {"nonlinearity": "relu"}),
    "lstm": (LSTM, torch.nn.LSTM, {}),
    "gru": (GRU, torch.nn.GRU, {}),
}


def _pair(cell: str, H: int, num_layers: int, bidirectional: bool) -> tuple[Any, Any]:
    cls, tcls, kw = MODULES[cell]
    ours = cls(
        F, H, num_layers=num_layers, bidirectional=bidirectional, dtype=np.float64, rng=4, **kw
    )
    theirs = tcls(
        F, H, num_layers, batch_first=True, bidirectional=bidirectional, dtype=torch.float64, **kw
    )
    assert list(theirs.state_dict()) == list(ours.params)  # names and order as torch
    with torch.no_grad():
        for name, p in theirs.named_parameters():
            assert tuple(p.shape) == ours.params[name].shape
            p.copy_(torch.from_numpy(ours.params[name]))
    return ours, theirs


@pytest.mark.parametrize("B", [3, 128], ids=["B3", "B128"])
@pytest.mark.parametrize("ragged", [False, True], ids=["full", "packed"])
@pytest.mark.parametrize(("num_layers", "bidirectional"), CONFIGS, ids=["1", "1bi", "2", "2bi"])
@pytest.mark.parametrize("cell", list(MODULES))
def test_matches_torch_module(
    cell: str, num_layers: int, bidirectional: bool, ragged: bool, B: int
) -> None:
    H = 16
    n_gates = {"lstm": 4, "gru": 2}.get(cell)  # sigmoid/tanh slab of the gated cells
    if n_gates:  # B=128 runs the "exp" gate mode of pyplay.nn._ops, B=3 the "tanh" mode
        assert gate_mode(B * n_gates * H) == ("exp" if B == 128 else "tanh")
    ours, theirs = _pair(cell, H, num_layers, bidirectional)
    lstm = cell == "lstm"
    D = 2 if bidirectional else 1
    rng = np.random.default_rng(B + num_layers + 10 * bidirectional)
    shape = (num_layers * D, B, H)
    x = rng.standard_normal((B, T, F))
    state = [rng.standard_normal(shape) for _ in range(2 if lstm else 1)]
    R = rng.standard_normal((B, T, D * H))
    R_state = [rng.standard_normal(shape) for _ in state]
    lengths = LENGTHS[B] if ragged else None

    out, st, cache = ours.forward(x, tuple(state) if lstm else state[0], lengths)
    dx, dst, grads = ours.backward(R, tuple(R_state) if lstm else R_state[0], cache)
    st, dst = (list(st), list(dst)) if lstm else ([st], [dst])

    xt = torch.tensor(x, requires_grad=True)
    st_t = [torch.tensor(s, requires_grad=True) for s in state]
    arg = tuple(st_t) if lstm else st_t[0]
    if lengths is None:
        out_t, sn_t = theirs(xt, arg)
    else:
        packed = torch.nn.utils.rnn.pack_padded_sequence(
            xt, torch.tensor(lengths), batch_first=True, enforce_sorted=False
        )
        out_p, sn_t = theirs(packed, arg)
        out_t, _ = torch.nn.utils.rnn.pad_packed_sequence(out_p, batch_first=True, total_length=T)
    sn_t = list(sn_t) if lstm else [sn_t]
    loss = (out_t * torch.tensor(R)).sum()
    for s, r in zip(sn_t, R_state, strict=True):
        loss = loss + (s * torch.tensor(r)).sum()
    loss.backward()

    close(out, out_t, "out", cell)
    for k, (s, s_t) in enumerate(zip(st, sn_t, strict=True)):
        close(s, s_t, f"state[{k}]", cell)
    close(dx, xt.grad, "dx", cell)
    for k, (d, s_t) in enumerate(zip(dst, st_t, strict=True)):
        close(d, s_t.grad, f"dstate[{k}]", cell)
    for name, p in theirs.named_parameters():
        close(grads[name], p.grad, name, cell)
    if lengths is not None:
        padded = np.arange(T)[None, :] >= lengths[:, None]  # (B, T)
        assert np.all(out[padded] == 0.0)


# ------------------------------------------------------------ step-unrolled torch reference
def _step(kind: str, P: dict[str, Any], sfx: str, x: Any, h: Any, c: Any) -> tuple[Any, Any, dict]:
    """One step of one sequence, written from the textbook equations with torch ops."""
    lin = torch.nn.functional.linear
    if kind.startswith("rnn"):
        a = lin(x, P["weight_ih" + sfx], P["bias_ih" + sfx]) + lin(
            h, P["weight_hh" + sfx], P["bias_hh" + sfx]
        )
        phi = {"rnn-tanh": torch.tanh, "rnn-relu": torch.relu, "rnn-linear": lambda v: v}[kind]
        h = phi(a)
        return h, None, {"a": a, "h": h}
    if kind == "gru":
        gi = lin(x, P["weight_ih" + sfx], P["bias_ih" + sfx])
        gh = lin(h, P["weight_hh" + sfx], P["bias_hh" + sfx])
        (ir, iz, i_n), (hr, hz, hn) = gi.chunk(3), gh.chunk(3)
        r, z = torch.sigmoid(ir + hr), torch.sigmoid(iz + hz)
        n = torch.tanh(i_n + r * hn)
        h = (1 - z) * n + z * h
        return h, None, {"r": r, "z": z, "n": n, "h": h}
    a = lin(x, P["weight_ih" + sfx], P["bias_ih" + sfx]) + lin(
        h, P["weight_hh" + sfx], P["bias_hh" + sfx]
    )
    ai, af, ag, ao = a.chunk(4)
    if kind == "lstm-peephole":
        ai = ai + P["weight_ci" + sfx] * c
        af = af + P["weight_cf" + sfx] * c
    i, f, g = torch.sigmoid(ai), torch.sigmoid(af), torch.tanh(ag)
    c = f * c + i * g
    if kind == "lstm-peephole":
        ao = ao + P["weight_co" + sfx] * c
    o = torch.sigmoid(ao)
    h = o * torch.tanh(c)
    return h, c, {"i": i, "f": f, "g": g, "o": o, "c": c, "h": h}


def _unrolled(
    kind: str,
    layer: Any,
    x: np.ndarray,
    state: list[np.ndarray],
    lengths: np.ndarray | None,
    R: np.ndarray,
    R_state: list[np.ndarray],
) -> dict:
    """Every sequence on its own (its valid steps only), every step explicit, autograd for the
    gradients and ``retain_grad`` for the total dL/dh_t."""
    B = x.shape[0]
    H, L, D = layer.hidden_size, layer.num_layers, layer.num_directions
    P = {k: torch.tensor(v, requires_grad=True) for k, v in layer.params.items()}
    xt = torch.tensor(x, requires_grad=True)
    st = [torch.tensor(s, requires_grad=True) for s in state]
    keys = [f"l{k}" + ("_reverse" if d else "") for k in range(L) for d in range(D)]
    rec_t: dict[str, list[tuple[int, int, dict]]] = {key: [] for key in keys}
    outs, finals, loss = [], [], torch.zeros((), dtype=torch.float64)
    for b in range(B):
        n_b = T if lengths is None else int(lengths[b])
        inp = [xt[b, t] for t in range(n_b)]
        fin = []
        for k in range(L):
            per_dir = []
            for d in range(D):
                j = k * D + d
                sfx = f"_l{k}" + ("_reverse" if d else "")
                h = st[0][j, b]
                c = st[1][j, b] if len(st) == 2 else None
                hs: list[Any] = [None] * n_b
                for t in range(n_b) if d == 0 else reversed(range(n_b)):
                    h, c, rec = _step(kind, P, sfx, inp[t], h, c)
                    h.retain_grad()
                    rec_t[sfx[1:]].append((b, t, rec))
                    hs[t] = h
                fin.append((j, h, c))
                per_dir.append(hs)
            inp = [torch.cat([per_dir[d][t] for d in range(D)]) for t in range(n_b)]
        out_b = torch.stack(inp)  # (n_b, D*H)
        loss = loss + (out_b * torch.tensor(R[b, :n_b])).sum()
        for j, h, c in fin:
            loss = loss + (h * torch.tensor(R_state[0][j, b])).sum()
            if c is not None:
                loss = loss + (c * torch.tensor(R_state[1][j, b])).sum()
        outs.append(out_b)
        finals.append(fin)
    loss.backward()
    out = np.zeros((B, T, D * H))
    h_n = np.zeros((L * D, B, H))
    c_n = np.zeros((L * D, B, H))
    for b, (out_b, fin) in enumerate(zip(outs, finals, strict=True)):
        out[b, : out_b.shape[0]] = out_b.detach().numpy()
        for j, h, c in fin:
            h_n[j, b] = h.detach().numpy()
            if c is not None:
                c_n[j, b] = c.detach().numpy()
    records: dict[str, dict[str, np.ndarray]] = {}
    norms: dict[str, np.ndarray] = {}
    for key, items in rec_t.items():
        records[key] = {}
        norms[key] = np.zeros((B, T))
        for b, t, rec in items:
            for name, v in rec.items():
                records[key].setdefault(name, np.zeros((B, T, H)))[b, t] = v.detach().numpy()
            norms[key][b, t] = float(torch.linalg.vector_norm(rec["h"].grad))
    return {
        "out": out,
        "state": [h_n, c_n][: len(state)],
        "dx": xt.grad.numpy(),
        "dstate": [s.grad.numpy() for s in st],
        "grads": {k: p.grad.numpy() for k, p in P.items()},
        "records": records,
        "norms": norms,
    }


UNROLLED: dict[str, Callable[..., Any]] = {
    "rnn-tanh": lambda **kw: RNN(F, 4, nonlinearity="tanh", **kw),
    "rnn-relu": lambda **kw: RNN(F, 4, nonlinearity="relu", **kw),
    "rnn-linear": lambda **kw: RNN(F, 4, nonlinearity="linear", **kw),
    "lstm": lambda **kw: LSTM(F, 4, **kw),
    "lstm-peephole": lambda **kw: LSTM(F, 4, peephole=True, **kw),
    "gru": lambda **kw: GRU(F, 4, **kw),
}
NAMES = {"rnn": ["a", "h"], "lstm": ["i", "f", "g", "o", "c", "h"], "gru": ["r", "z", "n", "h"]}


@pytest.mark.parametrize("ragged", [False, True], ids=["full", "lengths"])
@pytest.mark.parametrize(("num_layers", "bidirectional"), [(1, False), (2, True)], ids=["1", "2bi"])
@pytest.mark.parametrize("cell", list(UNROLLED))
def test_matches_step_unrolled_torch(
    cell: str, num_layers: int, bidirectional: bool, ragged: bool
) -> None:
    """Outputs, states, gradients, records and gradient records against an independent
    per-sequence, per-step torch computation (the only reference for the peephole LSTM)."""
    layer = UNROLLED[cell](
        num_layers=num_layers, bidirectional=bidirectional, dtype=np.float64, rng=8
    )
    B, H, D = 3, 4, layer.num_directions
    rng = np.random.default_rng(num_layers)
    shape = (num_layers * D, B, H)
    lstm = cell.startswith("lstm")
    x = rng.standard_normal((B, T, F))
    state = [rng.standard_normal(shape) for _ in range(2 if lstm else 1)]
    R = rng.standard_normal((B, T, D * H))
    R_state = [rng.standard_normal(shape) for _ in state]
    lengths = LENGTHS[3] if ragged else None
    ref = _unrolled(cell, layer, x, state, lengths, R, R_state)

    out, st, cache = layer.forward(x, tuple(state) if lstm else state[0], lengths, record=True)
    dx, dst, grads, grad_record = layer.backward(
        R, tuple(R_state) if lstm else R_state[0], cache, record=True
    )
    close(out, ref["out"], "out", "unrolled")
    for ours, theirs in zip(list(st) if lstm else [st], ref["state"], strict=True):
        close(ours, theirs, "state", "unrolled")
    close(dx, ref["dx"], "dx", "unrolled")
    for ours, theirs in zip(list(dst) if lstm else [dst], ref["dstate"], strict=True):
        close(ours, theirs, "dstate", "unrolled")
    for name in layer.params:
        close(grads[name], ref["grads"][name], name, "unrolled")

    keys = [f"l{k}" + ("_reverse" if d else "") for k in range(num_layers) for d in range(D)]
    assert cache.record is not None
    assert list(cache.record) == keys and list(grad_record) == keys
    padded = np.zeros((B, T), bool) if lengths is None else np.arange(T) >= lengths[:, None]
    for key in keys:
        rec = cache.record[key]
        assert list(rec) == NAMES[cell.split("-")[0]]
        for name, value in rec.items():
            assert value.shape == (B, T, H)
            assert np.all(value[padded] == 0.0)
            close(value, ref["records"][key][name], f"record {key} {name}", "records")
        assert grad_record[key].shape == (B, T)
        assert np.all(grad_record[key][padded] == 0.0)
        close(grad_record[key], ref["norms"][key], f"grad_record {key}", "grad_record")
    top = keys[-D:]
    for d, key in enumerate(top):  # the last layer's recorded h is the output
        np.testing.assert_array_equal(cache.record[key]["h"], out[:, :, d * H : (d + 1) * H])


# ----------------------------------------------------------------- initialisation and dtypes
@pytest.mark.parametrize("cell", list(MODULES))
def test_initialisation_like_torch(cell: str) -> None:
    ours, _ = _pair(cell, 16, 2, True)
    fresh = MODULES[cell][1](F, 16, 2, batch_first=True, bidirectional=True)
    bound = 1 / np.sqrt(16)
    for name, p in ours.params.items():
        assert p.dtype == np.float64
        assert np.abs(p).max() <= bound and np.abs(p).max() > 0.8 * bound  # U(-k, k), k=1/sqrt(H)
        assert abs(p.mean()) < 0.3 * bound
        assert p.shape == tuple(fresh.state_dict()[name].shape)


def test_forget_bias_shifts_only_the_initial_forget_slice() -> None:
    H = 8
    plain = LSTM(F, H, num_layers=2, bidirectional=True, rng=3)
    shifted = LSTM(F, H, num_layers=2, bidirectional=True, rng=3, forget_bias=1.0)
    for name, p in plain.params.items():
        q = shifted.params[name]
        if name.startswith("bias_ih"):
            np.testing.assert_allclose(q[H : 2 * H], p[H : 2 * H] + 1.0, rtol=1e-6)
            np.testing.assert_array_equal(
                np.delete(q, np.s_[H : 2 * H]), np.delete(p, np.s_[H : 2 * H])
            )
        else:
            np.testing.assert_array_equal(q, p)


@pytest.mark.parametrize("B", [2, 128], ids=["tanh-mode", "exp-mode"])
@pytest.mark.parametrize("cell", ["rnn-tanh", "lstm", "gru"])
def test_float32_agrees_with_float64(cell: str, B: int) -> None:
    build = {"rnn-tanh": RNN, "lstm": LSTM, "gru": GRU}[cell]
    lo = build(F, 16, num_layers=2, bidirectional=True, rng=6)
    hi = build(F, 16, num_layers=2, bidirectional=True, rng=6, dtype=np.float64)
    for name, p in hi.params.items():
        p[...] = lo.params[name]
    rng = np.random.default_rng(B)
    x = 3 * rng.standard_normal((B, T, F))  # some saturated gates
    lengths = rng.integers(1, T + 1, size=B)
    out_lo, _, cache_lo = lo.forward(x.astype(np.float32), lengths=lengths)
    out_hi, _, cache_hi = hi.forward(x, lengths=lengths)
    assert out_lo.dtype == np.float32
    assert max_rel_error(out_lo, out_hi) < 1e-5
    dout = rng.standard_normal(out_hi.shape)
    dx_lo, _, g_lo = lo.backward(dout.astype(np.float32), None, cache_lo)
    dx_hi, _, g_hi = hi.backward(dout, None, cache_hi)
    assert dx_lo.dtype == np.float32
    assert max_rel_error(dx_lo, dx_hi) < 1e-4
    for name in g_hi:
        assert g_lo[name].dtype == np.float32
        assert max_rel_error(g_lo[name], g_hi[name]) < 1e-4, name
