"""The objectives of a model with one output per input step (``objective = "per_step"``, see
:mod:`pyplay.models.contract`): a :class:`~pyplay.models.SequenceModel`, a causal
:class:`~pyplay.models.transformer.lm.TransformerModel`, a memory network.

:class:`SequenceObjective`
    A per-step task: masked cross-entropy of class outputs, or masked mean squared error of
    real-valued ones (:func:`task_loss`), optionally (recurrent models) with truncated BPTT over
    a text stream: the final state of one chunk starts the next, without its gradient. A model
    with sampled choices (``hard != "none"``: the hard memory heads) adds the score-function
    term, each row's loss (:func:`row_losses`) against a running-mean baseline
    :math:`b \\leftarrow 0.9\\, b + 0.1\\, \\bar L`.
:class:`CTCObjective`
    A model reading frames, on a task whose batches give label sequences and which declares
    ``objective = "ctc"`` (:class:`~pyplay.tasks.ctc_frames.CTCFrames`): the CTC loss.

:func:`make_per_step` is the kind's factory: it refuses the options that do not fit, then
picks CTC when the task declares it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pyplay.decode.ctc import ctc_loss_logits
from pyplay.losses import cross_entropy, mse
from pyplay.models.score_function import update_baseline
from pyplay.objectives.base import BatchObjective, Options, check_step_options

__all__ = ["CTCObjective", "SequenceObjective", "make_per_step", "row_losses", "task_loss"]


def task_loss(task: Any, outputs: np.ndarray, batch: Any) -> tuple[float, np.ndarray]:
    """The task's loss on ``outputs`` and its gradient: masked cross-entropy for class
    outputs, masked mean squared error for real-valued outputs."""
    if task.output_kind == "classes":
        loss, dout = cross_entropy(outputs, batch.targets, mask=batch.mask)
    else:
        mask = np.broadcast_to(batch.mask[..., None], outputs.shape)  # (B, T, O)
        loss, dout = mse(outputs, batch.targets, mask=mask)
    return float(loss), dout


def row_losses(task: Any, outputs: np.ndarray, batch: Any) -> np.ndarray:
    """Each row's part of :func:`task_loss`, scaled so that their mean is the batch loss (B,):
    the losses the score-function term of a model with sampled choices needs."""
    if task.output_kind == "classes":
        per, _ = cross_entropy(outputs, batch.targets, mask=batch.mask, reduction="none")
    else:
        mask = np.broadcast_to(batch.mask[..., None], outputs.shape)  # (B, T, O)
        per, _ = mse(outputs, batch.targets, mask=mask, reduction="none")
    rows = per.reshape(len(per), -1).sum(axis=1)  # (B,)
    return rows * (len(per) / max(int(np.broadcast_to(batch.mask, per.shape[:2]).sum()), 1))


class SequenceObjective:
    """Per-step targets for a :class:`SequenceModel` (the carried state is for TBPTT)."""

    def __init__(self, model: Any, task: Any, tbptt: bool) -> None:
        for attr in ("batch", "output_kind", "input_kind", "input_size", "output_size"):
            if not hasattr(task, attr):
                raise TypeError(
                    f"task must be a pyplay task (it has no {attr!r}), got {type(task).__name__}"
                )
        if (task.input_kind, task.input_size, task.output_size) != (
            model.input_kind,
            model.input_size,
            model.output_size,
        ):
            raise ValueError(
                "model does not fit task: task gives "
                f"{task.input_kind} inputs of size {task.input_size} and {task.output_size} "
                f"outputs, model expects {model.input_kind} of size {model.input_size} and "
                f"{model.output_size} outputs"
            )
        if tbptt and not hasattr(task, "stream"):
            raise ValueError(f"tbptt=True needs a task with a text stream; {task.name!r} has none")
        self.model, self.task, self.tbptt = model, task, bool(tbptt)
        self.carry: Any = None
        self.pending: Any = None
        self.baseline = self.loss = 0.0  # the running mean of the loss (score-function term)

    def step(self, batch: Any) -> tuple[float, dict[str, np.ndarray], dict[str, float]]:
        """Loss, gradients and the batch's metrics."""
        state = self.carry if self.tbptt else None
        model: Any = self.model  # either kind: the same forward/backward protocol
        out, state, cache = model.forward(batch.inputs, state, batch.lengths)
        loss, dout = task_loss(self.task, out, batch)
        if getattr(model, "hard", "none") != "none":  # sampled heads: the score-function term
            rows = row_losses(self.task, out, batch)  # (B,)
            grads = model.backward(dout, cache, losses=rows, baseline=self.baseline).grads
        else:
            grads = model.backward(dout, cache).grads
        self.pending, self.loss = state, loss
        return loss, grads, {k: float(v) for k, v in self.task.metric(out, batch).items()}

    def accept(self) -> None:
        """The step was applied: carry its final state into the next chunk (TBPTT), and move
        the baseline toward the step's loss."""
        if self.tbptt:
            self.carry = self.pending
        self.baseline = update_baseline(self.baseline, self.loss)

    def evaluate(self, task: Any, batch_size: int) -> dict[str, float]:
        batch = task.batch(batch_size)
        out, _, _ = self.model.forward(batch.inputs, None, batch.lengths, training=False)
        loss, _ = task_loss(task, out, batch)
        return {"loss": loss, **{k: float(v) for k, v in task.metric(out, batch).items()}}


class CTCObjective(BatchObjective):
    """The CTC loss (torch's "mean" reduction) over the per-frame logits of a SequenceModel."""

    def __init__(self, model: Any, task: Any) -> None:
        sizes = (task.input_size, task.output_size)
        model_sizes = (model.input_size, model.output_size)
        super().__init__(model, task, sizes, model_sizes, "gives {} features and {} classes")

    def _forward(self, batch: Any) -> tuple[np.ndarray, Any, float, np.ndarray]:
        x = batch.inputs.astype(self.model.dtype, copy=False)
        logits, _, cache = self.model.forward(x, None, batch.lengths)  # (B, T, C)
        loss, dlogits = ctc_loss_logits(
            logits, batch.targets, batch.lengths, batch.target_lengths, blank=self.task.blank
        )
        return logits, cache, float(loss), dlogits

    def step(self, batch: Any) -> tuple[float, dict[str, np.ndarray], dict[str, float]]:
        """Loss, gradients and the batch's greedy exact match and label error rate."""
        logits, cache, loss, dlogits = self._forward(batch)
        grads = self.model.backward(dlogits.astype(self.model.dtype, copy=False), cache).grads
        return loss, grads, self.task.metric(logits, batch)

    def evaluate(self, task: Any, batch_size: int) -> dict[str, float]:
        batch = task.batch(batch_size)
        logits, _, loss, _ = self._forward(batch)
        return {"loss": loss, **task.metric(logits, batch)}


def make_per_step(model: Any, task: Any, options: Options) -> SequenceObjective | CTCObjective:
    """The objective of a per-step model: CTC when the task declares it (``task.objective ==
    "ctc"``), else :class:`SequenceObjective`; the options it does not take are refused
    (:func:`~pyplay.objectives.base.check_step_options`, and no TBPTT with CTC)."""
    check_step_options(model, options)
    if getattr(task, "objective", None) == "ctc":
        if options.tbptt:
            raise ValueError("tbptt=True is for character models, not for CTC")
        return CTCObjective(model, task)
    return SequenceObjective(model, task, options.tbptt)
