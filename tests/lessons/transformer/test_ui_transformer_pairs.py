"""The transformer lesson's encoder-decoder mode without a browser: the settings reach both
models, both train on the very same batches of pairs, the loss falls, the three kinds of
attention, decoding, the lesson file round trip and the view."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from addresses import apply_query
from pyplay.io import load_model
from pyplay.models.seq2seq import EncoderDecoder
from pyplay.models.transformer.lm import TransformerModel
from pyplay.models.transformer.seq2seq import TransformerSeq2Seq
from pyplay.tasks.seq2seq import DateFormat, Reversal, Sorting, VariableCopy
from pyplay.train import Trainer
from pyplay.ui.lessons.transformer.pairs import PairView
from pyplay.ui.lessons.transformer.state import TransformerLessonState
from pyplay.ui.lessons.transformer.view import TransformerLesson
from pyplay.ui.urlstate import to_query

SMALL = {"arch": "encoder_decoder", "d_model": 16, "nhead": 2, "num_layers": 1}


def test_the_settings_reach_both_models() -> None:
    state = TransformerLessonState(
        arch="encoder_decoder", pair_task="copy_var", d_model=24, nhead=2, num_layers=3,
        positional="learned", seq_len=7, seed=4,
    )  # fmt: skip
    model = state.model
    assert isinstance(model, TransformerSeq2Seq) and state.message_kind == "info"
    assert (model.d_model, model.nhead, model.positional) == (24, 2, "learned")
    assert model.num_encoder_layers == model.num_decoder_layers == 3
    assert isinstance(state.task_obj, VariableCopy) and state.task_obj.max_len == 7
    lstm = state.lstm_trainer.model
    assert isinstance(lstm, EncoderDecoder)
    assert (lstm.cell, lstm.wiring, lstm.hidden_size) == ("lstm", "attention", 24)
    assert state.trainer.optimizer.lr == pytest.approx(state.lr)
    state.pair_task = "dates"  # a new pair task rebuilds
    assert isinstance(state.task_obj, DateFormat) and isinstance(state.model, TransformerSeq2Seq)
    state.arch = "decoder"  # and back: the decoder-only model of the default lesson
    assert isinstance(state.model, TransformerModel)
    assert state.heads(0) is not None and state.pair_heads(0) is None


def test_both_models_train_on_the_same_batches_as_a_fresh_task_draws_them() -> None:
    state = TransformerLessonState(**SMALL, seed=2)
    seen: dict[str, list[Any]] = {"transformer": [], "lstm": []}
    for name, trainer in (("transformer", state.trainer), ("lstm", state.lstm_trainer)):
        step = trainer.objective.step

        def spy(batch: Any, step: Any = step, name: str = name) -> Any:
            seen[name].append(batch)
            return step(batch)

        trainer.objective.step = spy  # type: ignore[method-assign]
    rows = state.train(steps=3)
    assert len(rows) == 3 and all(np.isfinite(r[2]) for r in rows)
    fresh = Reversal(min_len=3, max_len=state.seq_len, rng=2)
    for a, b in zip(seen["transformer"], seen["lstm"], strict=True):
        assert a is b  # one batch, both models
        np.testing.assert_array_equal(a.src, fresh.batch(32).src)


def test_a_trainer_given_a_batch_trains_on_it() -> None:
    """``Trainer.run(steps, batch)``: two copies of one model on two tasks of different seeds
    take the same steps when both are given the same batch."""
    tasks = [Reversal(rng=0), Reversal(rng=1)]
    trainers = [Trainer(TransformerSeq2Seq(11, 11, d_model=8, nhead=2, rng=0), t) for t in tasks]
    batch = tasks[0].batch(8)
    losses = [[r.loss for r in t.run(2, batch)] for t in trainers]
    assert losses[0] == losses[1] and losses[0][1] < losses[0][0]
    assert next(trainers[1].run(1)).loss != next(trainers[0].run(1)).loss  # drawn: differ


@pytest.mark.slow
def test_the_loss_falls_for_both_models_on_copy_pairs() -> None:
    """Copy of 3-6 letters, one layer each side, seed 0: measured after 150 steps, the
    transformer's mean loss of the last 10 steps 0.020, the LSTM encoder-decoder's 0.041."""
    state = TransformerLessonState(
        arch="encoder_decoder", pair_task="copy_var", num_layers=1, seq_len=6, seed=0
    )
    state.train(steps=150)
    transformer = float(np.mean(state.history["loss"][-10:]))
    lstm = float(np.mean(state.history["lstm"][-10:]))
    assert transformer < 0.1 and lstm < 0.2, (transformer, lstm)
    assert "transformer loss" in state.status and "baseline" not in state.status


def _check(view: PairView, layers: int, heads: int) -> None:
    S, U = len(view.source), len(view.read)
    assert len(view.written) == U and view.read[0] == "<bos>" and view.written[-1] == "<eos>"
    assert view.read[1:] == view.written[:-1]
    assert len(view.encoder) == len(view.decoder) == len(view.cross) == layers
    for enc, dec, cross in zip(view.encoder, view.decoder, view.cross, strict=True):
        assert enc.shape == (heads, S, S) and dec.shape == (heads, U, U)
        assert cross.shape == (heads, U, S)
        for w in (enc, dec, cross):
            np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=1e-5)
            assert w.min() >= 0.0
        assert np.triu(dec, k=1).max() == 0.0  # masked: no step sees a later one
        assert dec[:, *np.tril_indices(U)].min() > 0.0  # every earlier step has some weight
        assert np.triu(enc, k=1).max() > 0.0  # the encoder sees the whole source


def test_the_three_kinds_of_attention() -> None:
    state = TransformerLessonState(**{**SMALL, "num_layers": 2}, pair_task="dates")
    view = state.pair_heads(5)
    assert view is not None
    _check(view, 2, 2)
    assert "-" in view.written and " -> " in view.text  # an ISO date is written
    assert state.pair_heads(5).source == view.source  # a fixed pair, as the model trains
    assert state.pair_heads(6).text != view.text
    state.train(steps=2)
    trained = state.pair_heads(5)
    assert trained is not None and not np.allclose(trained.cross[0], view.cross[0])


def test_decoding_a_typed_source_with_both_models() -> None:
    state = TransformerLessonState(**SMALL, pair_task="copy_var")
    state.train(steps=2)
    result = state.decode("abcab")
    assert result is not None
    transformer, lstm = result
    assert isinstance(transformer, str) and isinstance(lstm, str)
    assert set(transformer + lstm) <= set("abcdefgh")
    assert state.decode("xyz!") is None and "Cannot decode" in state.message
    assert "not in the vocabulary" in state.message
    assert state.decode("   ") is None and "type a source" in state.message
    state.arch = "decoder"
    assert state.decode("abc") is None and "encoder-decoder" in state.message


@pytest.mark.slow
def test_the_lesson_file_round_trips_both_encoder_decoders() -> None:
    source = TransformerLessonState(**SMALL, pair_task="dates", positional="learned", seed=3)
    source.train(steps=3)
    data = source.save_bytes().getvalue()
    state = TransformerLessonState()  # the decoder-only default
    assert state.load_bytes(data), state.message
    assert state.arch == "encoder_decoder" and state.pair_task == "dates"
    assert state.positional == "learned" and state.seed == 3
    assert isinstance(state.model, TransformerSeq2Seq)
    pairs = ((state.model, source.model), (state.lstm_trainer.model, source.lstm_trainer.model))
    for mine, theirs in pairs:
        assert type(mine) is type(theirs) and mine.params.keys() == theirs.params.keys()
        for k, v in theirs.params.items():
            np.testing.assert_array_equal(mine.params[k], v)
    assert state.trainer.step_count == state.lstm_trainer.step_count == 3
    assert state.history["lstm"] == pytest.approx(source.history["lstm"])
    assert state.decode("March 5, 2021") == source.decode("March 5, 2021")
    twin = load_model(data, beside="lstm")  # natively too
    assert isinstance(twin, EncoderDecoder)
    assert isinstance(load_model(data), TransformerSeq2Seq)
    state.train(steps=1)
    assert state.trainer.step_count == state.lstm_trainer.step_count == 4


@pytest.mark.slow
def test_the_view_switches_parts_and_shows_a_pick_at_once() -> None:
    view = TransformerLesson(TransformerLessonState(d_model=16, nhead=2, num_layers=2))
    view.panel()
    assert len(view.pairs.sources["cross"].data["x"]) == 0  # nothing before it is chosen
    assert all(p.visible for p in view.decoder_only) and not any(p.visible for p in view.with_pairs)
    view.state.arch = "encoder_decoder"
    assert not any(p.visible for p in view.decoder_only) and all(p.visible for p in view.with_pairs)
    assert not view.baseline.visible  # pairs have no trivial baseline: nor its legend entry
    assert not any(f.legend[0].items[-1].visible for f in view.loss_plot.figures)
    pairs = view.pairs
    S, U = len(pairs.view.source), len(pairs.view.read)
    assert len(pairs.sources["cross"].data["weight"]) == U * S
    assert len(pairs.sources["encoder"].data["weight"]) == S * S
    assert pairs.title.object.startswith("Layer 1, head 1, pair 0: ")  # the line above the maps
    assert pairs.source_box.value  # an example of the task to decode
    before = list(pairs.sources["cross"].data["weight"])
    state_view = pairs.view
    pairs.head.value = 2  # another head of the same forward pass
    assert pairs.view is state_view and "head 2" in pairs.title.object
    assert list(pairs.sources["cross"].data["weight"]) != before
    view.state.train(steps=2)
    view.after_training()  # the live redraw
    assert pairs.view is not state_view
    pairs.decode()
    assert "Transformer:" in pairs.outputs.object and "LSTM with attention:" in pairs.outputs.object
    view.state.arch = "decoder"
    assert view.baseline.visible and all(p.visible for p in view.decoder_only)


def test_the_address_carries_the_architecture_and_the_pair_task() -> None:
    a = TransformerLessonState(**SMALL, pair_task="sorting", seed=2)
    query = to_query("transformer", a)
    assert "arch=encoder_decoder" in query and "pair_task=sorting" in query
    b = TransformerLessonState()
    assert apply_query(query, {"transformer": b}) == ("transformer", [])
    assert isinstance(b.model, TransformerSeq2Seq) and isinstance(b.task_obj, Sorting)
    assert (b.arch, b.pair_task, b.d_model, b.nhead) == ("encoder_decoder", "sorting", 16, 2)
    c = TransformerLessonState()
    assert (
        apply_query("?lesson=transformer&arch=seq2seq&pair_task=copy", {"transformer": c})[1] == []
    )
    assert (c.arch, c.pair_task) == ("encoder_decoder", "copy_var")  # the aliases
    _, messages = apply_query("?lesson=transformer&arch=rnn", {"transformer": c})
    assert any("arch must be one of decoder, encoder_decoder" in m for m in messages), messages
