"""State of the "Textbook seq2seq" sub-lesson (in the dynamic networks lesson): the book's
sequence-to-sequence network (eq. 6.5-6.18, :class:`~pyplay.models.textbook.TextbookSeq2Seq`), with
the context as a constant decoder input or with dot / general / concatenation attention over a
TDL of ``D`` encoder states, trained on reversal; a typed
source is decoded greedily and every textbook quantity is listed beside the library code that
computes it (:func:`pyplay.dynamic.textbook_trace`); the model's figure in the chapter
(:meth:`TextbookSeq2SeqState.figures`, Hagan's fig. 6.4-6.8 as plain data) and, for the
attention forms, its contexts with the weights pinned one-hot (``pin_weights``, eq. 6.10-6.11,
:func:`one_hot_text`) beside the plain seq2seq's. Files: ``save_bytes`` / ``load_bytes`` of
:class:`~pyplay.ui.checkpoint.SavableLesson` (lesson key ``"textbook"``). No Panel here; errors
become messages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import param

from pyplay.models.textbook.pinned import PinnedContexts, pinned_contexts
from pyplay.models.textbook.seq2seq import CONTEXT_LAYER, TextbookSeq2Seq
from pyplay.models.textbook.trace import TextbookTrace, sup, textbook_seq2seq, textbook_trace
from pyplay.tasks.seq2seq import Reversal
from pyplay.train import Trainer
from pyplay.ui.base_state import LessonBase, lr_param, seed_param
from pyplay.ui.lessons.textbook.book_figures import BookFigure, book_figures
from pyplay.ui.trainer_lesson import TrainerLesson

__all__ = [
    "FORM_LABELS",
    "PIN_LABEL",
    "Explanation",
    "TextbookSeq2SeqState",
    "format_value",
    "one_hot_text",
]

FORM_LABELS = {
    "Context only (constant input)": "context",
    "Dot": "dot",
    "General": "general",
    "Concatenation": "concat",
}
MAX_SOURCE = 12  # typed symbols
PIN_LABEL = "Pin the attention weights one-hot (eq. 6.10-6.11)"


def format_value(value: np.ndarray, shown: int = 8) -> str:
    """A vector as ``[+0.123 −0.456 …]  (n values)``: the first ``shown`` entries; a matrix
    by its size and first row."""
    v = np.asarray(value, dtype=np.float64)
    if v.ndim == 2:
        return f"{v.shape[0]} × {v.shape[1]} matrix, row 1: {format_value(v[0], shown)}"
    v = v.reshape(-1)  # (n,)
    parts = [f"{x:+.3f}".replace("-", "−") for x in v[:shown]]
    more = " …" if v.size > shown else ""
    return f"[{' '.join(parts)}{more}]" + (f"  ({v.size} values)" if v.size > shown else "")


@dataclass(frozen=True)
class Explanation:
    """A typed source decoded greedily and traced: the source and output symbols, the trace
    (every step with equation, code and value), the attention weights in source order
    (U, S) (None for the constant context), the largest difference between the trace and
    the library's own forward pass (weights and logits), and (attention forms) the contexts
    with the weights ``pinned`` one-hot and ``free`` (the softmax's), each beside the plain
    seq2seq's (:func:`~pyplay.models.textbook.pinned.pinned_contexts`)."""

    source: list[str]
    output: list[str]
    trace: TextbookTrace
    weights: np.ndarray | None
    max_difference: float
    pinned: PinnedContexts | None = None
    free: PinnedContexts | None = None


def one_hot_text(explanation: Explanation, u: int, pin: bool) -> str:
    """Decoder step ``u`` (1-based) of the pinned-weights check in the book's notation: the
    weights (pinned one-hot on :math:`a^1(T)`, or the softmax's), the context they give, the
    plain seq2seq's context :math:`a^1(T)` and their largest difference (plain text)."""
    tr = explanation.trace
    check = explanation.pinned if pin else explanation.free
    T = tr.a1.shape[0]
    if check is None:
        return (
            f"Context only: c(t) = a¹({T}) at every step, the plain seq2seq of fig. 6.4 already; "
            "the one-hot pin is for the attention forms."
        )
    U = check.weights.shape[0]
    k = min(max(u, 1), U) - 1  # 0-based step
    t, c = T + k + 1, CONTEXT_LAYER[tr.form]
    w, ctx = f"a{sup(c - 1)}({t})", f"a{sup(c)}({t})"
    eqs = ("6.17", "6.18") if tr.form == "concat" else ("6.10", "6.11")
    if pin:
        head = f"{w} pinned one-hot on column 1 of A¹({T}), a¹({T}) (in place of eq. {eqs[0]})"
        code = "TextbookSeq2Seq.forward(..., attention_weights=first_tap_weights(...))"
    else:
        head = f"{w} not pinned: the softmax of the scores (eq. {eqs[0]})"
        code = "TextbookSeq2Seq.forward"
    lines = [
        head,
        f"    {w} = {format_value(check.weights[k])}",
        f"{ctx} = A¹({T}) {w}   ({eqs[1]})",
        f"    value: {format_value(check.context[k])}",
        f"    code : {code}",
        f"plain seq2seq (fig. 6.4): c({t}) = a¹({T})",
        f"    value: {format_value(check.plain[k])}",
        f"    code : plain_seq2seq(model).forward   (LW²˒¹ = the model's LW{sup(f'2,{c}')})",
        f"largest |{ctx} − a¹({T})| = {check.difference(k):.1e} at this step, "
        f"{check.difference():.1e} over all {U} steps",
        f"largest |n³(t) − n³(t) of fig. 6.4| over the decoding = {check.logits_difference:.1e}",
    ]
    return "\n".join(lines)


class TextbookSeq2SeqState(TrainerLesson, LessonBase):
    """Settings and actions of the textbook seq2seq sub-lesson (files: ``save_bytes`` and
    ``load_bytes`` of :class:`~pyplay.ui.checkpoint.SavableLesson`)."""

    form = param.Selector(objects=list(FORM_LABELS.values()), default="general")
    hidden_size = param.Integer(default=32, softbounds=(4, 64))
    D = param.Integer(default=8, bounds=(1, MAX_SOURCE), doc="columns of the delay line A¹(T)")
    pin_weights = param.Boolean(default=False, doc=PIN_LABEL)
    lr = lr_param(0.01)
    seed = seed_param()
    model: TextbookSeq2Seq | None

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._start(rebuild=["form", "hidden_size", "D", "seed"])

    def _make_task(self) -> Reversal:
        return Reversal(n_symbols=6, min_len=3, max_len=8, rng=self.seed)

    def _build_model(self, task: Reversal) -> TextbookSeq2Seq:
        V = len(task.src_vocab)
        return textbook_seq2seq(
            V, V, self.form, hidden_size=self.hidden_size, D=self.D, rng=self.seed
        )

    def _make_trainer(self, model: TextbookSeq2Seq, task: Reversal) -> Trainer:
        return Trainer(model, task, lr=self.lr, batch_size=32, clip=1.0, rng=self.seed)

    def figures(self) -> tuple[BookFigure, ...]:
        """Hagan's figures of the model as built (fig. 6.4, or fig. 6.6 and the attention's
        fig. 6.5, 6.7 or 6.8), from its parameters: :func:`.book_figures.book_figures`."""
        return () if self.model is None else book_figures(self.model)

    def example_source(self) -> str:
        """A fresh source from the task (for the text box)."""
        return "" if self.task_obj is None else self.task_obj.example()[0]

    def explain(self, text: Any) -> Explanation | None:
        """Greedy decoding of the typed ``text`` and its textbook trace, or None with a message
        (the message is escaped where it is shown: it never reaches the page as HTML)."""
        if self.model is None or self.task_obj is None:
            return None
        vocab = self.task_obj.src_vocab
        try:
            if not isinstance(text, str) or not text.strip():
                raise ValueError("type a source sequence first, e.g. abcde")
            tokens = vocab.split(text.strip())
            if len(tokens) > MAX_SOURCE:
                raise ValueError(f"at most {MAX_SOURCE} symbols, got {len(tokens)}")
            ids = np.array(vocab.encode(tokens, "the source"))  # (S,)
        except ValueError as err:
            self.notify(f"Cannot explain: {err}", "warning")  # shown escaped (message_alert)
            return None
        S = ids.shape[0]
        out = self.model.greedy(ids[None, :], np.array([S]), max_length=S + 4)[0]
        trace = textbook_trace(self.model, ids, out)
        logits, weights, _ = self.model.forward(ids[None, :], [S], [[1, *out]])
        diff = float(np.max(np.abs(trace.logits - logits[0])))
        if weights is not None and trace.weights is not None:
            diff = max(diff, float(np.max(np.abs(trace.weights - weights[0]))))
        words = [self.task_obj.tgt_vocab.decode([i]) for i in out]
        pinned = free = None
        if self.model.form != "context":  # eq. 6.10-6.11: one-hot weights, and the softmax's
            pinned = pinned_contexts(self.model, ids, out, pin=True)
            free = pinned_contexts(self.model, ids, out, pin=False)
        return Explanation(tokens, words, trace, trace.weights, diff, pinned, free)
