"""What one training step computes, for each kind of model: the strategies of
:class:`~pyplay.train.Trainer`, chosen by :func:`make_objective` from the ``objective`` the
model's class declares (:mod:`pyplay.models.contract`), never from the class itself. Those
that carry nothing from one batch to the next build on
:class:`~pyplay.batch_objective.BatchObjective`.

:class:`SequenceObjective`
    A :class:`~pyplay.models.SequenceModel` or a causal
    :class:`~pyplay.models.transformer.lm.TransformerModel` on a per-step task (masked cross-entropy
    or MSE), optionally (recurrent models) with truncated BPTT over a text stream.
:class:`CTCObjective`
    A :class:`~pyplay.models.SequenceModel` reading frames, trained with the CTC loss on a task
    whose batches give label sequences and which declares ``objective = "ctc"``
    (:class:`~pyplay.tasks.ctc_frames.CTCFrames`).
:class:`~pyplay.dynamic.objective.LDDNObjective`
    An :class:`~pyplay.dynamic.LDDN` on windows of a series: the mean squared error.
:class:`PointerObjective`
    A :class:`~pyplay.models.pointer.PointerNetwork` on a pair task whose targets are source
    positions: cross-entropy of the positions, with teacher forcing.
:class:`~pyplay.models.recursive.objective.TreeObjective`
    A :class:`~pyplay.models.recursive.RecursiveNet` on a tree task: cross-entropy of the
    classes of the trees' labelled nodes.
:class:`~pyplay.models.glimpse_objective.GlimpseObjective`
    A :class:`~pyplay.models.glimpse.GlimpseNet` on a glimpse task: cross-entropy, and for hard
    attention the score-function (REINFORCE) term with a running-mean baseline.
:class:`Seq2SeqObjective`
    An :class:`~pyplay.models.seq2seq.EncoderDecoder` or a
    :class:`~pyplay.models.transformer.seq2seq.TransformerSeq2Seq` on a pair task: masked
    cross-entropy of the target given the source, with teacher forcing, optional *scheduled
    sampling* and optional source reversal (Sutskever et al. 2014: reading the source
    backwards puts its first words next to the first words of the target).

Scheduled sampling (Bengio et al. 2015) feeds the decoder, at each step, the model's own
prediction instead of the true previous token with probability ``sampling``. Here it is the
*parallel* variant of Duckworth et al. 2019 with one extra pass: a teacher-forced pass (no
gradient) draws a token from the model's distribution at every position, each decoder input
after BOS is replaced by the draw for the previous position with probability ``sampling``, and
the loss and gradient come from a second pass over the mixed inputs. No gradient flows through
the draws.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pyplay._checks import as_generator, check_float, check_int
from pyplay.batch_objective import BatchObjective
from pyplay.decode.ctc import ctc_loss_logits
from pyplay.losses import cross_entropy, mse, softmax
from pyplay.models.glimpse_objective import GlimpseObjective
from pyplay.models.recursive.objective import TreeObjective
from pyplay.models.score_function import update_baseline
from pyplay.tasks.pairs import SPECIALS, PairBatch, PointerBatch, exact_match, reverse_sources

__all__ = [
    "CTCObjective",
    "PointerObjective",
    "Seq2SeqObjective",
    "SequenceObjective",
    "make_objective",
    "reverse_sources",  # lives in pyplay.tasks.pairs; named here for the page's imports
    "row_losses",
    "task_loss",
]


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


class Seq2SeqObjective(BatchObjective):
    """Teacher forcing (with scheduled sampling) for an :class:`EncoderDecoder`."""

    def __init__(
        self,
        model: Any,
        task: Any,
        sampling: float = 0.0,
        reverse_source: bool = False,
        rng: np.random.Generator | int | None = 0,
    ) -> None:
        if not all(hasattr(task, a) for a in ("src_vocab", "tgt_vocab", "batch")):
            raise TypeError(
                f"task must be a pair task (pyplay.tasks.seq2seq), got {type(task).__name__}"
            )
        sizes = (len(task.src_vocab), len(task.tgt_vocab))
        model_sizes = (model.src_vocab_size, model.tgt_vocab_size)
        super().__init__(model, task, sizes, model_sizes, "has vocabularies of {} and {}")
        if not isinstance(reverse_source, bool):
            raise TypeError(f"reverse_source must be True or False, got {reverse_source!r}")
        self.sampling = check_float("sampling", sampling, min_value=0.0, max_value=1.0)
        self.reverse_source = reverse_source
        self.rng = as_generator(rng)

    def source(self, src: np.ndarray, src_lengths: np.ndarray) -> np.ndarray:
        """The source as the model reads it (reversed when ``reverse_source``)."""
        return reverse_sources(src, src_lengths) if self.reverse_source else src

    def _inputs(self, src: np.ndarray, batch: PairBatch, lengths: np.ndarray) -> np.ndarray:
        if not self.sampling:
            return batch.tgt_in
        logits, _, _ = self.model.forward(src, batch.src_lengths, batch.tgt_in, lengths)
        p = softmax(logits.astype(np.float64))  # (B, U, V)
        u = self.rng.random(p.shape[:2])[..., None]  # (B, U, 1)
        drawn = (p.cumsum(axis=2) < u).sum(axis=2).clip(max=p.shape[2] - 1)  # (B, U)
        use = self.rng.random(batch.tgt_in.shape) < self.sampling  # (B, U)
        use[:, 0] = False  # BOS stays
        tgt_in = batch.tgt_in.copy()
        tgt_in[:, 1:] = np.where(use[:, 1:], drawn[:, :-1], batch.tgt_in[:, 1:])
        return np.where(batch.tgt_mask, tgt_in, batch.tgt_in)  # padding stays padding

    def step(self, batch: PairBatch) -> tuple[float, dict[str, np.ndarray], dict[str, float]]:
        """Loss, gradients and the batch's teacher-forced token accuracy."""
        src = self.source(batch.src, batch.src_lengths)
        lengths = batch.tgt_mask.sum(axis=1)  # (B,)
        tgt_in = self._inputs(src, batch, lengths)
        model: Any = self.model  # either kind: the same forward/backward protocol
        logits, _, cache = model.forward(src, batch.src_lengths, tgt_in, lengths)
        loss, dlogits = cross_entropy(logits, batch.tgt_out, mask=batch.tgt_mask)
        grads = model.backward(dlogits, cache).grads
        hits = (logits.argmax(axis=2) == batch.tgt_out)[batch.tgt_mask]
        return float(loss), grads, {"accuracy": float(hits.mean())}

    def evaluate(self, task: Any, batch_size: int) -> dict[str, float]:
        """Teacher-forced loss and greedy exact match on a fresh batch."""
        batch = task.batch(batch_size)
        src = self.source(batch.src, batch.src_lengths)
        lengths = batch.tgt_mask.sum(axis=1)
        logits, _, _ = self.model.forward(src, batch.src_lengths, batch.tgt_in, lengths)
        loss, _ = cross_entropy(logits, batch.tgt_out, mask=batch.tgt_mask)
        max_length = check_int("max_length", batch.tgt_out.shape[1] + 5, min_value=1)
        predicted = self.model.greedy(src, batch.src_lengths, max_length=max_length)
        return {"loss": float(loss), "exact_match": exact_match(predicted, batch)}


