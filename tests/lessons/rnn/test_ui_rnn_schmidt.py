"""Schmidt's row-vector RNN and BPTT sums on the recurrent-networks lesson page
(pyplay.ui.lessons.rnn.schmidt): eq. 1-2 against the lesson model's forward, eq. 6, 9-10 and
11-12 computed as the sums they write against the core's backward, in float64, to 1e-10."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pyplay.objectives.per_step import task_loss
from pyplay.ui.lessons.rnn.schmidt import (
    EQUATIONS,
    bptt_general,
    bptt_powers,
    forward,
    grad_who,
    schmidt_markdown,
    schmidt_weights,
)
from pyplay.ui.lessons.rnn.state import LessonState

TOL = {"rtol": 1e-10, "atol": 1e-12}
LECTURES = Path("/work/shared/lectures")


def _case(nonlinearity: str, task: str = "copy", train: int = 3) -> dict[str, Any]:
    """The lesson's plain RNN (trained a few steps), in float64, on one batch of its task:
    Schmidt's weights, X_1..X_T (the embedded inputs), the loss gradient per step and the
    core's forward outputs and backward gradients."""
    state = LessonState(cell="rnn", nonlinearity=nonlinearity, task=task, seq_len=6,
                        hidden_size=5, batch_size=4)  # fmt: skip
    assert state.model is not None, state.message
    state.train(steps=train)
    model = type(state.model).from_config({**state.model.config, "dtype": "float64"})
    for name, p in state.model.params.items():
        model.params[name][...] = p
    batch = state.task_obj.batch(3)
    Y, _, cache = model.forward(batch.inputs)  # (n, T, q)
    _, dY = task_loss(state.task_obj, Y, batch)  # (n, T, q): ∂ℓₜ/∂Oₜ at [:, t]
    grads = model.backward(dY, cache).grads
    if "embedding.weight" in model.params:
        X3 = model.params["embedding.weight"][batch.inputs]  # (n, T, d)
    else:
        X3 = np.asarray(batch.inputs, dtype=np.float64)
    T = X3.shape[1]
    return {
        "W": schmidt_weights(model.params),
        "X": [X3[:, t] for t in range(T)],
        "dl_dO": [dY[:, t] for t in range(T)],
        "Y": Y,
        "grads": grads,
    }


@pytest.mark.parametrize("nonlinearity", ["tanh", "linear", "relu"])
def test_schmidt_eq1_eq2_are_the_lesson_models_forward(nonlinearity: str):
    c = _case(nonlinearity)
    _, O, _ = forward(c["W"], c["X"], nonlinearity)
    np.testing.assert_allclose(np.stack(O, axis=1), c["Y"], **TOL)


@pytest.mark.parametrize("nonlinearity", ["tanh", "linear"])
def test_schmidt_eq6_is_the_heads_gradient(nonlinearity: str):
    c = _case(nonlinearity)
    H, _, _ = forward(c["W"], c["X"], nonlinearity)
    np.testing.assert_allclose(grad_who(H, c["dl_dO"]), c["grads"]["head.weight"].T, **TOL)


@pytest.mark.parametrize("nonlinearity", ["tanh", "relu", "linear"])
@pytest.mark.parametrize("task", ["copy", "adding"])
def test_schmidt_eq9_eq10_sums_over_k_are_the_core_backward(nonlinearity: str, task: str):
    """Σₜ Σₖ₌₁ᵗ through ∂Hₜ/∂Hₖ, for any φₕ; 'adding' has a loss at the last step only,
    'copy' at every step (the outer sum over t matters)."""
    c = _case(nonlinearity, task)
    H, _, dphi = forward(c["W"], c["X"], nonlinearity)
    g_hh, g_xh = bptt_general(c["W"], c["X"], H, dphi, c["dl_dO"])
    np.testing.assert_allclose(g_hh, c["grads"]["rnn.weight_hh_l0"].T, **TOL)
    np.testing.assert_allclose(g_xh, c["grads"]["rnn.weight_ih_l0"].T, **TOL)


