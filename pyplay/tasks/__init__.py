"""Toy tasks with seeded generators: each a small class with a docstring saying what it tests.

Beside them, the data they hand a model and how a model is scored on them: the batches
(:mod:`.base`, the pairs and pointer batches of :mod:`.pairs`, the binary trees of
:mod:`.binary_tree`) and a sequence-to-sequence model's accuracy by source length
(:mod:`.by_length`). The package imports no model: the models import it."""

from __future__ import annotations

from typing import Any

from pyplay.tasks.adding import AddingProblem
from pyplay.tasks.base import Batch, Task
from pyplay.tasks.charlm import CharLM
from pyplay.tasks.copy import DelayedRecall
from pyplay.tasks.parentheses import BalancedParentheses
from pyplay.tasks.parity import Parity
from pyplay.tasks.recall import AssociativeRecall
from pyplay.tasks.series import NumberSeries
from pyplay.tasks.sine import NoisySystem, SinePrediction

__all__ = [
    "TASKS",
    "AddingProblem",
    "AssociativeRecall",
    "BalancedParentheses",
    "Batch",
    "CharLM",
    "DelayedRecall",
    "NoisySystem",
    "NumberSeries",
    "Parity",
    "SinePrediction",
    "Task",
    "make_task",
]

TASKS: dict[str, type[Task]] = {
    "adding": AddingProblem,
    "copy": DelayedRecall,
    "parentheses": BalancedParentheses,
    "parity": Parity,
    "sine": SinePrediction,
    "system": NoisySystem,
    "charlm": CharLM,
    "series": NumberSeries,
    "recall": AssociativeRecall,
}


def make_task(name: str, **kwargs: Any) -> Task:
    """The task called ``name`` built with ``kwargs``; unknown names or arguments are refused
    with a message listing what is accepted."""
    if name not in TASKS:
        raise ValueError(f"task must be one of {', '.join(sorted(TASKS))}, got {name!r}")
    cls = TASKS[name]
    try:
        return cls(**kwargs)
    except TypeError as err:
        if "unexpected keyword" in str(err):
            import inspect

            allowed = [p for p in inspect.signature(cls).parameters]
            raise TypeError(f"task {name!r} accepts {allowed}, got {sorted(kwargs)}") from None
        raise
