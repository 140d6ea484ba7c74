"""Training an encoder-decoder with the common Trainer: teacher forcing, scheduled sampling,
source reversal, evaluation, and the errors of options that do not fit the model."""

from __future__ import annotations

import numpy as np
import pytest

from pyplay.models import SequenceModel
from pyplay.models.seq2seq import EncoderDecoder
from pyplay.objectives import Seq2SeqObjective
from pyplay.tasks import make_task
from pyplay.tasks.pairs import BOS, PAD, reverse_sources
from pyplay.tasks.seq2seq import Reversal, VariableCopy
from pyplay.train import Trainer


def model_for(task, **kwargs) -> EncoderDecoder:
    V_s, V_t = len(task.src_vocab), len(task.tgt_vocab)
    return EncoderDecoder(V_s, V_t, embedding_dim=8, hidden_size=16, rng=0, **kwargs)


def test_reverse_sources_keeps_padding() -> None:
    src = np.array([[3, 4, 5, PAD], [6, PAD, PAD, PAD], [3, 4, 5, 6]])
    out = reverse_sources(src, np.array([3, 1, 4]))
    np.testing.assert_array_equal(out, [[5, 4, 3, PAD], [6, PAD, PAD, PAD], [6, 5, 4, 3]])


def test_scheduled_sampling_inputs() -> None:
    task = Reversal(rng=0)
    batch = task.batch(64)
    model = model_for(task)
    lengths = batch.tgt_mask.sum(axis=1)
    none = Seq2SeqObjective(model, task, sampling=0.0)._inputs(batch.src, batch, lengths)
    np.testing.assert_array_equal(none, batch.tgt_in)
    mixed = Seq2SeqObjective(model, task, sampling=1.0, rng=3)._inputs(batch.src, batch, lengths)
    assert (mixed[:, 0] == BOS).all()
    assert (mixed[~batch.tgt_mask] == batch.tgt_in[~batch.tgt_mask]).all()  # padding kept
    inside = batch.tgt_mask.copy()
    inside[:, 0] = False
    assert (mixed[inside] != batch.tgt_in[inside]).mean() > 0.5  # an untrained model's draws
    assert mixed.min() >= 0 and mixed.max() < len(task.tgt_vocab)
    half = Seq2SeqObjective(model, task, sampling=0.5, rng=3)._inputs(batch.src, batch, lengths)
    changed = (half[inside] != batch.tgt_in[inside]).mean()
    assert 0.2 < changed < (mixed[inside] != batch.tgt_in[inside]).mean()


@pytest.mark.slow
@pytest.mark.parametrize("options", [{}, {"sampling": 0.25}, {"reverse_source": True}])
def test_trainer_trains_an_encoder_decoder(options: dict) -> None:
    task = VariableCopy(n_symbols=4, min_len=2, max_len=4, rng=0)
    model = model_for(task, wiring="attention")
    trainer = Trainer(model, task, lr=0.02, batch_size=32, **options)
    records = list(trainer.run(150))
    assert all(r.status == "ok" for r in records) and records[-1].step == 150
    first = np.mean([r.loss for r in records[:10]])
    last = np.mean([r.loss for r in records[-10:]])
    assert last < 0.5 * first, (first, last)
    assert 0.0 <= records[-1].metrics["accuracy"] <= 1.0
    result = trainer.evaluate(batch_size=100)
    assert result["exact_match"] >= 0.5, result


@pytest.mark.slow
def test_sutskever_reversal_helps_the_plain_encoder_decoder_copy() -> None:
    """Copy without attention: with the source read backwards the first target symbol is the
    one read last, so the plain wiring learns faster (measured here with a fixed seed)."""
    scores = {}
    for reverse in (False, True):
        task = VariableCopy(n_symbols=6, min_len=5, max_len=8, rng=0)
        trainer = Trainer(model_for(task), task, lr=0.02, batch_size=32, reverse_source=reverse)
        for _ in trainer.run(200):
            pass
        scores[reverse] = trainer.evaluate(batch_size=200)["loss"]
    print(f"\n[seq2seq] copy loss after 200 steps: forward {scores[False]:.3f}, "
          f"reversed {scores[True]:.3f}")  # fmt: skip
    assert scores[True] < scores[False]


def test_options_that_do_not_fit_are_refused() -> None:
    pair_task = Reversal(rng=0)
    seq_task = make_task("adding", seq_len=5, rng=0)
    seq_model = SequenceModel.for_task(seq_task, "lstm", hidden_size=4, rng=0)
    with pytest.raises(ValueError, match="sampling and reverse_source are for an EncoderDecoder"):
        Trainer(seq_model, seq_task, sampling=0.5)
    with pytest.raises(ValueError, match="tbptt=True is for character models"):
        Trainer(model_for(pair_task), pair_task, tbptt=True)
    with pytest.raises(ValueError, match="sampling must be"):
        Trainer(model_for(pair_task), pair_task, sampling=1.5)
    with pytest.raises(TypeError, match="task must be a pair task"):
        Trainer(model_for(pair_task), seq_task)
    with pytest.raises(ValueError, match="model does not fit task: task has vocabularies"):
        Trainer(EncoderDecoder(5, 5), pair_task)
    with pytest.raises(TypeError, match="reverse_source must be True or False"):
        Trainer(model_for(pair_task), pair_task, reverse_source="yes")
    with pytest.raises(
        TypeError,
        match="model must be a pyplay SequenceModel, TransformerModel, MemoryNet, AttendRNN or Enc",
    ):
        Trainer(object(), pair_task)  # type: ignore[arg-type]
