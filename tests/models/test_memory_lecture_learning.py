"""The lecture's hard addressing and its form of attending to previous states both learn
associative recall (fixed seeds; Adam, batch 32, clipping 5; accuracy at the query step of
1000 fresh examples, a hard net reading its likeliest cell).

- Hard reads (a memory net, hidden 32, 8 cells of width 16, one read head drawing one cell,
  trained with the score-function estimator): 3 pairs of 3 keys and 3 values, lr 0.02, 1000
  steps. Measured: accuracy 1.00, loss 0.005 (guessing: 0.33, loss log 3 = 1.10).
- The lecture's attending RNN (hidden 32, the attended state replacing the previous state):
  6 pairs of 8 keys and 8 values, lr 0.02, 400 steps. Measured: accuracy 1.00, loss 0.005
  (guessing: 0.125, loss log 8 = 2.08).
"""

from __future__ import annotations

import pytest

from pyplay.models.memory import AttendRNN, MemoryNet
from pyplay.tasks import AssociativeRecall
from pyplay.train import Trainer


def _evaluate(model, task, steps: int) -> dict[str, float]:
    trainer = Trainer(model, task, lr=0.02, batch_size=32, clip=5.0)
    for record in trainer.run(steps):
        assert record.status == "ok"
    return trainer.evaluate(batch_size=1000, rng=99)


@pytest.mark.slow
def test_a_memory_net_with_a_hard_read_head_learns_recall() -> None:
    task = AssociativeRecall(n_pairs=3, n_keys=3, n_values=3, rng=0)
    model = MemoryNet.for_task(task, hidden_size=32, memory_size=8, memory_width=16,
                               hard="read", rng=0)  # fmt: skip
    result = _evaluate(model, task, 1000)
    assert result["accuracy"] >= 0.95 and result["loss"] < 0.1, result


@pytest.mark.slow
def test_attending_in_the_lectures_form_learns_recall() -> None:
    task = AssociativeRecall(n_pairs=6, n_keys=8, n_values=8, rng=0)
    model = AttendRNN.for_task(task, hidden_size=32, form="state", rng=0)
    result = _evaluate(model, task, 400)
    assert result["accuracy"] >= 0.95 and result["loss"] < 0.1, result
