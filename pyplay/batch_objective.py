"""The base of the objectives that carry nothing from one batch to the next.

An *objective* is the strategy of :class:`~pyplay.train.Trainer` for one kind of model, chosen
by :func:`~pyplay.objectives.make_objective` from the ``objective`` the model's class declares
(:mod:`pyplay.models.contract`). The trainer asks of it:

- ``step(batch)`` -> ``(loss, grads, metrics)``: the batch's loss, the gradient of every
  parameter (keyed as ``model.params``) and the batch's metrics;
- ``accept()``: the step was applied (carry a state, move a baseline, or nothing);
- ``evaluate(task, batch_size)`` -> metrics on a fresh batch, ``"loss"`` among them;
- ``tbptt`` and ``carry``: whether a recurrent state is carried between batches, and that
  state (None: start afresh).

:class:`BatchObjective` is what those that carry nothing share. It sits below both
:mod:`pyplay.objectives` and the objectives kept beside their models
(:mod:`pyplay.models.glimpse_objective`, :mod:`pyplay.models.recursive.objective`), so that
none of them imports another upward.
"""

from __future__ import annotations

from typing import Any

__all__ = ["BatchObjective"]


class BatchObjective:
    """What the objectives that carry nothing from one batch to the next share: no truncated
    BPTT, no carried state, nothing to do when a step is applied, and the check that the model
    is sized for the task.

    Parameters
    ----------
    model, task
        The model to train and the task it learns.
    task_sizes, model_sizes : tuple of int
        The sizes that must agree, the task's and the model's, in the same order.
    task_has : str
        How the error names the task's sizes: a format string with one ``{}`` per size, such
        as ``"has {} features and {} classes"``.
    """

    tbptt = False
    carry = None

    def __init__(
        self,
        model: Any,
        task: Any,
        task_sizes: tuple[int, ...],
        model_sizes: tuple[int, ...],
        task_has: str,
    ) -> None:
        if task_sizes != model_sizes:
            expects = " and ".join(str(n) for n in model_sizes)
            raise ValueError(
                f"model does not fit task: task {task_has.format(*task_sizes)}, "
                f"model expects {expects}"
            )
        self.model, self.task = model, task

    def accept(self) -> None:
        """Nothing is carried between batches."""
