"""State of the "Memory" lesson: a memory net (or an LSTM, or an LSTM attending to its past)
learns associative recall or the copy task, its heads addressing the memory by content or by
location; the views show where each head reads and writes over the memory cells at every step,
the stages of location addressing, and the memory's contents. No Panel here; errors become
messages."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import param

from pyplay.models import SequenceModel
from pyplay.models.memory import AttendRNN, MemoryNet
from pyplay.models.memory.attend_state import FORMS
from pyplay.models.memory.controller import FEEDBACKS
from pyplay.models.memory.hard import HARD
from pyplay.models.memory.heads import KEY_FUNCTIONS
from pyplay.models.memory.location import ADDRESSINGS, Located
from pyplay.tasks.copy import DelayedRecall
from pyplay.tasks.recall import AssociativeRecall
from pyplay.train import Trainer
from pyplay.ui.base_state import LessonBase, lr_param, seed_param
from pyplay.ui.trainer_lesson import TrainerLesson

__all__ = ["COPY_SYMBOLS", "STAGES", "MemoryLessonState", "MemoryView"]

COPY_SYMBOLS = 6  # symbols of the copy task (tokens 1..6; 0 blank, 7 the recall marker)
STAGES = ("pᶜ", "pᵍ", "p̃", "pᵗ")  # location's stages: content, gated, shifted, sharpened


@dataclass(frozen=True)
class MemoryView:
    """One example: step labels, read weights (T, R, N) and write weights (T, H_w, N) (the
    attending net: its weights over earlier steps (T, 1, T), no writes), memory (T+1, N, W)
    (None without a memory), the answer and the target (the counted steps' outputs), and with
    location addressing each head's stages (T, heads, 4, N) (:data:`STAGES`), else None."""

    labels: list[str]
    read: np.ndarray
    write: np.ndarray | None
    memory: np.ndarray | None
    answer: str
    target: str
    read_stages: np.ndarray | None = None
    write_stages: np.ndarray | None = None
    read_cells: np.ndarray | None = None  # (T, R) the cells hard read heads drew
    write_cells: np.ndarray | None = None  # (T, H_w) the cells hard write heads drew


class MemoryLessonState(TrainerLesson, LessonBase):
    """Settings and actions of the Memory lesson (files: ``save_bytes`` and ``load_bytes`` of
    :class:`~pyplay.ui.checkpoint.SavableLesson`; the network is :attr:`net`)."""

    _model_attr = "net"
    accuracy_metric = "accuracy"  # of the answers, over the last steps trained (memory net)

    model = param.Selector(objects=["memnet", "lstm", "attend"], default="memnet")
    task = param.Selector(objects=["recall", "copy"], default="recall")
    addressing = param.Selector(objects=list(ADDRESSINGS), default=ADDRESSINGS[0])
    key_function = param.Selector(objects=list(KEY_FUNCTIONS), default=KEY_FUNCTIONS[0])
    update = param.Selector(objects=["overwrite", "residual"], default="overwrite")
    hard = param.Selector(objects=list(HARD), default=HARD[0])  # heads that draw one cell
    feedback = param.Selector(objects=list(FEEDBACKS), default=FEEDBACKS[0])  # y^{t-1} in
    attend_form = param.Selector(objects=list(FORMS), default=FORMS[0])  # the attending RNN's
    read_heads = param.Integer(default=1, softbounds=(1, 4))
    write_heads = param.Integer(default=1, softbounds=(1, 4))
    memory_size = param.Integer(default=16, softbounds=(4, 64))
    n_pairs = param.Integer(default=6, softbounds=(2, 12))
    seq_len = param.Integer(default=8, softbounds=(2, 12))
    lr = lr_param(0.02)
    seed = seed_param()
    net: Any

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._start(
            rebuild=[
                "model",
                "task",
                "addressing",
                "key_function",
                "update",
                "hard",
                "feedback",
                "attend_form",
                "read_heads",
                "write_heads",
                "memory_size",
                "n_pairs",
                "seq_len",
                "seed",
            ]
        )

    def model_name(self) -> str:
        """What saved work calls this model, e.g. "memnet on recall of 6 pairs"."""
        if self.task == "copy":
            return f"{self.model} on copy of {self.seq_len} symbols"
        return f"{self.model} on recall of {self.n_pairs} pairs"

    def _make_task(self, rng: int | None = None) -> AssociativeRecall | DelayedRecall:
        seed = self.seed if rng is None else rng
        if self.task == "copy":
            return DelayedRecall(n_symbols=COPY_SYMBOLS, seq_len=self.seq_len, delay=1, rng=seed)
        return AssociativeRecall(n_pairs=self.n_pairs, n_keys=max(8, self.n_pairs), rng=seed)

    def _make_trainer(self, model: Any, task: Any) -> Trainer:
        return Trainer(model, task, lr=self.lr, batch_size=32, clip=5.0)

    def _build_model(self, task: Any) -> Any:
        return self._build(task)

    def _build(self, task: AssociativeRecall | DelayedRecall) -> Any:
        if self.model == "lstm":
            return SequenceModel.for_task(task, "lstm", hidden_size=32, rng=self.seed)
        if self.model == "attend":
            return AttendRNN.for_task(task, hidden_size=32, form=self.attend_form, rng=self.seed)
        return MemoryNet.for_task(
            task, hidden_size=32, memory_size=self.memory_size, memory_width=16,
            read_heads=self.read_heads, write_heads=self.write_heads, update=self.update,
            addressing=self.addressing, key_function=self.key_function, hard=self.hard,
            feedback=self.feedback, rng=self.seed,
        )  # fmt: skip

    def _untrained_note(self) -> str:
        assert self.task_obj is not None  # built with the trainer
        return f". Uniform guess: {self.task_obj.baseline_loss():.3f}"

    def _status_extra(self) -> str:
        return "" if self.accuracy is None else f", accuracy {self.accuracy:.2f}"

    def view(self, index: int = 0) -> MemoryView | None:
        """Example ``index`` (0..7) of a fixed batch, as the model reads it now."""
        if self.net is None or self.task_obj is None:
            return None
        batch = self._make_task(rng=10_000 + self.seed).batch(8)
        k = int(np.clip(index, 0, 7))
        x = batch.inputs[k : k + 1]  # (1, T) token ids or (1, T, F)
        if x.ndim == 3:
            x = x.astype(self.net.dtype)
        y, cache = self._example_forward(x, k)  # (1, T, O)
        counted = np.flatnonzero(batch.mask[k])  # the steps with a target
        answer = " ".join(str(int(a)) for a in y[0, counted].argmax(axis=1))
        target = " ".join(str(int(t)) for t in batch.targets[k, counted])
        labels = self._labels(batch.inputs[k])
        if isinstance(self.net, MemoryNet):
            return MemoryView(
                labels, cache.read_weights[0], cache.write_weights[0], cache.memory[0],
                answer, target, _stages(cache.read_addr), _stages(
                    tuple(tuple(a for _, a, _ in heads) for heads in cache.writes)
                ), _first(cache.read_index), _first(cache.write_index),
            )  # fmt: skip
        if isinstance(self.net, AttendRNN):
            return MemoryView(labels, cache.attention[0][:, None, :], None, None, answer, target)
        T = len(labels)
        return MemoryView(labels, np.zeros((T, 1, 1)), None, None, answer, target)

    def _example_forward(self, x: np.ndarray, k: int) -> tuple[np.ndarray, Any]:
        """The net on one example as evaluated; hard heads draw their cells as in training,
        from a generator seeded by the example (the same draw at every redraw)."""
        if getattr(self.net, "generator", None) is None:
            y, _, cache = self.net.forward(x, None, None, training=False)
            return y, cache
        kept, self.net.generator = self.net.generator, np.random.default_rng(k)
        try:
            y, _, cache = self.net.forward(x, None, None, training=True)
        finally:
            self.net.generator = kept
        return y, cache

    def _labels(self, inputs: np.ndarray) -> list[str]:
        """Readable steps of one example: recall's ``"A:3"`` and ``"A?"``; for the copy task
        the symbol, ``·`` for a blank and ``→`` for the recall marker."""
        if isinstance(self.task_obj, AssociativeRecall):
            return self.task_obj.labels(inputs)
        marker = COPY_SYMBOLS + 1
        return ["·" if t == 0 else "→" if t == marker else str(int(t)) for t in inputs]


def _stages(addresses: tuple[tuple[Any, ...], ...]) -> np.ndarray | None:
    """Location addressing's stages of the first example, (T, heads, 4, N); None by content."""
    if not isinstance(addresses[0][0], Located):
        return None
    return np.array(
        [[[a.content.w[0], a.wg[0], a.wt[0], a.w[0]] for a in step] for step in addresses]
    )  # (T, heads, 4, N)


def _first(index: np.ndarray | None) -> np.ndarray | None:
    """The first example's drawn cells (T, heads), None for soft heads."""
    return None if index is None else index[0]
