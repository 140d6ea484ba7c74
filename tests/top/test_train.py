"""The training generator: learning thresholds, divergence recovery, pause/resume, TBPTT."""

from __future__ import annotations

import numpy as np
import pytest

from pyplay.models import SequenceModel
from pyplay.tasks import make_task
from pyplay.train import Trainer


def _losses(trainer: Trainer, steps: int) -> list[float]:
    records = list(trainer.run(steps))
    assert all(r.status == "ok" for r in records), records[-1].message
    return [r.loss for r in records]


def test_records_carry_step_loss_norm_lr_seconds():
    task = make_task("parity", seq_len=8, rng=0)
    model = SequenceModel.for_task(task, "gru", hidden_size=8, rng=0)
    trainer = Trainer(model, task, lr=0.01, batch_size=8)
    records = list(trainer.run(3))
    assert [r.step for r in records] == [1, 2, 3]
    for r in records:
        assert np.isfinite(r.loss) and r.loss > 0
        assert np.isfinite(r.grad_norm) and r.grad_norm > 0
        assert r.lr == pytest.approx(0.01)
        assert r.seconds > 0
        assert "accuracy" in r.metrics or r.metrics  # the task reports at least one metric


def test_pause_and_resume_equal_one_run():
    def make() -> Trainer:
        task = make_task("copy", rng=3)
        model = SequenceModel.for_task(task, "lstm", hidden_size=12, rng=3)
        return Trainer(model, task, lr=0.01, batch_size=4)

    straight, paused = make(), make()
    a = _losses(straight, 10)
    b = _losses(paused, 4)
    b += _losses(paused, 6)  # a new generator resumes from the trainer's state
    np.testing.assert_array_equal(a, b)
    for name, value in straight.model.params.items():
        np.testing.assert_array_equal(value, paused.model.params[name], err_msg=name)


def test_divergence_stops_restores_and_explains():
    task = make_task("sine", rng=0)
    model = SequenceModel.for_task(task, "rnn", hidden_size=8, nonlinearity="relu", rng=0)
    trainer = Trainer(model, task, optimizer="sgd", lr=1e12, clip=None, batch_size=8)
    records = list(trainer.run(50))
    last = records[-1]
    assert last.status == "diverged"
    assert len(records) < 50
    assert "non-finite" in last.message and "learning rate" in last.message
    for name, value in model.params.items():
        assert np.isfinite(value).all(), name
    # the restored parameters give a finite loss again, and training can go on at a sane rate
    trainer.optimizer.lr = 1e-3
    more = list(trainer.run(3))
    assert all(r.status == "ok" for r in more)


def test_model_must_fit_task():
    task = make_task("adding", rng=0)
    model = SequenceModel("lstm", input_kind="tokens", input_size=5, output_size=1, rng=0)
    with pytest.raises(ValueError, match="model does not fit task"):
        Trainer(model, task)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"lr": -1.0}, "lr"),
        ({"batch_size": 0}, "batch_size"),
        ({"optimizer": "adagrad"}, "optimizer"),
        ({"clip": 0.0}, "clip"),
    ],
)
def test_bad_settings_name_the_argument(kwargs, match):
    task = make_task("parity", rng=0)
    model = SequenceModel.for_task(task, "rnn", hidden_size=4, rng=0)
    with pytest.raises((ValueError, TypeError), match=match):
        Trainer(model, task, **kwargs)


@pytest.mark.slow
def test_lstm_solves_adding_problem_where_equal_size_rnn_does_not():
    """The textbook's point: at T=50 the LSTM learns the adding problem, a tanh RNN with the
    same number of parameters stays near the trivial baseline (MSE 1/6)."""
    seq_len, steps = 50, 1500
    task_l = make_task("adding", seq_len=seq_len, rng=0)
    task_r = make_task("adding", seq_len=seq_len, rng=0)
    lstm = SequenceModel.for_task(task_l, "lstm", hidden_size=16, dtype=np.float64, rng=0)
    rnn = SequenceModel.for_task(task_r, "rnn", hidden_size=34, dtype=np.float64, rng=0)
    assert abs(lstm.num_parameters() - rnn.num_parameters()) / lstm.num_parameters() < 0.03
    baseline = task_l.baseline_loss()
    results = {}
    for name, model, task in (("lstm", lstm, task_l), ("rnn", rnn, task_r)):
        trainer = Trainer(model, task, lr=1e-2, batch_size=32, clip=1.0)
        _losses(trainer, steps)
        results[name] = trainer.evaluate(batch_size=512)["loss"]
    assert results["lstm"] < 0.1 * baseline, results
    assert results["rnn"] > 0.7 * baseline, results


@pytest.mark.slow
def test_charlm_with_truncated_bptt_learns():
    task = make_task("charlm", seq_len=16, rng=0)
    model = SequenceModel.for_task(task, "lstm", hidden_size=32, rng=0)
    trainer = Trainer(model, task, lr=1e-2, batch_size=16, tbptt=True)
    losses = _losses(trainer, 300)
    uniform = np.log(task.input_size)
    assert losses[0] > 0.9 * uniform  # a fresh model knows nothing
    # after 300 chunks it beats the unigram model, i.e. it uses the context it carries
    assert np.mean(losses[-20:]) < task.baseline_loss()
