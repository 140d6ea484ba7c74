"""The "LSTM and GRU (lecture 8)" sub-tab of the dynamic networks lesson without a browser: what
it shows is :class:`~pyplay.dynamic.book_lstm.BookLSTM` / :class:`~pyplay.dynamic.book_gru.BookGRU`
for the chosen variant (compared with calling the core directly), the variants and the forget
gate's bias reach the network, the read-out's gradient passes central differences, training
learns, bad input is refused next to its control, and the settings go through the address."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from addresses import apply_query
from gradcheck import assert_grad_close, numeric_grad
from pyplay.dynamic import BookGRU, BookLSTM
from pyplay.dynamic.book_output import book_network, named_params, output_loss
from pyplay.tasks.signals import SYSTEMS, signal
from pyplay.ui.lessons.dynamic.book_state import BookRNNState
from pyplay.ui.lessons.dynamic.book_view import PYTORCH, BookRNNView
from pyplay.ui.lessons.dynamic.view import LECTURE_RNN, SUBTABS, DynamicLesson
from pyplay.ui.urlstate import to_query, url_fields

VARIANTS: dict[str, dict[str, Any]] = {
    "lstm": {},
    "lstm-no-forget-gate": {"forget_gate": False},
    "lstm-peephole": {"peephole": True, "forget_bias": 2.5},
    "lstm-peephole-no-forget-gate": {"peephole": True, "forget_gate": False},
    "gru": {"network": "gru"},
}


def _direct(state: BookRNNState) -> tuple[Any, np.ndarray]:
    """The core called directly: a network of the state's class and weights, run on the
    state's signal, and its read-out (T,)."""
    net = state.net
    if isinstance(net, BookGRU):
        twin: BookLSTM | BookGRU = BookGRU(net.IW, net.LW, net.b)
    else:
        twin = BookLSTM(net.IW, net.LW, net.b, net.peephole or None, forget_gate=net.forget_gate)
    p = signal(state.signal, state.steps)  # (T,)
    trace = twin.forward(p[None, :, None])
    return trace, trace.a[6][0] @ state.LW7[0] + state.b7[0]  # (T,)


