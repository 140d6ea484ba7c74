"""What every objective is, the base of those that carry nothing from one batch to the next,
and the options of :class:`~pyplay.train.Trainer` that only some kinds of model take.

An *objective* is the strategy of :class:`~pyplay.train.Trainer` for one kind of model, chosen
by :func:`~pyplay.objectives.make_objective` from the ``objective`` the model's class declares
(:mod:`pyplay.models.contract`). The trainer asks of it:

- ``step(batch)`` -> ``(loss, grads, metrics)``: the batch's loss, the gradient of every
  parameter (keyed as ``model.params``) and the batch's metrics;
- ``accept()``: the step was applied (carry a state, move a baseline, or nothing);
- ``evaluate(task, batch_size)`` -> metrics on a fresh batch, ``"loss"`` among them;
- ``tbptt`` and ``carry``: whether a recurrent state is carried between batches, and that
  state (None: start afresh).

:class:`BatchObjective` is what those that carry nothing share. :class:`Options` are the
trainer's options that belong to one kind of model (truncated BPTT, scheduled sampling, source
reversal); each kind's *factory* (``(model, task, options) -> objective``, the entries of
:data:`pyplay.objectives.table.FACTORIES`) refuses those that do not fit it, with the errors
of :func:`not_a_model` and :func:`check_step_options`, or builds the objective.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "BatchObjective",
    "Factory",
    "Options",
    "batch_only",
    "check_step_options",
    "not_a_model",
    "require_output_kind",
]


@dataclass(frozen=True)
class Options:
    """The trainer's options that only some kinds of model take, as given (each factory, or
    the objective it builds, checks the values).

    Parameters
    ----------
    tbptt : bool
        Carry the recurrent state from one batch to the next (a per-step model whose class
        says ``tbptt = True``, on a task with a text stream).
    sampling : float
        The scheduled-sampling probability (a sequence-to-sequence model only).
    reverse_source : bool
        Read every source backwards (a sequence-to-sequence model only).
    rng : numpy.random.Generator, int seed or None
        For the scheduled-sampling draws.
    """

    tbptt: Any = False
    sampling: Any = 0.0
    reverse_source: Any = False
    rng: Any = 0

    def any_given(self) -> bool:
        """Whether any of ``tbptt``, ``sampling`` and ``reverse_source`` asks for something
        (truthy): a kind that takes none of them is refused then."""
        return bool(self.tbptt or self.sampling or self.reverse_source)


Factory = Callable[[Any, Any, Options], Any]  # (model, task, options) -> objective


def not_a_model(model: Any) -> TypeError:
    """The error for a model whose class declares no objective that fits the options given
    (an object that is no pyplay model, or a model given an option its kind does not take)."""
    return TypeError(
        "model must be a pyplay SequenceModel, TransformerModel, MemoryNet, AttendRNN or "
        f"EncoderDecoder (or an LDDN), got {type(model).__name__}"
    )


def require_output_kind(task: Any, kind: str, what: str) -> None:
    """Refuse a ``task`` whose ``output_kind`` is not ``kind`` (TypeError "task must be
    ``what``, got <its class>"): the check of every objective made for one kind of task."""
    if getattr(task, "output_kind", None) != kind:
        raise TypeError(f"task must be {what}, got {type(task).__name__}")


def check_step_options(model: Any, options: Options) -> None:
    """Refuse the options a model that reads one sequence (no source) does not take: a carried
    state (``tbptt``) for a model whose class does not say ``tbptt = True``, and the
    sequence-to-sequence options (ValueError)."""
    if options.tbptt and not getattr(model, "tbptt", False):
        raise ValueError(
            "tbptt=True carries a recurrent state between batches; not for a "
            f"{type(model).__name__}"
        )
    if options.sampling or options.reverse_source:
        raise ValueError("sampling and reverse_source are for an EncoderDecoder on a pair task")


def batch_only(objective: Callable[[Any, Any], Any]) -> Factory:
    """The factory of a kind that takes none of the options: ``objective(model, task)`` when
    none is given, else the TypeError of :func:`not_a_model`."""

    def make(model: Any, task: Any, options: Options) -> Any:
        if options.any_given():
            raise not_a_model(model)
        return objective(model, task)

    make.__doc__ = f"{getattr(objective, '__name__', 'objective')}(model, task); no options."
    return make


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
