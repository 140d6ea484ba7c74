"""State of the "CTC" lesson: a bidirectional recurrent network learns to read symbols out of
noisy frames with the CTC loss; the views show its per-frame probabilities (blank included),
the best path and its collapse. No Panel here; errors become messages."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import param

from pyplay.decode.ctc_decode import ctc_best_path
from pyplay.losses import softmax
from pyplay.models import SequenceModel
from pyplay.tasks.ctc_frames import CTCFrames
from pyplay.train import Trainer
from pyplay.ui.base_state import LessonBase, lr_param, seed_param
from pyplay.ui.trainer_lesson import TrainerLesson

__all__ = ["CTCState", "CTCView"]

BLANK_SYMBOL = "_"
SYMBOLS = "ABCDEFGH"


@dataclass(frozen=True)
class CTCView:
    """One example: probabilities (T, C) of its valid frames, class names (blank first), the
    true symbol of every frame, the best path, its collapse and the target."""

    probs: np.ndarray
    classes: list[str]
    frames: str
    best_path: str
    decoded: str
    target: str


class CTCState(TrainerLesson, LessonBase):
    """Settings and actions of the CTC lesson (files: ``save_bytes`` and ``load_bytes`` of
    :class:`~pyplay.ui.checkpoint.SavableLesson`)."""

    cell = param.Selector(objects=["gru", "lstm", "rnn"], default="gru")
    hidden_size = param.Integer(default=32, softbounds=(4, 96))
    bidirectional = param.Boolean(default=True)
    noise = param.Number(default=0.3, softbounds=(0.0, 1.0))
    lr = lr_param(0.02)
    seed = seed_param()
    model: SequenceModel | None

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._start(rebuild=["cell", "hidden_size", "bidirectional", "noise", "seed"])

    def _make_task(self) -> CTCFrames:
        return CTCFrames(noise=self.noise, rng=self.seed)

    def _build_model(self, task: Any) -> SequenceModel:
        return SequenceModel.for_task(
            task, self.cell, hidden_size=self.hidden_size, bidirectional=self.bidirectional,
            rng=self.seed,
        )  # fmt: skip

    def _make_trainer(self, model: Any, task: Any) -> Trainer:
        return Trainer(model, task, lr=self.lr, batch_size=32, clip=5.0)

    loss_name = "CTC loss"

    def _untrained_note(self) -> str:
        assert self.task_obj is not None  # built with the trainer
        return f". Uniform guess: {self.task_obj.baseline_loss():.3f}"

    def view(self, index: int = 0) -> CTCView | None:
        """Example ``index`` (0..7) of a fixed batch, as the model reads it now."""
        if self.model is None or self.task_obj is None:
            return None
        task = CTCFrames(noise=self.noise, rng=10_000 + self.seed)
        batch = task.batch(8)
        k = int(np.clip(index, 0, 7))
        lengths = batch.lengths
        n = batch.inputs.shape[1] if lengths is None else int(lengths[k])
        x = batch.inputs[k : k + 1, :n].astype(self.model.dtype)  # (1, n, F)
        logits, _, _ = self.model.forward(x, None, None, training=False)  # (1, n, C)
        probs = softmax(logits[0].astype(np.float64))  # (n, C)
        path, collapsed = ctc_best_path(logits, blank=task.blank)
        names = [BLANK_SYMBOL, *SYMBOLS[: task.n_symbols]]
        target = batch.targets[k, : int(batch.target_lengths[k])]
        truth = batch.frame_labels
        return CTCView(
            probs,
            names,
            "" if truth is None else "".join(names[c] for c in truth[k, :n]),
            "".join(names[c] for c in path[0]),
            "".join(names[c] for c in collapsed[0]),
            "".join(names[c] for c in target),
        )
