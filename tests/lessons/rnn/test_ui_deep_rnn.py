"""Deep, bidirectional and residual stacks in the "Recurrent networks" lesson, without a
browser (issues 19 and 20): the settings reach the model, survive the page address, a saved
file and "show as code"; the look-inside views show the layer and direction picked, with
titles that say which, live while training; and the residual comparison trains the plain and
the residual stack on the same batches, where six plain GRU layers stay at the baseline and
the residual ones learn."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("panel")

from addresses import apply_query
from pyplay.ui.export import as_code
from pyplay.ui.lessons import SPECS
from pyplay.ui.lessons.rnn.residual import COMPARE_STEPS, PROBE_EVERY, ResidualComparison
from pyplay.ui.lessons.rnn.state import LessonState
from pyplay.ui.lessons.rnn.view import RecurrentLesson
from pyplay.ui.plots import positive
from pyplay.ui.urlstate import to_query

STACK = {"num_layers": 3, "bidirectional": True, "residual": True}


def _state(**settings: object) -> LessonState:
    return LessonState(**{"hidden_size": 6, "seq_len": 5, "batch_size": 4, **settings})


# ------------------------------------------------------------------ settings
def test_the_settings_build_the_stack_they_name() -> None:
    state = _state(**STACK)
    rnn, head = state.model.rnn, state.model.head
    assert (rnn.num_layers, rnn.bidirectional, rnn.residual) == (3, True, True)
    assert "rnn.weight_hh_l2_reverse" in state.model.params
    assert head.params["weight"].shape == (1, 2 * 6)  # the output layer reads [h_fwd; h_bwd]
    assert state.train(steps=2) and np.isfinite(state.history["loss"]).all()
    internals = state.inspect().internals
    assert list(internals) == ["l0", "l0_reverse", "l1", "l1_reverse", "l2", "l2_reverse"]
    state.task = "parity"  # a task that reads its whole input: both directions
    assert state.model.rnn.bidirectional
    for task in ("charlm", "sine"):  # next-step prediction: a backward direction would cheat
        state.task = task
        assert not state.model.rnn.bidirectional and state.bidirectional  # kept, not used
        assert "One direction only" in state.message and state.message_kind == "info"
        assert state.model.head.params["weight"].shape[1] == 6
    state.task = "adding"
    assert state.model.rnn.bidirectional and "One direction" not in state.message
    assert SPECS["rnn"].params.count("residual") == SPECS["rnn"].params.count("bidirectional") == 1
    assert state.param.num_layers.softbounds == (1, 6)


@pytest.mark.slow
def test_the_bidirectional_box_is_greyed_out_for_next_step_prediction() -> None:
    view = RecurrentLesson(_state())
    box = next(w for w in view.controls() if getattr(w, "name", "").startswith("Bidirectional"))
    assert not box.disabled
    box.value = True
    assert view.state.model.rnn.bidirectional
    view.state.task = "charlm"
    assert box.disabled
    view.state.task = "copy"
    assert not box.disabled and view.state.model.rnn.bidirectional


def test_the_settings_round_trip_through_the_address_a_file_and_the_code() -> None:
    source = _state(cell="gru", **STACK)
    query = to_query("rnn", source)
    for part in ("num_layers=3", "bidirectional=true", "residual=true"):
        assert part in query.split("&")
    target = _state()
    assert apply_query(query, {"rnn": target}) == ("rnn", [])
    assert {k: getattr(target, k) for k in STACK} == STACK
    assert target.model.config == source.model.config
    lesson, messages = apply_query("lesson=rnn&residual=maybe&num_layers=7", {"rnn": target})
    assert lesson == "rnn" and len(messages) == 2
    assert "residual must be true or false" in messages[0] and "num_layers" in messages[1]
    assert target.residual and target.num_layers == 3  # bad values change nothing
    source.train(steps=2)
    loaded = _state()
    assert loaded.load_bytes(source.save_bytes().getvalue()), loaded.message
    assert {k: getattr(loaded, k) for k in STACK} == STACK
    for name, value in source.model.params.items():
        np.testing.assert_array_equal(loaded.model.params[name], value)
    code = as_code("rnn", source, steps=3, log_every=1)
    assert "num_layers=3" in code and "bidirectional=True" in code and "residual=True" in code
    assert "no residual connections: no PyTorch twin" in code
    plain = as_code("rnn", _state(num_layers=2, bidirectional=True), steps=3, log_every=1)
    assert "residual" not in plain and "torch.nn.LSTM(" in plain  # the twin is built


# ------------------------------------------------------------------ the views
@pytest.mark.slow
def test_the_views_show_the_layer_and_direction_picked() -> None:
    view = RecurrentLesson(_state(num_layers=2, bidirectional=True))
    view.panel()
    choice = view.choice
    assert choice.panel.visible and choice.direction.visible
    assert list(choice.layer.options) == ["Layer 1", "Layer 2"]
    titles = [fig.title.text for fig, _ in view._maps.values()]
    assert titles[1] == "Layer 1, forward direction: forget gate f_t"
    choice.layer.value, choice.direction.value = 1, "backward"
    expected = view.state.inspect().internals["l1_reverse"]
    fig, source = view._maps["f"]
    assert fig.title.text == "Layer 2, backward direction: forget gate f_t"
    np.testing.assert_allclose(source.data["image"][0], expected["f"].T, rtol=1e-6)
    # adding: the loss reads the last step only, which the top backward layer reads first,
    # so no gradient reaches its earlier steps (zeros are drawn as gaps on the log axis)
    grad = view.state.inspect().grad_norms["l1_reverse"]
    assert (grad[:-1] == 0).all() and grad[-1] > 0
    np.testing.assert_allclose(view.grad_current.data["norm"], positive(grad), rtol=1e-6)
    assert view.grad_fig.title.text.startswith("Layer 2, backward direction: gradient through")
    view.every_layer.value = True  # every layer-direction at once, each in the legend
    shown = [i.label.value for i in view.grad_fig.legend[0].items if i.visible]
    assert shown[-4:] == ["layer 1", "layer 1 backward", "layer 2", "layer 2 backward"]
    assert "this model" not in shown and len(view.grad_current.data["norm"]) == 0
    assert view.grad_fig.title.text.startswith("Every layer: gradient through time")
    for key, norms in view.state.inspect().grad_norms.items():
        np.testing.assert_allclose(view.layer_lines.source.data[key], positive(norms), rtol=1e-6)
    view.state.num_layers = 1  # a new model: the choice follows it
    assert list(choice.layer.options) == ["Layer 1"] and choice.layer.value == 0
    view.state.bidirectional = False
    assert not choice.panel.visible and view._maps["f"][0].title.text == "forget gate f_t"
    assert view.grad_fig.title.text == "Gradient through time, ||dL/dh_t||"


@pytest.mark.slow
def test_the_picked_layer_follows_the_model_while_it_trains() -> None:
    view = RecurrentLesson(_state(num_layers=3))
    view.panel()
    view.choice.layer.value = 2
    before = view._maps["h"][1].data["image"][0].copy()
    view.state.running = True  # what Train sets (no event loop here: slices by hand)
    view.session._next_refresh = 0.0
    view.session.train_slice()  # a live redraw (the model so far), then a slice of training
    trained = view.state.inspect().internals["l2"]["h"].T  # the model after that slice
    view.session._next_refresh = 0.0
    view.session.train_slice()  # the next live redraw shows it, then the next slice trains
    view.state.running = False
    after = view._maps["h"][1].data["image"][0]
    np.testing.assert_allclose(after, trained, rtol=1e-6)
    assert not np.allclose(before, after) and view.session.refresh_log  # redrawn live


# ------------------------------------------------------------------ residual comparison
@pytest.mark.slow
def test_six_plain_gru_layers_stay_at_the_baseline_where_residual_ones_learn() -> None:
    """Issue 20: the same six-layer GRU stack, the same initial weights and batches."""
    lesson = LessonState(cell="gru", num_layers=6, hidden_size=16)  # adding, T=10, seed 0
    comparison = ResidualComparison()
    assert comparison.begin(lesson)
    comparison.running = True
    comparison.train()
    assert comparison.finished and not comparison.running
    assert len(comparison.losses["plain"]) == len(comparison.losses["residual"]) == 150
    plain, residual = comparison.recent("plain"), comparison.recent("residual")
    assert plain > 0.8 and residual < 0.1, (plain, residual)  # x the baseline
    # the gradient reaching the first layer: at least ten times larger with residuals
    assert comparison.probes == list(range(0, COMPARE_STEPS + 1, PROBE_EVERY))
    ratio = np.array(comparison.first_layer["residual"]) / comparison.first_layer["plain"]
    assert np.median(ratio) > 10 and ratio.min() > 1, ratio
    assert lesson.trainer.step_count == 0  # the lesson's own model is left alone


@pytest.mark.slow
def test_the_comparison_section_needs_layers_and_draws_both_stacks() -> None:
    view = RecurrentLesson(_state(num_layers=1))
    section = view.residual
    section.compare()
    assert section.state.setting is None and "set Layers to 2 or more" in section.progress.object
    view.state.num_layers = 3
    view.session.start()  # the lesson's own training (no event loop here: only the flag)
    section.compare()
    assert not view.state.running and section.state.running  # one training at a time
    assert "LSTM, 3 layers of 6 units" in section.setting.object
    section.session.budget_s = 1e-3  # a few steps a slice (0.25 s ran all 150 on a fast machine)
    section.session.train_slice()
    section.session.pause()
    n = section.state.step_count
    assert n >= 1 and len(section.loss_source.data["plain"]) == n
    assert len(section.grad_source.data["residual"]) == len(section.state.probes) >= 1
    assert section.loss_fig.title.text == "Loss of 3 layers, plain and residual"
    assert section.progress.object.startswith(f"Paused: step {n} of {COMPARE_STEPS}")
    view.session.start()  # Train pauses the comparison
    assert not section.state.running
