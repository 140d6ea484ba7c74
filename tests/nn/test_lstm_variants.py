"""The LSTM's variants from the lecture ("Variations of the LSTM", "LSTM Training").

- the forget gate's initial bias (``forget_bias``): a torch ``nn.LSTM`` whose forget biases are
  shifted the same way computes the same outputs, states and gradients (float64, 1e-6 relative);
- the LSTM without a forget gate (``forget_gate=False``, Hochreiter & Schmidhuber 1997): its cell
  is c_t = c_{t-1} + i_t g_t, and its BPTT equals torch's autograd through a hand-written loop
  of that cell (its central-difference checks are in ``test_recurrent_gradcheck.py`` and its
  agreement with the reference step in ``test_recurrent_reference.py``);
- the CEC-only gradient (``backward(..., gradient="cec")``): exactly torch's autograd through a
  hand-written LSTM loop in which ``h_{t-1}`` is ``.detach()``-ed where it enters the gates and
  the cell input, and nothing else (float64, 1e-6 relative).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from pyplay.nn import GRU, LSTM

torch = pytest.importorskip("torch")

B, T, F, H = 3, 6, 3, 4
RTOL, ATOL = 1e-6, 1e-10


def _close(ours: np.ndarray, theirs: Any, what: str) -> None:
    theirs = np.zeros_like(ours) if theirs is None else theirs.detach().numpy()
    np.testing.assert_allclose(ours, theirs, rtol=RTOL, atol=ATOL, err_msg=what)


def torch_lstm_loop(
    layer: LSTM, x: Any, h0: Any, c0: Any, params: dict[str, Any], detach: bool
) -> tuple[Any, Any, Any]:
    """The LSTM written out step by step in torch, from the equations (not from pyplay): gates
    in torch's order (i, f, g, o; i, g, o without a forget gate), peepholes on c_{t-1} (i, f)
    and c_t (o). With ``detach``, h_{t-1} enters the gates and the cell input detached: the
    only cut of the CEC-only gradient. Returns the output (B, T, D*H), h_n and c_n."""
    D, n = layer.num_directions, 4 if layer.forget_gate else 3
    h_n, c_n, inp = [], [], x
    for layer_k in range(layer.num_layers):
        outs = []
        for d, suffix in enumerate(layer.suffixes(layer_k)):
            p = {name[: -len(suffix)]: v for name, v in params.items() if name.endswith(suffix)}
            k = layer_k * D + d
            h, c, steps = h0[k], c0[k], []
            seq = inp if d == 0 else torch.flip(inp, [1])
            for t in range(seq.shape[1]):
                h_in = h.detach() if detach else h
                a = seq[:, t] @ p["weight_ih"].T + p["bias_ih"] + h_in @ p["weight_hh"].T
                a = a + p["bias_hh"]
                blocks = a.split(layer.hidden_size, dim=1)
                a_i, a_g, a_o = (blocks[0], blocks[2], blocks[3]) if n == 4 else blocks
                if layer.peephole:
                    a_i = a_i + p["weight_ci"] * c
                i, g = torch.sigmoid(a_i), torch.tanh(a_g)
                if n == 4:
                    a_f = blocks[1] + (p["weight_cf"] * c if layer.peephole else 0.0)
                    c = torch.sigmoid(a_f) * c + i * g
                else:
                    c = c + i * g  # the 1997 cell
                o = torch.sigmoid(a_o + (p["weight_co"] * c if layer.peephole else 0.0))
                h = o * torch.tanh(c)
                steps.append(h)
            out = torch.stack(steps, dim=1)  # (B, T, H)
            outs.append(out if d == 0 else torch.flip(out, [1]))
            h_n.append(h)
            c_n.append(c)
        inp = torch.cat(outs, dim=2)  # (B, T, D*H)
    return inp, torch.stack(h_n), torch.stack(c_n)


VARIANTS = {
    "standard": {},
    "peephole": {"peephole": True, "forget_bias": 1.0},
    "noforget": {"forget_gate": False},
    "noforget-peephole": {"forget_gate": False, "peephole": True},
}


def _compare_with_torch(layer: LSTM, gradient: str, seed: int = 0) -> dict[str, np.ndarray]:
    """pyplay's forward and ``backward(gradient=...)`` against the torch loop (detached for
    "cec") on a random linear loss of the output and the final state; returns pyplay's
    parameter gradients."""
    rng = np.random.default_rng(seed)
    L = layer.num_layers * layer.num_directions
    x = rng.standard_normal((B, T, F))
    h0, c0 = 0.5 * rng.standard_normal((L, B, H)), 0.5 * rng.standard_normal((L, B, H))
    R = rng.standard_normal((B, T, layer.num_directions * H))
    R_h, R_c = rng.standard_normal((L, B, H)), rng.standard_normal((L, B, H))
    out, (h_n, c_n), cache = layer.forward(x, (h0, c0))
    dx, (dh0, dc0), grads = layer.backward(R, (R_h, R_c), cache, gradient=gradient)

    tensors = {k: torch.tensor(v, requires_grad=True) for k, v in layer.params.items()}
    tx, th0, tc0 = (torch.tensor(a, requires_grad=True) for a in (x, h0, c0))
    t_out, t_h, t_c = torch_lstm_loop(layer, tx, th0, tc0, tensors, detach=gradient == "cec")
    loss = (t_out * torch.tensor(R)).sum() + (t_h * torch.tensor(R_h)).sum()
    (loss + (t_c * torch.tensor(R_c)).sum()).backward()
    _close(out, t_out, "out")
    _close(h_n, t_h, "h_n")
    _close(c_n, t_c, "c_n")
    _close(dx, tx.grad, "dx")
    _close(dh0, th0.grad, "dh0")  # zero for "cec": h_0 only enters through W_hh
    _close(dc0, tc0.grad, "dc0")
    for name, value in grads.items():
        _close(value, tensors[name].grad, name)
    return grads


@pytest.mark.parametrize("stack", [(1, False), (2, True)], ids=["1layer", "2layers-bi"])
@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("gradient", ["full", "cec"])
def test_backward_equals_torch_autograd_through_the_written_out_loop(
    gradient: str, variant: str, stack: tuple[int, bool]
) -> None:
    """ "full": the true gradient (for the variants torch's nn.LSTM lacks, the independent
    check beside the gradient checks); "cec": the truncated gradient is exactly the gradient
    with h_{t-1} detached where it enters the gates."""
    num_layers, bi = stack
    layer = LSTM(F, H, num_layers, bidirectional=bi, dtype=np.float64, rng=3, **VARIANTS[variant])
    _compare_with_torch(layer, gradient)


def test_cec_gradient_is_an_approximation_that_differs_from_the_true_one() -> None:
    """Over several steps the cut paths carry gradient, so the two differ (the comparison
    above can fail); over one step there is no earlier step to cut into and the weights'
    gradients agree exactly, only dL/dh_0 (which enters through W_hh) is cut."""
    layer = LSTM(F, H, dtype=np.float64, rng=4)
    full = _compare_with_torch(layer, "full", seed=5)
    cec = _compare_with_torch(layer, "cec", seed=5)
    assert not np.allclose(full["weight_hh_l0"], cec["weight_hh_l0"], rtol=1e-3)
    x = np.random.default_rng(6).standard_normal((B, 1, F))
    h0 = np.random.default_rng(7).standard_normal((1, B, H))
    out, _, cache = layer.forward(x, (h0, np.zeros_like(h0)))
    dx_f, (dh_f, _), g_f = layer.backward(np.ones_like(out), None, cache)
    dx_c, (dh_c, _), g_c = layer.backward(np.ones_like(out), None, cache, gradient="cec")
    np.testing.assert_array_equal(dx_f, dx_c)
    for name in g_f:
        np.testing.assert_array_equal(g_f[name], g_c[name])
    assert np.abs(dh_f).max() > 0 and np.all(dh_c == 0)


def test_forget_bias_matches_torch_with_its_forget_biases_shifted_the_same_way() -> None:
    """``LSTM(forget_bias=b)``: torch's nn.LSTM with the same initial weights and ``b`` added
    to ``bias_ih_l{k}[H:2H]`` (the f rows, the 2nd H-block) of every layer and direction
    gives the same outputs, final states and gradients."""
    fb = 1.5
    ours = LSTM(F, H, 2, bidirectional=True, dtype=np.float64, rng=8, forget_bias=fb)
    plain = LSTM(F, H, 2, bidirectional=True, dtype=np.float64, rng=8)
    theirs = torch.nn.LSTM(F, H, 2, batch_first=True, bidirectional=True, dtype=torch.float64)
    with torch.no_grad():
        for name, value in plain.params.items():
            getattr(theirs, name).copy_(torch.tensor(value))
            if name.startswith("bias_ih"):
                getattr(theirs, name)[H : 2 * H] += fb  # the usual torch recipe
    for name, value in ours.params.items():  # the shift went to the f rows of bias_ih only
        np.testing.assert_allclose(value, getattr(theirs, name).detach().numpy(), rtol=1e-15)
    rng = np.random.default_rng(9)
    x, R = rng.standard_normal((B, T, F)), rng.standard_normal((B, T, 2 * H))
    out, (h_n, c_n), cache = ours.forward(x)
    dx, _, grads = ours.backward(R, None, cache)
    tx = torch.tensor(x, requires_grad=True)
    t_out, (t_h, t_c) = theirs(tx)
    (t_out * torch.tensor(R)).sum().backward()
    _close(out, t_out, "out")
    _close(h_n, t_h, "h_n")
    _close(c_n, t_c, "c_n")
    _close(dx, tx.grad, "dx")
    for name, value in grads.items():
        _close(value, getattr(theirs, name).grad, name)
    assert not np.allclose(out, plain.forward(x)[0])  # the bias matters


def test_without_a_forget_gate_the_cell_only_adds() -> None:
    """The 1997 cell: 3H rows (i, g, o), no f in the record, c_t - c_{t-1} = i_t g_t."""
    layer = LSTM(F, H, dtype=np.float64, rng=10, forget_gate=False, peephole=True)
    assert layer.params["weight_ih_l0"].shape == (3 * H, F)
    assert layer.params["weight_hh_l0"].shape == (3 * H, H)
    assert set(layer.params) == {
        "weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "weight_ci_l0", "weight_co_l0"
    }  # fmt: skip
    x = np.random.default_rng(11).standard_normal((B, T, F))
    _, _, cache = layer.forward(x, record=True)
    rec = cache.record["l0"]
    assert list(rec) == ["i", "g", "o", "c", "h"]
    c_prev = np.concatenate([np.zeros((B, 1, H)), rec["c"][:, :-1]], axis=1)
    np.testing.assert_allclose(rec["c"] - c_prev, rec["i"] * rec["g"], rtol=0, atol=1e-14)


@pytest.mark.parametrize(
    ("build", "error", "words"),
    [
        (lambda: LSTM(F, H, forget_gate=False, forget_bias=1.0), ValueError, "forget_gate"),
        (lambda: LSTM(F, H, forget_gate=0), TypeError, "forget_gate"),
    ],
    ids=["bias-without-gate", "flag-type"],
)
def test_bad_variant_arguments_are_refused(build: Any, error: type, words: str) -> None:
    with pytest.raises(error, match=words):
        build()


@pytest.mark.parametrize(
    ("layer", "gradient"),
    [(LSTM(F, H), "bptt"), (GRU(F, H), "cec")],
    ids=["lstm-unknown", "gru-has-no-cec"],
)
def test_unknown_gradients_are_refused_by_name(layer: Any, gradient: str) -> None:
    out, _, cache = layer.forward(np.zeros((1, 2, F), dtype=np.float32))
    with pytest.raises(ValueError, match=f"gradient must be one of .*got '{gradient}'"):
        layer.backward(np.ones_like(out), None, cache, gradient=gradient)


@pytest.mark.slow
@pytest.mark.parametrize("gradient", ["full", "cec"])
def test_the_1997_lstm_learns_the_adding_problem_with_either_gradient(gradient: str) -> None:
    """Hochreiter & Schmidhuber's setting: no forget gate, and (``"cec"``) the truncated
    gradient; both reach an MSE below 0.02 on the adding problem with T = 10 in 300 steps
    (the baseline, always answering 1, scores 1/6)."""
    from pyplay.models import SequenceModel
    from pyplay.optim import Adam, clip_grad_norm
    from pyplay.tasks import make_task
    from pyplay.train import Trainer, task_loss

    task = make_task("adding", seq_len=10, rng=0)
    model = SequenceModel.for_task(task, "lstm", hidden_size=16, rng=0, forget_gate=False)
    opt = Adam(model.params, lr=2e-2)
    for _ in range(300):
        batch = task.batch(32)
        out, _, cache = model.forward(batch.inputs, None, batch.lengths)
        _, dout = task_loss(task, out, batch)
        grads = model.backward(dout, cache, gradient=gradient).grads
        clip_grad_norm(grads, 1.0)
        opt.step(grads)
    mse = Trainer(model, task).evaluate()["mse"]  # fresh examples from the task's own seed
    assert mse < 0.02 < task.baseline_loss() / 8