class PointerObjective(BatchObjective):
    """Cross-entropy of the source positions a :class:`~pyplay.models.pointer.PointerNetwork`
    points at, on a task whose targets are positions: a pair task (``Sorting(output=
    "positions")``, every source position once) or a task whose batches are
    :class:`~pyplay.tasks.pairs.PointerBatch` (:class:`~pyplay.tasks.hull.ConvexHull`: the
    hull's vertices, then the end). Teacher forcing: the decoder reads the true previous
    position (-1 at the first step)."""

    def __init__(self, model: Any, task: Any) -> None:
        if getattr(task, "output", None) != "positions":
            raise TypeError(
                "task must be a task whose targets are source positions "
                f"(Sorting(output='positions'), ConvexHull), got {type(task).__name__}"
            )
        if getattr(task, "input_kind", "tokens") == "real":
            sizes, model_sizes = (task.input_size,), (model.input_size,)
            super().__init__(model, task, sizes, model_sizes, "gives {} features a position")
        else:
            sizes = (len(task.src_vocab),)
            super().__init__(model, task, sizes, (model.vocab_size,), "has {} source tokens")

    @staticmethod
    def positions(batch: PairBatch | PointerBatch) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Decoder inputs (B, U), target positions (B, U) and the counted steps (B, U)."""
        if isinstance(batch, PointerBatch):
            targets, mask = batch.targets, batch.mask
        else:  # a pair batch whose target ids are positions: every source position once
            S = batch.src.shape[1]
            mask = np.arange(S)[None, :] < batch.src_lengths[:, None]  # (B, S)
            targets = np.where(mask, batch.tgt_out[:, :S] - len(SPECIALS), 0)  # ids -> positions
        ptr_in = np.concatenate([np.full((len(targets), 1), -1), targets[:, :-1]], axis=1)
        return ptr_in, targets, mask

    def _forward(self, batch: Any) -> tuple[float, np.ndarray, Any, np.ndarray, Any]:
        ptr_in, targets, mask = self.positions(batch)
        probs, cache = self.model.forward(batch.src, batch.src_lengths, ptr_in)  # (B, U, S)
        loss, du = self.model.loss(probs, targets, mask)
        hits = (probs.argmax(axis=2) == targets)[mask]
        return loss, du, cache, hits, (targets, mask)

    def step(self, batch: Any) -> tuple[float, dict[str, np.ndarray], dict[str, float]]:
        """Loss, gradients and the batch's teacher-forced pointing accuracy."""
        loss, du, cache, hits, _ = self._forward(batch)
        return loss, self.model.backward(du, cache).grads, {"accuracy": float(hits.mean())}

    def evaluate(self, task: Any, batch_size: int) -> dict[str, float]:
        """Teacher-forced loss and the fraction of rows whose greedy pointers are all right
        (``exact_match``; a row with an end position stops after pointing at it)."""
        batch = task.batch(batch_size)
        loss, _, _, _, (targets, mask) = self._forward(batch)
        predicted = self.model.greedy(batch.src, batch.src_lengths, getattr(batch, "end", None))
        right = [p == targets[b, : mask[b].sum()].tolist() for b, p in enumerate(predicted)]
        return {"loss": loss, "exact_match": float(np.mean(right))}


