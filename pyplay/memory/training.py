"""Training the memory nets with the common :class:`~pyplay.train.Trainer` loop.

:func:`pyplay.objectives.make_objective` lists the model classes it accepts and does not list
these yet, so :class:`MemoryTrainer` builds the per-step objective
(:class:`~pyplay.objectives.SequenceObjective`, masked cross-entropy or MSE) itself and keeps
everything else of the Trainer: the steps, clipping, divergence handling, ``run``, ``evaluate``.
Once ``make_objective`` accepts :class:`MemoryNet` and :class:`AttendRNN`, ``Trainer`` can be
used directly and this class reduces to it.
"""

from __future__ import annotations

from typing import Any

from pyplay._checks import check_choice, check_float, check_int
from pyplay.memory.attend_rnn import AttendRNN
from pyplay.memory.memnet import MemoryNet
from pyplay.objectives import SequenceObjective
from pyplay.train import OPTIMIZERS, Trainer

__all__ = ["MemoryTrainer"]


class MemoryTrainer(Trainer):
    """A :class:`~pyplay.train.Trainer` for :class:`MemoryNet` and :class:`AttendRNN` on a
    per-step task (other models go to the plain Trainer's rules).

    Parameters
    ----------
    model, task, optimizer, lr, batch_size, clip : as :class:`~pyplay.train.Trainer`
    """

    def __init__(
        self,
        model: Any,
        task: Any,
        *,
        optimizer: str = "adam",
        lr: float = 1e-2,
        batch_size: int = 32,
        clip: float | None = 1.0,
    ) -> None:
        if not isinstance(model, MemoryNet | AttendRNN):
            super().__init__(model, task, optimizer=optimizer, lr=lr, batch_size=batch_size,
                             clip=clip)  # fmt: skip
            return
        self.objective: Any = SequenceObjective(model, task, False)  # type: ignore[arg-type]
        self.model: Any = model
        self.task = task
        self.batch_size = check_int("batch_size", batch_size, min_value=1, max_value=4096)
        self.clip = (
            None if clip is None else check_float("clip", clip, min_value=0.0, min_inclusive=False)
        )
        name = check_choice("optimizer", optimizer, tuple(OPTIMIZERS))
        lr = check_float("lr", lr, min_value=0.0, min_inclusive=False)
        self.optimizer = OPTIMIZERS[name](model.params, lr=lr)
        self.schedule = None
        self.tbptt = False
        self.step_count = 0
        self.message = ""
        self._stream = None
        self._good_params = {k: v.copy() for k, v in model.params.items()}
        self._good_optim = self._copy_state(self.optimizer.state_dict())
