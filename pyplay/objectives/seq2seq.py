"""The objective of a model that writes a target sequence given a source (``objective =
"seq2seq"``, see :mod:`pyplay.models.contract`): an :class:`~pyplay.models.seq2seq.EncoderDecoder`
or a :class:`~pyplay.models.transformer.seq2seq.TransformerSeq2Seq` on a pair task.

:class:`Seq2SeqObjective` is the masked cross-entropy of the target given the source, with
teacher forcing, optional *scheduled sampling* and optional source reversal (Sutskever et al.
2014: reading the source backwards puts its first words next to the first words of the
target).

Scheduled sampling (Bengio et al. 2015) feeds the decoder, at each step, the model's own
prediction instead of the true previous token with probability ``sampling``. Here it is the
*parallel* variant of Duckworth et al. 2019 with one extra pass: a teacher-forced pass (no
gradient) draws a token from the model's distribution at every position, each decoder input
after BOS is replaced by the draw for the previous position with probability ``sampling``, and
the loss and gradient come from a second pass over the mixed inputs. No gradient flows through
the draws.

:func:`make_seq2seq` is the kind's factory: no truncated BPTT here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pyplay._checks import as_generator, check_float, check_int
from pyplay.losses import cross_entropy, softmax
from pyplay.objectives.base import BatchObjective, Options
from pyplay.tasks.pairs import PairBatch, exact_match, reverse_sources

__all__ = ["Seq2SeqObjective", "make_seq2seq", "reverse_sources"]


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


def make_seq2seq(model: Any, task: Any, options: Options) -> Seq2SeqObjective:
    """:class:`Seq2SeqObjective` with the options' sampling, source reversal and generator;
    ``tbptt`` is refused (ValueError)."""
    if options.tbptt:
        raise ValueError("tbptt=True is for character models, not for an EncoderDecoder")
    return Seq2SeqObjective(model, task, options.sampling, options.reverse_source, options.rng)
