r"""Hagan's remark on eq. 6.10-6.11, computed: attention weights one-hot on the newest encoder
state give the plain seq2seq's context.

"If the first element of :math:`a^4(t)` is equal 1 (and the other elements are consequently
equal to 0), then the context will again be :math:`a^1(T)`, as in the standard seq2seq model":

.. math::

    a^4(t) = e_1 \;\Rightarrow\; a^5(t) = A^1(T)\, e_1 = a^1(T),

the first column of :math:`A^1(T) = [a^1(T)\; a^1(T-1) \cdots]` (eq. 6.8). For concatenation
attention the same holds for :math:`a^5(t)` and :math:`a^6(t)` (eq. 6.17-6.18).

:func:`pinned_contexts` runs the attention model's own
:meth:`~pyplay.models.textbook.seq2seq.TextbookSeq2Seq.forward` on one pair with the weights
pinned (its ``attention_weights``, :func:`first_tap_weights`) or not, and the plain seq2seq of
Figure 6.4 (:func:`plain_seq2seq`: the same weights, the context weight as :math:`LW^{2,1}`) on
the same pair, and compares their contexts :math:`c(t)` (the model's cached ``ctx``) and
logits :math:`n^3(t)`: equal when pinned (the whole network is then Figure 6.4's), different
when the softmax chooses the weights.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay.models.textbook.attention import AttentionStepCache
from pyplay.models.textbook.seq2seq import TextbookSeq2Seq
from pyplay.tasks.pairs import BOS, trace_ids

__all__ = ["PinnedContexts", "first_tap_weights", "pinned_contexts", "plain_seq2seq"]


def first_tap_weights(B: int, U: int, D: int, dtype: Any = np.float64) -> np.ndarray:
    """Weights (B, U, D) one-hot on column 0 of :math:`A^1(T)`, i.e. on :math:`a^1(T)`:
    :math:`a^4(t) = [1\\; 0 \\cdots 0]^T` at every decoder step."""
    w = np.zeros((B, U, D), dtype=dtype)  # (B, U, D)
    w[:, :, 0] = 1.0
    return w


def plain_seq2seq(model: TextbookSeq2Seq) -> TextbookSeq2Seq:
    """The plain seq2seq of Figure 6.4 (form "context") with ``model``'s encoder, decoder and
    output weights; ``model``'s context weight (:math:`LW^{2,5}` or :math:`LW^{2,6}`) becomes
    :math:`LW^{2,1}`, the attention's own parameters are dropped. Copies: ``model`` is not
    changed."""
    if not isinstance(model, TextbookSeq2Seq):
        raise TypeError(
            f"model must be a pyplay.models.textbook.TextbookSeq2Seq, got {type(model).__name__}"
        )
    plain = TextbookSeq2Seq(
        model.src_vocab_size,
        model.tgt_vocab_size,
        "context",
        hidden_size=model.hidden_size,
        D=model.D,
        dtype=model.dtype,
    )
    for key in plain.params:
        plain.params[key] = model.params[model.context_key if key == "LW2,1" else key].copy()
    return plain


@dataclass(frozen=True)
class PinnedContexts:
    """One pair through the attention model (weights ``pinned`` one-hot or the softmax's) and
    through its plain seq2seq: ``weights`` (U, D) the weights used (:math:`a^4(t)`, or
    :math:`a^5(t)` for "concat", columns of :math:`A^1(T)` newest first); ``context`` (U, S1)
    :math:`a^5(t)` (or :math:`a^6(t)`); ``plain`` (U, S1) the plain network's
    :math:`c(t) = a^1(T)`; ``logits`` and ``plain_logits`` (U, V) their :math:`n^3(t)`."""

    pinned: bool
    weights: np.ndarray
    context: np.ndarray
    plain: np.ndarray
    logits: np.ndarray
    plain_logits: np.ndarray

    def difference(self, u: int | None = None) -> float:
        """The largest :math:`|c(t) - a^1(T)|` at decoder step ``u`` (0-based), or over all
        steps."""
        d = np.abs(self.context - self.plain)  # (U, S1)
        return float(d.max() if u is None else d[u].max())

    @property
    def logits_difference(self) -> float:
        """The largest :math:`|n^3(t) - n^3_{plain}(t)|` over the whole decoding."""
        return float(np.abs(self.logits - self.plain_logits).max())


def pinned_contexts(
    model: TextbookSeq2Seq, source: Any, target: Any, pin: bool = True
) -> PinnedContexts:
    """Contexts of ``model`` (an attention form) with weights pinned one-hot on
    :math:`a^1(T)` (``pin``) or as the softmax makes them, beside the plain seq2seq's.

    Parameters
    ----------
    model : TextbookSeq2Seq
        Form "dot", "general" or "concat".
    source : sequence of int (T,)
        Source ids (3..V-1).
    target : sequence of int (n,)
        The words fed back after BOS (teacher forcing, as :func:`textbook_trace`):
        :math:`U = n + 1` decoder steps.
    pin : bool
        Pin the weights to :func:`first_tap_weights` (eq. 6.10-6.11) or not.

    Returns
    -------
    PinnedContexts
        With ``pin`` the contexts and the logits equal the plain network's (float rounding at
        most); without, they differ wherever the attention looks beyond :math:`a^1(T)`.
    """
    if not isinstance(model, TextbookSeq2Seq) or model.form == "context":
        got = model.form if isinstance(model, TextbookSeq2Seq) else type(model).__name__
        raise ValueError(
            f"model must be a TextbookSeq2Seq with attention (dot, general, concat), got {got}"
        )
    if not isinstance(pin, bool):
        raise TypeError(f"pin must be a bool, got {type(pin).__name__}")
    src = trace_ids("source", source, model.src_vocab_size, source=True)[None, :]  # (1, T)
    tgt = trace_ids("target", target, model.tgt_vocab_size, source=False)
    tgt_in = np.concatenate([[BOS], tgt])[None, :].astype(np.int64)  # (1, U)
    L, U = np.array([src.shape[1]]), tgt_in.shape[1]
    w = first_tap_weights(1, U, model.D, model.dtype) if pin else None  # (1, U, D)
    logits, _, cache = model.forward(src, L, tgt_in, attention_weights=w)
    plain_logits, _, plain_cache = plain_seq2seq(model).forward(src, L, tgt_in)
    steps: list[AttentionStepCache] = cache.attn
    return PinnedContexts(
        pin,
        np.stack([c.alpha[0] for c in steps]),  # (U, D)
        cache.ctx[0],  # (U, S1)
        plain_cache.ctx[0],  # (U, S1)
        logits[0],  # (U, V)
        plain_logits[0],  # (U, V)
    )
