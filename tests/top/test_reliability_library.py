"""Issue 34, the library: no quiet cheating (a bidirectional model on a task that predicts its
next input), no learning rate that slips past the divergence guard, every argument checked
when it is given (``rng``, ``schedule``, a task, a batch, a series of values), and a cap on the
length of a sequence a recurrent layer reads, declared once in :mod:`pyplay.limits`.

Each test is named after the case of the issue it reproduces."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import pyplay.limits
from pyplay.models import SequenceModel
from pyplay.nn import GRU, LSTM, RNN
from pyplay.optim import SGD, Adam, StepLR
from pyplay.tasks import make_task
from pyplay.tasks.pairs import PairBatch
from pyplay.train import Trainer

NEXT_INPUT_TASKS = {
    "charlm": {"seq_len": 8},
    "sine": {"seq_len": 8},
    "series": {"values": np.sin(np.arange(40.0)), "seq_len": 8},
}


def _adding() -> tuple[SequenceModel, Any]:
    task = make_task("adding", seq_len=6, rng=0)
    return SequenceModel.for_task(task, "lstm", hidden_size=4, rng=0), task


def _snapshot(model: SequenceModel) -> dict[str, np.ndarray]:
    return {k: v.copy() for k, v in model.params.items()}


def _same(model: SequenceModel, snapshot: dict[str, np.ndarray]) -> bool:
    return all(np.array_equal(model.params[k], v) for k, v in snapshot.items())


@pytest.mark.parametrize("name", sorted(NEXT_INPUT_TASKS))
def test_bidirectional_model_on_a_next_input_task_is_refused(name):
    task = make_task(name, rng=0, **NEXT_INPUT_TASKS[name])
    assert task.predicts_next_input
    with pytest.raises(ValueError, match=rf"task '{name}': it predicts the next input"):
        SequenceModel.for_task(task, "gru", hidden_size=4, bidirectional=True)
    assert not SequenceModel.for_task(task, "gru", hidden_size=4).bidirectional  # one way: fine
    adding = make_task("adding", seq_len=6)
    assert SequenceModel.for_task(adding, "gru", hidden_size=4, bidirectional=True).bidirectional


class _RateTo:
    """A schedule of ``optimizer`` that sets ``rate`` from its ``at``-th step on."""

    def __init__(self, optimizer: Any, rate: float, at: int = 2) -> None:
        self.optimizer, self.rate, self.at, self.t = optimizer, rate, at, 0

    def step(self) -> None:
        self.t += 1
        if self.t >= self.at:
            self.optimizer.lr = self.rate


@pytest.mark.parametrize("rate", [float("inf"), float("nan"), 0.0, -0.01])
def test_bad_rate_from_a_schedule_ends_the_run_keeping_the_last_good_weights(rate):
    model, task = _adding()
    optimizer = Adam(model.params, lr=0.01)
    trainer = Trainer(model, task, optimizer=optimizer, schedule=_RateTo(optimizer, rate))
    records, after_two = [], None
    for record in trainer.run(10):
        records.append(record)
        if record.step == 2 and record.status == "ok":
            after_two = _snapshot(model)
    assert [r.status for r in records] == ["ok", "ok", "diverged"]
    assert f"the learning rate became {rate} (set by the schedule)" in records[-1].message
    assert after_two is not None and _same(model, after_two)  # the last whole step's weights
    assert trainer.step_count == 2 and optimizer.lr == 0.01  # the last good rate, not the bad
    for _ in range(2):  # resuming never raises: the bad rate was never kept as a good state
        again = list(trainer.run(5))
        assert again[-1].status == "diverged"
        assert all(np.isfinite(v).all() for v in model.params.values())


def test_no_step_reports_ok_with_non_finite_weights():
    """A finite but huge rate (StepLR, gamma 1e300) overflows the weights at its first use."""
    model, task = _adding()
    optimizer = SGD(model.params, lr=0.1)
    trainer = Trainer(model, task, optimizer=optimizer, schedule=StepLR(optimizer, 1, 1e300))
    records = []
    for record in trainer.run(5):
        records.append(record)
        assert all(np.isfinite(v).all() for v in model.params.values()), record
    assert [r.status for r in records] == ["ok", "diverged"]
    assert "the update made" in records[-1].message and "non-finite" in records[-1].message
    assert trainer.step_count == 1


def test_a_schedule_that_overflows_ends_the_run_instead_of_raising():
    """StepLR computes ``gamma ** t``: 1e200 ** 2 is an OverflowError in Python."""
    model, task = _adding()
    optimizer = SGD(model.params, lr=1e-250)
    trainer = Trainer(model, task, optimizer=optimizer, schedule=StepLR(optimizer, 1, 1e200))
    records = list(trainer.run(5))
    assert [r.status for r in records] == ["ok", "diverged"]
    assert "the schedule failed to set the next learning rate" in records[-1].message


@pytest.mark.parametrize("rate", [float("inf"), float("nan"), 0.0, -1.0])
def test_an_optimiser_holding_a_bad_rate_is_refused_at_construction(rate):
    model, task = _adding()
    optimizer = SGD(model.params, lr=0.1)
    optimizer.lr = rate
    with pytest.raises(ValueError, match=r"optimizer\.lr must be"):
        Trainer(model, task, optimizer=optimizer)


@pytest.mark.parametrize(("rng", "error"), [("bad", TypeError), (1.5, TypeError), (-1, ValueError)])
def test_trainer_rng_is_checked_at_construction(rng, error):
    model, task = _adding()
    with pytest.raises(error, match="rng must be a"):
        Trainer(model, task, rng=rng)


@pytest.mark.parametrize("schedule", ["cosine", 3, object()])
def test_unknown_schedule_is_refused_at_construction_naming_what_is_accepted(schedule):
    model, task = _adding()
    with pytest.raises(TypeError, match=r"schedule must be None or .*CosineAnnealingLR"):
        Trainer(model, task, schedule=schedule)


def test_schedule_of_another_optimiser_is_refused():
    model, task = _adding()
    other = StepLR(SGD(model.params, lr=0.1), step_size=10)
    with pytest.raises(ValueError, match="schedule must set this trainer's optimiser"):
        Trainer(model, task, optimizer="sgd", lr=0.1, schedule=other)


def test_for_task_none_names_the_task_argument():
    with pytest.raises(TypeError, match=r"^task must be a pyplay task .* got NoneType"):
        SequenceModel.for_task(None, "lstm")


@pytest.mark.parametrize(
    "batch",
    ["x", 3, np.zeros((2, 6, 2)), PairBatch(*(np.zeros((1, 2), np.int64) for _ in range(5)))],
    ids=["str", "int", "array", "pair-batch"],
)
def test_train_step_with_a_wrong_batch_names_the_batch_argument(batch):
    model, task = _adding()
    trainer = Trainer(model, task)
    before = _snapshot(model)
    with pytest.raises(TypeError, match=r"^batch must be"):
        trainer.train_step(batch)
    assert _same(model, before) and trainer.step_count == 0


@pytest.mark.parametrize(
    "values",
    [[1e308, -1e308] * 20, [1e308, 1.0] * 20, [1e200, -3.0] * 20],
    ids=["mean-overflows", "sum-overflows", "spread-overflows"],
)
def test_series_values_that_overflow_are_refused_without_numpy_warnings(values):
    with np.errstate(all="warn"), pytest.raises(ValueError, match=r"^values must be numbers"):
        make_task("series", values=values, seq_len=5)  # warnings are errors (pyproject)


@pytest.mark.parametrize("layer", [LSTM, GRU, RNN])
def test_recurrent_layers_cap_the_sequence_length(layer, monkeypatch):
    monkeypatch.setattr(pyplay.limits, "MAX_SEQ_LEN", 50)
    net = layer(2, 3, rng=0)
    out, _, _ = net.forward(np.zeros((1, 50, 2), np.float32))  # at the cap: read
    assert out.shape == (1, 50, 3)
    name = layer.__name__
    with pytest.raises(ValueError, match=rf"x of {name} .* has 51 steps; at most 50 .*MAX_SEQ_LEN"):
        net.forward(np.zeros((1, 51, 2), np.float32))


def test_the_sequence_cap_is_above_every_task_length():
    copy = make_task("copy", seq_len=1000, delay=10_000)  # the longest: 2 * 1000 + 10,000
    assert copy.batch(1).inputs.shape[1] <= pyplay.limits.MAX_SEQ_LEN
    assert pyplay.limits.MAX_SEQ_LEN < 2_000_000  # the input ran for minutes


def test_an_update_cut_short_by_ctrl_c_is_undone():
    """KeyboardInterrupt half-way through the optimiser's update: the trainer stays at a whole
    step (what the command line saves on Ctrl-C)."""
    model, task = _adding()
    trainer = Trainer(model, task, optimizer="sgd", lr=0.1)
    list(trainer.run(2))
    before = _snapshot(model)
    update = trainer.optimizer._update

    def half(name: str, p: np.ndarray, g: np.ndarray) -> None:
        if name == "head.weight":
            raise KeyboardInterrupt
        update(name, p, g)

    trainer.optimizer._update = half  # type: ignore[method-assign]
    with pytest.raises(KeyboardInterrupt):
        trainer.train_step()
    assert _same(model, before) and trainer.step_count == 2