@pytest.mark.slow
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_the_view_shows_the_core_networks_outputs(variant: str) -> None:
    view = BookRNNView(BookRNNState(hidden_size=4, signal="sine", steps=15, seed=3,
                                    **VARIANTS[variant]))  # fmt: skip
    s = view.state
    assert not view.loss_plot.baseline.visible  # no curve yet
    view._stream(s.train(steps=3))  # trained weights, not only the drawn ones
    assert view.loss_plot.source.data["step"] == [1, 2, 3]
    assert view.loss_plot.baseline.visible and view.loss_plot.baseline.location == np.var(s.y)
    view.after_training()
    trace, a7 = _direct(s)
    run = s.run()
    for m in range(1, 7):
        np.testing.assert_array_equal(run.trace.a[m], trace.a[m])
    np.testing.assert_allclose(run.a7, a7, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(np.asarray(view.run_source.data["a"]), run.a7)  # drawn
    np.testing.assert_array_equal(
        np.asarray(view.run_source.data["target"]), SYSTEMS[s.system](run.p[None])[0]
    )
    first = view.values.object.splitlines()[1].split()  # t, p(1), a1..a6 (neuron 1), a7
    expected = [trace.a[m][0, 0, 0] for m in range(1, 7)] + [a7[0]]
    np.testing.assert_allclose([float(x) for x in first[2:]], expected, atol=5e-5)
    if s.network == "lstm" and not s.forget_gate:
        np.testing.assert_array_equal(trace.a[3], 1.0)  # no layer 3: a3 = 1
    print(f"{variant}: loss after 3 steps {s.history['loss'][-1]:.4f}")


def test_variants_and_the_forget_bias_reach_the_network_equations_and_diagram() -> None:
    view = BookRNNView(BookRNNState(hidden_size=2))
    s = view.state

    def labels() -> list[str]:
        return list(view.diagram_sources.nodes.data["label"])

    def edges() -> list[str]:
        return list(view.diagram_sources.labels.data["text"])

    assert isinstance(s.net, BookLSTM) and s.net.forget_gate and not s.net.peephole
    np.testing.assert_array_equal(s.net.b[3], [1.0, 1.0])  # the lecture's "all ones"
    assert labels() == ["p¹", "a⁶(t−1)", *(f"layer {m}" for m in (1, 2, 3, 4, 5, 6))]
    assert "LW⁵˒⁵ = I D" in edges() and edges().count("∘") == 4  # 1, 2, 3 -> 5 and 4 -> 6
    assert "a³(t) = logsig(" in view.equations.object and "LW²˒⁵" not in view.equations.object
    s.forget_bias = 3.0
    np.testing.assert_array_equal(s.net.b[3], [3.0, 3.0])
    assert "b³ = 3 at the start" in s.status
    s.forget_bias = 0.5
    assert "below lecture 8's 1 or more" in s.status
    s.peephole = True
    assert sorted(s.net.peephole) == [2, 3, 4] and "LW⁴˒⁵ a⁵(t)" in view.equations.object
    assert "LW²˒⁵ a⁵(t−1)" in view.equations.object
    assert {"LW²˒⁵ D", "LW³˒⁵ D", "LW⁴˒⁵"} <= set(edges())
    s.forget_gate = False
    assert not s.net.forget_gate and 3 not in s.net.b and sorted(s.net.peephole) == [2, 4]
    assert "layer 3" not in labels() and "a³(t) = logsig(" not in view.equations.object
    assert "a⁵(t) = LW⁵˒⁵ a⁵(t−1) + a²(t) ∘ a¹(t)" in view.equations.object
    s.network = "gru"
    assert isinstance(s.net, BookGRU)
    assert "LW⁵˒⁶ = −I" in edges() and "LW¹˒³" in edges()
    assert "a³(t) = a²(t) ∘ a⁶(t−1)" in view.equations.object
    assert "[1 − a⁴(t)] ∘ a⁶(t−1)" in view.equations.object
    assert "a⁵(t) = LW⁵˒¹ a¹(t) + LW⁵˒⁶ a⁶(t−1) = a¹(t) − a⁶(t−1)" in view.equations.object


def test_the_pytorch_note_says_what_the_parity_tests_prove() -> None:
    # tests/dynamic/test_book_lstm_gru.py: equal when W_hn is diagonal and b_hn = 0, z negated into
    # a4 = 1 - z; different otherwise; the LSTM equal to 1e-12
    for claim in ("W_hn is diagonal", "b_hn = 0", "a⁴ = 1 − z", "negated", "1e-12",
                  "before the weight", "after it"):  # fmt: skip
        assert claim in PYTORCH, claim


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_read_out_gradient_passes_central_differences(variant: str) -> None:
    kw = {k: v for k, v in VARIANTS[variant].items() if k != "network"}
    kind = VARIANTS[variant].get("network", "lstm")
    net, LW7, b7 = book_network(kind, 3, input_size=2, rng=5, **kw)
    rng = np.random.default_rng(1)
    p, y = rng.standard_normal((2, 6, 2)), rng.standard_normal((2, 6, 1))
    _, grads, _, _ = output_loss(net, LW7, b7, p, y)
    params = named_params(net, LW7, b7)
    assert sorted(grads) == sorted(params)
    for name, value in params.items():
        numeric = numeric_grad(lambda: output_loss(net, LW7, b7, p, y)[0], value)
        assert_grad_close(grads[name], numeric, f"{variant} {name}")


@pytest.mark.slow
@pytest.mark.parametrize("variant,below", [("lstm", 0.002), ("gru", 0.004)])
def test_training_imitates_the_first_order_system(variant: str, below: float) -> None:
    s = BookRNNState(**VARIANTS[variant])
    records = s.train(steps=150)
    first, last = records[0].loss, min(r.loss for r in records[-10:])
    print(f"{variant}: mean squared error {first:.4f} -> {last:.5f} in 150 steps")
    assert last < below < first


def test_bad_input_is_named_next_to_its_control_and_nothing_is_lost() -> None:
    s = BookRNNState()
    s.train(steps=2)
    net, steps = s.net, s._step
    s.forget_bias = 50.0
    assert s.problem.startswith("Forget-gate bias b³ must be a number from -10 to 10, got 50")
    assert s.net is net and s._step == steps  # the trained network is kept
    assert s.train(steps=1) == [] and s.stopped.startswith("Not trained: Forget-gate bias")
    s.forget_bias = 1.5
    assert s.problem == "" and s.net is not net
    s.lr = -1.0
    assert s.lr_problem == "Learning rate must be above 0 and at most 10, got -1."
    assert s.train(steps=1) == []
    s.lr = 0.01
    assert s.lr_problem == "" and len(s.train(steps=1)) == 1
    fresh = BookRNNState(forget_bias=float("nan"))  # a state made with a bad bias still starts
    assert fresh.problem.endswith("got nan; the network starts from 1.")
    np.testing.assert_array_equal(fresh.net.b[3], 1.0)


@pytest.mark.slow
def test_the_sub_tab_is_a_lesson_with_its_settings_in_the_address() -> None:
    lesson = DynamicLesson()
    lesson.panel()
    assert SUBTABS[-1] == "LSTM and GRU (lecture 8)"
    update = {
        "network": "gru", "hidden_size": 5, "forget_gate": False, "peephole": True,
        "forget_bias": 2.0, "signal": "sine", "steps": 30, "system": "narendra", "lr": 0.05,
        "seed": 7,
    }  # fmt: skip
    assert list(url_fields(LECTURE_RNN)) == list(update)
    view = lesson.show_part(LECTURE_RNN)
    assert lesson.shown_part() == LECTURE_RNN and view is lesson.parts[LECTURE_RNN]
    assert lesson.panel().active == len(SUBTABS) - 1
    query = to_query(LECTURE_RNN, BookRNNState(**update))
    assert "network=gru" in query and "forget_bias=2" in query
    assert apply_query(query, {LECTURE_RNN: view.state}) == (LECTURE_RNN, [])
    assert {k: getattr(view.state, k) for k in update} == update
    assert isinstance(view.state.net, BookGRU) and view.state.net.S == 5
    _, messages = apply_query(f"?lesson={LECTURE_RNN}&hidden_size=20", {LECTURE_RNN: view.state})
    assert messages == ["Address: hidden_size must be an integer from 1 to 8, got '20'; ignored."]
    assert view.state.hidden_size == 5
