"""What every toy task shares: the :class:`Batch` it yields and the :class:`Task` protocol.

A task draws batches from its own seeded Generator, says what kind of inputs and outputs it
has (so a model can be sized for it), which output positions count in the loss (``mask``), how
well a trivial predictor does (``baseline_loss``), and how to score outputs (``metric``).
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay._checks import as_generator, check_int

__all__ = ["MAX_BATCH", "Batch", "Task"]

MAX_BATCH = 65536  # the most examples one batch may ask for


@dataclass(frozen=True)
class Batch:
    """One batch of a task.

    inputs : (B, T) int64 token ids, or (B, T, F) float inputs
    targets : (B, T) int64 class ids, or (B, T, O) float targets
    mask : (B, T) bool, the output positions that count in the loss and the metric
    lengths : (B,) int64 true lengths of a ragged batch, or None when all are T long
    """

    inputs: np.ndarray
    targets: np.ndarray
    mask: np.ndarray
    lengths: np.ndarray | None = None


class Task(abc.ABC):
    """Base of the toy tasks. Subclasses set the class attributes and implement ``_batch``,
    ``baseline_loss`` and ``describe``; ``config`` holds the constructor's arguments."""

    name: str = ""
    title: str = ""  # the name a page shows for the task
    input_kind: str = "tokens"  # "tokens" | "real"
    output_kind: str = "classes"  # "classes" | "real"
    input_size: int = 0
    output_size: int = 0
    # the targets are the next inputs (next-step prediction): a model must read the input only
    # up to the step it answers, so a backward direction, which reads the rest, would see the
    # answer (SequenceModel.for_task refuses bidirectional=True; the page offers one direction)
    predicts_next_input: bool = False

    def __init__(self, rng: np.random.Generator | int | None, **config: Any) -> None:
        self.rng = as_generator(rng)
        self.config: dict[str, Any] = config

    @abc.abstractmethod
    def _batch(self, batch_size: int) -> Batch:
        """Draw ``batch_size`` examples from ``self.rng``."""

    @abc.abstractmethod
    def baseline_loss(self) -> float:
        """Loss of the trivial predictor named in the task's docstring."""

    @abc.abstractmethod
    def describe(self) -> str:
        """A paragraph for the playground's help text."""

    def batch(self, batch_size: int) -> Batch:
        """A fresh batch of ``batch_size`` examples."""
        return self._batch(check_int("batch_size", batch_size, min_value=1, max_value=MAX_BATCH))

    def metric(self, outputs: np.ndarray, batch: Batch) -> dict[str, float]:
        """Accuracy (class outputs) or mean squared error (real outputs) over counted positions."""
        m = batch.mask
        if not m.any():
            return {}
        if self.output_kind == "classes":
            hits = (outputs.argmax(axis=-1) == batch.targets)[m]
            return {"accuracy": float(hits.mean())}
        err = ((outputs - batch.targets) ** 2)[m]
        return {"mse": float(err.mean())}
