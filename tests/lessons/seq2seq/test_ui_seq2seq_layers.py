"""The Sequence to sequence lesson's encoder settings without a browser: layers, a
bidirectional encoder and one shared RNN as settings (address, script, model file), the
encoder and decoder states by layer and direction, and the shared-against-separate
comparison."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("panel")

from pyplay.ui.export import as_code
from pyplay.ui.lessons import SPECS
from pyplay.ui.lessons.seq2seq.shared import SHARED_STEPS, SharedComparison
from pyplay.ui.lessons.seq2seq.state import Seq2SeqState
from pyplay.ui.lessons.seq2seq.view import Seq2SeqLesson
from pyplay.ui.urlstate import parse_query, to_query


def test_layers_bidirectional_and_sharing_are_settings_of_the_model() -> None:
    state = Seq2SeqState(num_layers=2, bidirectional=True, hidden_size=8)
    m = state.model
    assert m.num_layers == 2 and m.bidirectional_encoder and not m.share_rnn
    assert "2 layers, bidirectional encoder" in state.message
    assert {"num_layers", "bidirectional", "share_rnn"} <= set(SPECS["seq2seq"].params)
    assert state.param.num_layers.softbounds == (1, 3)
    version = state.version
    state.param.update(bidirectional=False, share_rnn=True)
    assert state.version == version + 1  # one rebuild for both
    assert state.model.share_rnn and "one RNN shared by encoder and decoder" in state.message
    assert any(k.startswith("rnn.") for k in state.model.params)


def test_sharing_a_bidirectional_encoder_is_a_message_and_the_model_stays() -> None:
    state = Seq2SeqState(bidirectional=True, hidden_size=8)
    state.train(steps=2)
    model = state.model
    state.share_rnn = True
    assert state.message_kind == "danger"
    assert "untick Bidirectional encoder or Share one RNN" in state.message
    assert state.model is model and state.trainer is not None and state.trainer.step_count == 2


def test_the_settings_travel_in_the_address_script_and_model_file() -> None:
    state = Seq2SeqState(num_layers=2, bidirectional=True, hidden_size=8, wiring="bahdanau",
                         score="additive")  # fmt: skip
    query = to_query("seq2seq", state)
    assert "num_layers=2" in query and "bidirectional=true" in query.lower()
    parsed = parse_query(query)
    assert parsed.settings["num_layers"] == 2 and parsed.settings["bidirectional"] is True
    code = as_code("seq2seq", state, steps=2, log_every=1)
    assert "num_layers=2" in code and "bidirectional_encoder=True" in code
    assert "share_rnn=False" in code
    shared = Seq2SeqState(num_layers=2, share_rnn=True, hidden_size=8)
    assert "share_rnn=True" in as_code("seq2seq", shared, steps=2, log_every=1)
    shared.train(steps=3)
    other = Seq2SeqState()
    assert other.load_bytes(shared.save_bytes().getvalue()), other.message
    assert (other.num_layers, other.share_rnn, other.bidirectional) == (2, True, False)
    assert other.model is not None and other.model.share_rnn
    for k, v in shared.model.params.items():
        np.testing.assert_array_equal(other.model.params[k], v)


@pytest.mark.slow
def test_states_by_layer_and_direction_follow_the_selection_and_training() -> None:
    view = Seq2SeqLesson(Seq2SeqState(num_layers=2, bidirectional=True, hidden_size=8, seed=3))
    states = view.states
    assert list(states.enc_part.options) == [
        "layer 1, forward", "layer 1, backward", "layer 2, forward", "layer 2, backward",
    ]  # fmt: skip
    assert list(states.dec_layer.options) == ["layer 1", "layer 2"]
    view.source_box.value = "abcde"
    view.refresh()
    result = view.decoding
    assert result is not None and set(result.encoder) == {"l0", "l0_reverse", "l1", "l1_reverse"}
    assert result.encoder["l1_reverse"].shape == (5, 8)
    assert result.decoder is not None and result.weights is not None
    assert result.decoder.shape == (result.weights.shape[0], 2, 8)  # a row per output step
    # the backward direction's state at the first token has read the whole source: it is the
    # bridge's input, as the forward state at the last token is
    model = view.state.model
    ids = np.array([view.state.task_obj.src_vocab.encode(list("abcde"))])
    _, state_n, _ = model.enc.forward(model.enc_emb.forward(ids)[0], lengths=[5])
    np.testing.assert_allclose(result.encoder["l1_reverse"][0], state_n[3, 0], rtol=1e-6)
    np.testing.assert_allclose(result.encoder["l1"][-1], state_n[2, 0], rtol=1e-6)
    states.enc_part.value, states.dec_layer.value = "l1_reverse", 1
    assert view.states.enc_fig.title.text == "Encoder states h, layer 2, backward"
    assert view.states.dec_fig.title.text == "Decoder states s, layer 2"
    image = states.enc_source.data["image"][0]  # (units, positions)
    np.testing.assert_allclose(image, result.encoder["l1_reverse"].T)
    np.testing.assert_allclose(states.dec_source.data["image"][0], result.decoder[:, 1].T)
    assert states.enc_fig.xaxis[0].major_label_overrides == dict(enumerate("abcde"))
    before = image.copy()
    view.state.train(steps=5)
    view.after_training()  # the live redraw while training
    assert not np.allclose(states.enc_source.data["image"][0], before)
    view.state.param.update(bidirectional=False, share_rnn=True)  # the layer is kept
    assert states.enc_part.value == "l1" and list(states.enc_part.options) == [
        "layer 1", "layer 2",
    ]  # fmt: skip
    assert states.enc_fig.title.text == "Shared RNN reading the source, layer 2"


def test_beam_search_and_attention_work_with_a_deep_bidirectional_encoder() -> None:
    state = Seq2SeqState(num_layers=2, bidirectional=True, hidden_size=8, cell="lstm")
    state.train(steps=3)
    result = state.translate("abcd")
    assert result is not None and result.weights is not None
    np.testing.assert_allclose(result.weights.sum(axis=1), 1.0, rtol=1e-5)
    beam = state.start_beam("abcd", beam_width=3)
    assert beam is not None
    beam.run()
    assert beam.listing()


def test_the_shared_comparison_trains_both_on_the_same_batches() -> None:
    state = Seq2SeqState(hidden_size=8, min_len=2, max_len=4, num_layers=2, bidirectional=True)
    comparison = SharedComparison()
    assert "press Train both" in comparison.progress()
    assert comparison.begin(state, steps=4)
    separate, shared = comparison.trainers["separate"], comparison.trainers["shared"]
    assert shared.model.share_rnn and not separate.model.share_rnn
    assert not separate.model.bidirectional_encoder  # a shared RNN reads one way: so do both
    assert separate.model.num_layers == shared.model.num_layers == 2
    twins = [type(t.task)(**t.task.config).batch(5).src for t in (separate, shared)]
    np.testing.assert_array_equal(*twins)
    counts = comparison.parameters()
    assert 2 * counts["shared"][1] == counts["separate"][1]  # half the recurrent weights
    assert counts["separate"][0] - counts["shared"][0] == counts["shared"][1]
    assert comparison.train(steps=10) == 4 and comparison.finished
    assert [len(v) for v in comparison.losses.values()] == [4, 4]
    assert "Done: step 4 of 4" in comparison.progress()
    assert "Exact match on fresh pairs" in comparison.progress()
    assert state.trainer is not None and state.trainer.step_count == 0  # the lesson's own
    assert SharedComparison().begin(state) and SHARED_STEPS == 300


@pytest.mark.slow
def test_the_shared_section_draws_both_curves_with_parameter_counts() -> None:
    view = Seq2SeqLesson(Seq2SeqState(hidden_size=8, min_len=2, max_len=4))
    section = view.shared
    section.steps = view.by_length.steps = 3
    view.by_length.compare()
    assert view.by_length.state.running
    section.compare()  # no event loop here: the loop's first slice does not run
    assert section.state.setting is not None
    assert section.state.running and not view.by_length.state.running  # one at a time
    view.session.start()
    assert view.state.running and not section.state.running
    view.session.pause()
    section.state.train(steps=3)
    section.after_training()
    data = section.plot.source.data
    assert list(data["step"]) == [1, 2, 3]
    assert len(data["loss"]) == len(data["shared"]) == 3
    labels = [item.label.value for item in section.plot.log_fig.legend[0].items[:2]]
    assert labels[0].startswith("separate encoder and decoder: ") and "recurrent" in labels[0]
    assert labels[1].startswith("one shared RNN: ")
    assert "wiring attention" in section.setting.object