def make_objective(
    model: Any, task: Any, tbptt: bool, sampling: float, reverse_source: bool, rng: Any
) -> Any:
    """The objective that trains ``model``: the one its class declares (``objective``, see
    :mod:`pyplay.models.contract`); CTC when a per-step model meets a task that declares it
    (``task.objective == "ctc"``). Options that do not fit the model are refused."""
    kind = getattr(type(model), "objective", None)
    if kind == "pointer" and not (tbptt or sampling or reverse_source):
        return PointerObjective(model, task)
    if kind == "tree" and not (tbptt or sampling or reverse_source):
        return TreeObjective(model, task)
    if kind == "glimpse" and not (tbptt or sampling or reverse_source):
        return GlimpseObjective(model, task)
    if kind == "seq2seq":
        if tbptt:
            raise ValueError("tbptt=True is for character models, not for an EncoderDecoder")
        return Seq2SeqObjective(model, task, sampling, reverse_source, rng)
    if kind not in ("per_step", "lddn"):
        raise TypeError(
            "model must be a pyplay SequenceModel, TransformerModel, MemoryNet, AttendRNN or "
            f"EncoderDecoder (or an LDDN), got {type(model).__name__}"
        )
    if tbptt and not getattr(model, "tbptt", False):
        raise ValueError(
            "tbptt=True carries a recurrent state between batches; not for a "
            f"{type(model).__name__}"
        )
    if sampling or reverse_source:
        raise ValueError("sampling and reverse_source are for an EncoderDecoder on a pair task")
    if kind == "lddn":
        from pyplay.dynamic.objective import LDDNObjective  # the dynamic package imports this

        return LDDNObjective(model, task)
    if getattr(task, "objective", None) == "ctc":
        if tbptt:
            raise ValueError("tbptt=True is for character models, not for CTC")
        return CTCObjective(model, task)
    return SequenceObjective(model, task, tbptt)
