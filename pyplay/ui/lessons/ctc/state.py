"""State of the "CTC" lesson: a bidirectional recurrent network learns to read symbols out of
noisy frames with the CTC loss; the views show its per-frame probabilities (blank included),
the best path and its collapse, and three decoders side by side. No Panel here; errors become
messages."""

from __future__ import annotations

import time
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
from pyplay.ui.lessons.ctc.decoding import Decodings, decode_all
from pyplay.ui.lessons.ctc.race import DirectionRace
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
    delay = param.Integer(
        default=0, bounds=(0, 8), doc="future frames a one-way net reads before it answers"
    )
    noise = param.Number(default=0.3, softbounds=(0.0, 1.0))
    beam_width = param.Integer(default=8, bounds=(1, 32), doc="hypotheses both beam searches keep")
    lexicon = param.String(
        default="AB BC CD DA BAD CAB",
        doc="the lexicon beam search's words over the task's symbols (spaces or commas between)",
    )
    compare = param.Boolean(
        default=False,
        doc="train a one-way, a time-delay and a bidirectional net beside it, on the same batches",
    )
    lr = lr_param(0.02)
    seed = seed_param()
    model: SequenceModel | None

    def __init__(self, **params: Any) -> None:
        self.race: DirectionRace | None = None
        super().__init__(**params)
        self.param.watch(lambda e: self._new_race(), "compare")
        self._start(rebuild=["cell", "hidden_size", "bidirectional", "delay", "noise", "seed"])

    def _make_task(self) -> CTCFrames:
        return CTCFrames(noise=self.noise, rng=self.seed)

    def _build_model(self, task: Any) -> SequenceModel:
        return SequenceModel.for_task(
            task, self.cell, hidden_size=self.hidden_size, bidirectional=self.bidirectional,
            delay=self.delay, rng=self.seed,
        )  # fmt: skip

    def _make_trainer(self, model: Any, task: Any) -> Trainer:
        return Trainer(model, task, lr=self.lr, batch_size=32, clip=5.0)

    loss_name = "CTC loss"

    def _built(self, task: Any, model: Any) -> None:
        self._new_race()

    def _on_lr(self, *_: Any) -> None:
        """A new learning rate applies to the current model and to the compared nets."""
        if self.race is None:
            return super()._on_lr()
        self.race.set_lr(self.lr)
        self._apply_training_settings(
            "Learning rate applied to the current model and the three compared nets."
        )

    def _new_race(self) -> None:
        """The comparison afresh (with the current settings), or none when it is off."""
        self.race = None
        if self.compare:
            self.race = DirectionRace(
                self.cell, self.hidden_size, self.delay, self.noise, self.lr, self.seed
            )

    def train(self, steps: int | None = None, budget_s: float | None = None) -> list[Any]:
        """As every lesson trains; when comparing, each step is followed by one step of the
        three compared nets (on one batch of their own), within the same time budget."""
        if self.race is None or self.trainer is None:
            return super().train(steps, budget_s)
        records: list[Any] = []
        start = time.perf_counter()
        while steps is None or len(records) < steps:
            done = self.run_trainer(self.trainer, 1, None)
            if not done:
                break
            records += done
            self.race.step()
            if budget_s is not None and time.perf_counter() - start >= budget_s:
                break
        return records

    def _untrained_note(self) -> str:
        assert self.task_obj is not None  # built with the trainer
        return f". Uniform guess: {self.task_obj.baseline_loss():.3f}"

    def decodings(self, view: CTCView) -> Decodings:
        """Best path, prefix beam search and lexicon beam search of ``view``'s example."""
        return decode_all(view.probs, view.classes, self.beam_width, self.lexicon)

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
