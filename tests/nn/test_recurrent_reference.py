"""The fast LSTM and GRU kernels against the plain reference steps of ``pyplay.nn.reference``.

In float64: the layer's outputs, final states and recorded gates equal the reference step run
over the sequence; the layer's BPTT equals the reference step's backward chained over the
sequence; the reference backward itself passes a central-difference gradient check; and the
reference steps equal torch's ``LSTMCell`` / ``GRUCell`` (outputs and autograd gradients).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from gradcheck import assert_grad_close, numeric_grad
from pyplay.nn import GRU, LSTM
from pyplay.nn.recurrent import Gradients, RecordedGradients
from pyplay.nn.reference import (
    PEEPHOLES,
    gru_step,
    gru_step_backward,
    lstm_step,
    lstm_step_backward,
)

B, T, F, H = 3, 5, 3, 4
ATOL = 1e-12

LAYERS = {
    "lstm": lambda **kw: LSTM(F, H, dtype=np.float64, rng=1, **kw),
    "lstm-peephole": lambda **kw: LSTM(
        F, H, dtype=np.float64, rng=2, peephole=True, forget_bias=1.0, **kw
    ),
    "lstm-noforget": lambda **kw: LSTM(F, H, dtype=np.float64, rng=4, forget_gate=False, **kw),
    "lstm-noforget-peephole": lambda **kw: LSTM(
        F, H, dtype=np.float64, rng=5, forget_gate=False, peephole=True, **kw
    ),
    "gru": lambda **kw: GRU(F, H, dtype=np.float64, rng=3, **kw),
    "gru-reset-before": lambda **kw: GRU(F, H, dtype=np.float64, rng=6, reset_after=False, **kw),
}
GATES = {
    "lstm": ("i", "f", "g", "o"),
    "lstm-peephole": ("i", "f", "g", "o"),
    "lstm-noforget": ("i", "g", "o"),
    "lstm-noforget-peephole": ("i", "g", "o"),
    "gru": "rzn",
    "gru-reset-before": "rzn",
}


def _weights(layer: Any, suffix: str) -> dict[str, Any]:
    p = layer.params
    w = {k: p[k + suffix] for k in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")}
    if getattr(layer, "peephole", False):
        w["peepholes"] = tuple(p.get(k + suffix) for k in PEEPHOLES)  # no weight_cf without f
    if not getattr(layer, "forget_gate", True):
        w["forget_gate"] = False
    if not getattr(layer, "reset_after", True):
        w["reset_after"] = False
    return w


def _run_reference(
    layer: Any, x: np.ndarray, h: np.ndarray, c: np.ndarray | None, suffix: str = "_l0"
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, list[dict[str, Any]]]:
    """The reference step over ``x`` (B, T, F): outputs (B, T, H), h_T, c_T and the caches."""
    w, outs, caches = _weights(layer, suffix), [], []
    for t in range(x.shape[1]):
        if c is None:
            h, cache = gru_step(x[:, t], h, **w)
        else:
            h, c, cache = lstm_step(x[:, t], h, c, **w)
        outs.append(h)
        caches.append(cache)
    return np.stack(outs, axis=1), h, c, caches  # (B, T, H)


def _problem(name: str, **kw: Any) -> tuple[Any, np.ndarray, Any, np.random.Generator]:
    layer = LAYERS[name](**kw)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((B, T, F))
    L = layer.num_layers * layer.num_directions
    h0 = rng.standard_normal((L, B, H))
    state = (h0, rng.standard_normal((L, B, H))) if name.startswith("lstm") else h0
    return layer, x, state, rng


@pytest.mark.parametrize("name", LAYERS)
def test_forward_states_and_gates_match_the_reference_step(name: str) -> None:
    layer, x, state, _ = _problem(name)
    out, state_n, cache = layer.forward(x, state, record=True)
    lstm = name.startswith("lstm")
    h0, c0 = (state[0][0], state[1][0]) if lstm else (state[0], None)
    ref_out, h_T, c_T, caches = _run_reference(layer, x, h0, c0)
    np.testing.assert_allclose(out, ref_out, rtol=0, atol=ATOL)
    np.testing.assert_allclose(state_n[0][0] if lstm else state_n[0], h_T, rtol=0, atol=ATOL)
    if lstm:
        np.testing.assert_allclose(state_n[1][0], c_T, rtol=0, atol=ATOL)
    for gate in GATES[name]:
        ref_gate = np.stack([c[gate] for c in caches], axis=1)  # (B, T, H)
        np.testing.assert_allclose(cache.record["l0"][gate], ref_gate, rtol=0, atol=ATOL)


@pytest.mark.parametrize("name", LAYERS)
def test_reverse_direction_is_the_reference_step_over_the_reversed_sequence(name: str) -> None:
    layer, x, state, _ = _problem(name, bidirectional=True)
    out, _, _ = layer.forward(x, state)
    lstm = name.startswith("lstm")
    h0, c0 = (state[0][1], state[1][1]) if lstm else (state[1], None)
    ref_out, *_ = _run_reference(layer, x[:, ::-1], h0, c0, suffix="_l0_reverse")
    np.testing.assert_allclose(out[:, :, H:], ref_out[:, ::-1], rtol=0, atol=ATOL)


@pytest.mark.parametrize("name", LAYERS)
def test_bptt_matches_the_reference_backward_chained_over_time(name: str) -> None:
    layer, x, state, rng = _problem(name)
    lstm = name.startswith("lstm")
    _, _, cache = layer.forward(x, state)
    R = rng.standard_normal((B, T, H))
    R_h = rng.standard_normal((1, B, H))
    R_c = rng.standard_normal((1, B, H)) if lstm else None
    dx, dstate, grads = layer.backward(R, (R_h, R_c) if lstm else R_h, cache)

    h0, c0 = (state[0][0], state[1][0]) if lstm else (state[0], None)
    *_, caches = _run_reference(layer, x, h0, c0)
    dh, dc = R_h[0], None if R_c is None else R_c[0]
    ref_dx = np.empty_like(x)
    ref_grads = {k: np.zeros_like(v) for k, v in layer.params.items()}
    for t in reversed(range(T)):
        if lstm:
            step = lstm_step_backward(R[:, t] + dh, dc, caches[t])
        else:
            step = gru_step_backward(R[:, t] + dh, caches[t])
        ref_dx[:, t], dh, dc = step.dx, step.dh, step.dc
        for k, v in step.grads.items():
            ref_grads[k + "_l0"] += v
    np.testing.assert_allclose(dx, ref_dx, rtol=0, atol=1e-10)
    np.testing.assert_allclose(dstate[0][0] if lstm else dstate[0], dh, rtol=0, atol=1e-10)
    if lstm:
        np.testing.assert_allclose(dstate[1][0], dc, rtol=0, atol=1e-10)
    assert list(grads) == list(layer.params)
    for k in grads:
        np.testing.assert_allclose(grads[k], ref_grads[k], rtol=0, atol=1e-10, err_msg=k)


@pytest.mark.parametrize("forget_gate", [True, False], ids=["forget", "noforget"])
@pytest.mark.parametrize("peephole", [False, True])
def test_lstm_reference_backward_passes_a_gradient_check(peephole: bool, forget_gate: bool) -> None:
    rng = np.random.default_rng(11)
    x, h, c = rng.standard_normal((2, F)), rng.standard_normal((2, H)), rng.standard_normal((2, H))
    G = (4 if forget_gate else 3) * H  # no f rows in the 1997 cell
    w = {
        "weight_ih": rng.standard_normal((G, F)),
        "weight_hh": rng.standard_normal((G, H)),
        "bias_ih": rng.standard_normal(G),
        "bias_hh": rng.standard_normal(G),
    }
    peep: Any = None
    if peephole:
        peep = tuple(rng.standard_normal(H) for _ in PEEPHOLES)
        if not forget_gate:
            peep = (peep[0], None, peep[2])
    R_h, R_c = rng.standard_normal((2, H)), rng.standard_normal((2, H))

    def loss() -> float:
        h_t, c_t, _ = lstm_step(x, h, c, **w, peepholes=peep, forget_gate=forget_gate)
        return float(np.sum(h_t * R_h) + np.sum(c_t * R_c))

    _, _, cache = lstm_step(x, h, c, **w, peepholes=peep, forget_gate=forget_gate)
    g = lstm_step_backward(R_h, R_c, cache)
    assert g.dc is not None
    checks = {"x": (x, g.dx), "h": (h, g.dh), "c": (c, g.dc)}
    checks |= {k: (v, g.grads[k]) for k, v in w.items()}
    if peep is not None:
        checks |= {
            k: (v, g.grads[k]) for k, v in zip(PEEPHOLES, peep, strict=True) if v is not None
        }
        assert set(g.grads) == set(w) | {
            k for k, v in zip(PEEPHOLES, peep, strict=True) if v is not None
        }
    for k, (value, analytic) in checks.items():
        assert_grad_close(analytic, numeric_grad(loss, value), k)


@pytest.mark.parametrize("reset_after", [True, False])
def test_gru_reference_backward_passes_a_gradient_check(reset_after: bool) -> None:
    rng = np.random.default_rng(12)
    x, h = rng.standard_normal((2, F)), rng.standard_normal((2, H))
    w = {
        "weight_ih": rng.standard_normal((3 * H, F)),
        "weight_hh": rng.standard_normal((3 * H, H)),
        "bias_ih": rng.standard_normal(3 * H),
        "bias_hh": rng.standard_normal(3 * H),
    }
    R_h = rng.standard_normal((2, H))

    def loss() -> float:
        return float(np.sum(gru_step(x, h, **w, reset_after=reset_after)[0] * R_h))

    g = gru_step_backward(R_h, gru_step(x, h, **w, reset_after=reset_after)[1])
    checks = {"x": (x, g.dx), "h": (h, g.dh)} | {k: (v, g.grads[k]) for k, v in w.items()}
    for k, (value, analytic) in checks.items():
        assert_grad_close(analytic, numeric_grad(loss, value), k)


@pytest.mark.parametrize("name", LAYERS)
def test_backward_returns_named_tuples_that_unpack_as_before(name: str) -> None:
    layer, x, state, _ = _problem(name)
    out, _, cache = layer.forward(x, state)
    plain = layer.backward(np.ones_like(out), None, cache)
    assert isinstance(plain, Gradients) and len(plain) == 3
    dx, dstate, grads = plain
    assert dx is plain.dx and dstate is plain.dstate and grads is plain.grads
    recorded = layer.backward(np.ones_like(out), None, cache, record=True)
    assert isinstance(recorded, RecordedGradients) and len(recorded) == 4
    dx, dstate, grads, grad_record = recorded
    assert grad_record is recorded.grad_record and list(grad_record) == ["l0"]
    np.testing.assert_array_equal(recorded.dx, plain.dx)


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_reference_step_matches_torch_cells(cell: str) -> None:
    """The reference is PyTorch's LSTMCell / GRUCell: same outputs and autograd gradients."""
    torch = pytest.importorskip("torch")
    lstm = cell == "lstm"
    module = (torch.nn.LSTMCell if lstm else torch.nn.GRUCell)(F, H, dtype=torch.float64)
    rng = np.random.default_rng(14)
    x, h, c = (rng.standard_normal(shape) for shape in ((B, F), (B, H), (B, H)))
    R_h, R_c = rng.standard_normal((B, H)), rng.standard_normal((B, H))
    names = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
    w = {k: getattr(module, k).detach().numpy().copy() for k in names}
    tx, th, tc = (torch.tensor(a, requires_grad=True) for a in (x, h, c))
    if lstm:
        t_h, t_c = module(tx, (th, tc))
        (t_h * torch.tensor(R_h)).sum().add((t_c * torch.tensor(R_c)).sum()).backward()
        h_t, c_t, cache = lstm_step(x, h, c, **w)
        np.testing.assert_allclose(c_t, t_c.detach().numpy(), rtol=0, atol=ATOL)
        g = lstm_step_backward(R_h, R_c, cache)
        assert g.dc is not None and tc.grad is not None
        np.testing.assert_allclose(g.dc, tc.grad.numpy(), rtol=0, atol=1e-10)
    else:
        t_h = module(tx, th)
        (t_h * torch.tensor(R_h)).sum().backward()
        h_t, cache = gru_step(x, h, **w)
        g = gru_step_backward(R_h, cache)
    np.testing.assert_allclose(h_t, t_h.detach().numpy(), rtol=0, atol=ATOL)
    assert tx.grad is not None and th.grad is not None
    np.testing.assert_allclose(g.dx, tx.grad.numpy(), rtol=0, atol=1e-10)
    np.testing.assert_allclose(g.dh, th.grad.numpy(), rtol=0, atol=1e-10)
    for k in names:
        np.testing.assert_allclose(
            g.grads[k], getattr(module, k).grad.numpy(), rtol=0, atol=1e-10, err_msg=k
        )