@pytest.mark.parametrize("task", ["copy", "adding"])
def test_schmidt_eq11_eq12_powers_are_the_core_backward_for_a_linear_rnn(task: str):
    """(W_hhᵀ)ᵗ⁻ᵏ by matrix_power, summed over t and k ≤ t, as eq. 11 and 12 write it:
    the gradient when φₕ is the identity (with H_{k-1} in eq. 11, see the next test)."""
    c = _case("linear", task)
    H, _, _ = forward(c["W"], c["X"], "linear")
    g_hh, g_xh = bptt_powers(c["W"], c["X"], H, c["dl_dO"])
    np.testing.assert_allclose(g_hh, c["grads"]["rnn.weight_hh_l0"].T, **TOL)
    np.testing.assert_allclose(g_xh, c["grads"]["rnn.weight_ih_l0"].T, **TOL)


def test_schmidt_eq11_with_the_printed_h_k_is_not_the_gradient():
    """The page says: in eq. 11 the state W_hh multiplies at step k is H_{k-1}, not H_k."""
    c = _case("linear")
    H, _, _ = forward(c["W"], c["X"], "linear")
    printed, _ = bptt_powers(c["W"], c["X"], H, c["dl_dO"], state_index=0)
    assert not np.allclose(printed, c["grads"]["rnn.weight_hh_l0"].T, rtol=1e-3)


def test_schmidt_eq11_eq12_powers_are_not_the_gradient_with_tanh():
    """The page says the powers assume a linear φₕ: with tanh they miss φₕ′."""
    c = _case("tanh", train=30)
    H, _, _ = forward(c["W"], c["X"], "tanh")
    _, g_xh = bptt_powers(c["W"], c["X"], H, c["dl_dO"])
    assert not np.allclose(g_xh, c["grads"]["rnn.weight_ih_l0"].T, rtol=1e-3)


def test_schmidt_the_page_shows_each_equation_with_its_number_and_the_names():
    text = schmidt_markdown()
    for n, eq in EQUATIONS.items():
        assert f"`{eq}`   ({n})" in text
    for name in ("rnn.weight_ih_l0", "rnn.weight_hh_l0", "rnn.bias_ih_l0", "head.weight"):
        assert f"`{name}`" in text
    assert "Schmidt's overview" in text and "the lecture" not in text
    assert "identity (a linear RNN): Schmidt does not say so, but his derivation needs it" in text
    assert "Hₖ₋₁ (eq. 1)" in text


def test_schmidt_the_equations_are_in_the_lecture():
    if not LECTURES.is_dir():
        pytest.skip("the lectures' texts are not here")
    text = next(LECTURES.glob("003_*.txt")).read_text()
    for latex in (
        r"\mathbf{H}_{t}=\phi_{h}\left(\mathbf{X}_{t}\mathbf{W}_{xh}+\mathbf{H}_{t-1}"
        r"\mathbf{W}_{hh}+\mathbf{b}_{h}\right) (1)",
        r"\mathbf{O}_{t}=\phi_{o}\left(\mathbf{H}_{t}\mathbf{W}_{ho}+\mathbf{b}_{o}\right) (2)",
        r"\sum_{k=1}^{t}\left(\mathbf{W}_{hh}^{\top}\right)^{t-k}\cdot\mathbf{H}_{k} (11)",
        r"\sum_{k=1}^{t}\left(\mathbf{W}_{hh}^{\top}\right)^{t-k}\cdot\mathbf{X}_{k} (12)",
        r"\sum_{k=1}^{t}\frac{\partial\mathbf{H}_{t}}{\partial\mathbf{H}_{k}}\cdot"
        r"\frac{\partial\mathbf{H}_{k}}{\partial\mathbf{W}_{xh}} (10)",
    ):
        assert latex in text, latex


@pytest.mark.slow
def test_schmidt_section_is_beside_the_gradient_view():
    from pyplay.ui.lessons.rnn.view import RecurrentLesson

    lesson = RecurrentLesson()
    parts = lesson.sections()
    heading = parts.index("## Gradient through time")
    schmidt = parts.index("## Backpropagation through time in Schmidt's notation")
    assert schmidt == heading + 5  # right after the gradient view and the CEC panel
    assert parts[schmidt + 1].object == schmidt_markdown()
    phi = parts[schmidt + 2]
    assert phi.name == "φₕ (RNN cell)" and phi.value == "tanh"
    phi.value = "linear"
    assert lesson.state.nonlinearity == "linear"
