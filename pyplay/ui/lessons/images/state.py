"""State of the "Image attention" lesson: two models that look at parts of an image.

- **Captions** (task ``"scenes"``): a :class:`~pyplay.models.captioner.Captioner` (Show, Attend
  and Tell) writes the caption of a picture of coloured shapes while it attends over the 6 x 6
  grid of its conv features: soft attention (a weighted average of the cells), hard attention
  (one cell drawn, trained by REINFORCE with a running-mean baseline) or none (the mean of the
  cells). With ``compare`` a second captioner (hard beside soft, soft beside hard or none)
  trains on the same batches, step for step.
- **Glimpses** (task ``"cluttered"``): a :class:`~pyplay.models.ram.RecurrentAttention` (Mnih
  et al.) takes ``glimpses`` small crops of a cluttered canvas (``scales`` resolutions each),
  chooses where to look next with a Gaussian policy trained by a policy gradient, and names
  the digit. With ``compare`` the same model with random glimpses (``policy="random"``: each
  centre after the first drawn uniformly over the canvas) trains on the same batches, step
  for step: the baseline the learned policy must beat.

The views read :meth:`ImagesLessonState.captions` (each word's attention map) and
:meth:`ImagesLessonState.paths` (the glimpse paths) on a fixed batch. No Panel here; errors
become messages.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import param

from pyplay.models.captioner import ATTENTION, Captioner
from pyplay.models.ram import RecurrentAttention
from pyplay.models.ram_path import GlimpsePath
from pyplay.tasks.cluttered import ClutteredGlyphs
from pyplay.tasks.scenes import CaptionedScenes
from pyplay.train import Trainer
from pyplay.ui.base_state import LessonBase, lr_param, seed_param
from pyplay.ui.checkpoint import LoadedFile
from pyplay.ui.trainer_lesson import TrainerLesson, step_beside

__all__ = [
    "CANVAS",
    "EXAMPLES",
    "IMAGE_SIZE",
    "TASKS",
    "CaptionView",
    "ImagesLessonState",
    "PathView",
    "beside_name",
    "other_attention",
]

TASKS = ("scenes", "cluttered")  # captions with attention, glimpses on cluttered digits
IMAGE_SIZE = 24  # pixels of a scene: a 6 x 6 grid of conv features
CANVAS = 20  # pixels of a cluttered canvas
GLIMPSE = 6  # pixels of the sharpest crop
EXAMPLES = 8  # examples of the fixed batch the views show
BATCH = {"scenes": 16, "cluttered": 64}  # training batch of each task
_FIXED_SEED = 10_000  # the views' fixed batch comes from a task seeded 10_000 + seed


def other_attention(attention: str) -> str:
    """The captioner trained beside one with ``attention``: hard beside soft, else soft."""
    return "hard" if attention == "soft" else "soft"


def beside_name(task: str, attention: str) -> str:
    """What trains beside the main model of ``task`` with ``compare``: the captioner with the
    other attention, or the glimpse model with random glimpses."""
    return f"{other_attention(attention)} attention" if task == "scenes" else "random glimpses"


@dataclass(frozen=True)
class CaptionView:
    """One scene as the captioners read it now: ``image`` (S, S, 3) in [0, 1], ``truth`` its
    caption and, per model (``names``, the main one first), the greedy caption's ``words``
    (the specials written ``<eos>``, ``<pad>``, ``<bos>``) and the attention map of each word
    (n, g_h, g_w)."""

    image: np.ndarray
    truth: str
    names: list[str]
    words: list[list[str]]
    maps: list[np.ndarray]


@dataclass(frozen=True)
class PathView:
    """Where the glimpse model looks now on ``images`` (n, S, S): its ``path``
    (:class:`~pyplay.models.ram_path.GlimpsePath`, the policy's means, not draws), the digits
    ``targets`` (n,) and their ``boxes`` (n, 4) ``(top, left, height, width)``."""

    images: np.ndarray
    path: GlimpsePath
    targets: np.ndarray
    boxes: np.ndarray


class ImagesLessonState(TrainerLesson, LessonBase):
    """Settings and actions of the lesson: the main model is :attr:`model`, trained by
    :attr:`trainer`; the model beside it (``compare``: the captioner with the other attention,
    or the glimpse model with random glimpses) is :attr:`beside`'s model."""

    task = param.Selector(objects=list(TASKS), default="scenes", doc="captions or glimpses")
    attention = param.Selector(objects=list(ATTENTION), default="soft", doc="the captioner's")
    compare = param.Boolean(
        default=True,
        doc="a second model on the same batches: the other attention, or random glimpses",
    )
    shapes = param.Integer(default=1, bounds=(1, 3), doc="most shapes in a scene")
    hidden_size = param.Integer(default=32, softbounds=(8, 64), doc="H of the LSTM or RNN")
    glimpses = param.Integer(default=3, bounds=(1, 6), doc="glimpses before the answer (tau)")
    scales = param.Integer(default=2, bounds=(1, 3), doc="resolutions of a glimpse")
    clutter = param.Integer(default=3, softbounds=(0, 12), doc="fragments on a canvas")
    lr = lr_param(0.005)
    seed = seed_param()
    model: Captioner | RecurrentAttention | None

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.beside: Trainer | None = None
        self.history = _empty_history()
        self._start(
            rebuild=["task", "attention", "compare", "shapes", "hidden_size", "glimpses",
                     "scales", "clutter", "seed"],
        )  # fmt: skip

    @property
    def model_name(self) -> str:
        """The main model's name in the legends: its attention, or its glimpses (learned,
        beside random ones)."""
        if self.task == "scenes":
            return f"{self.attention} attention"
        return "glimpses" if self.beside is None else "learned glimpses"

    @property
    def loss_name(self) -> str:  # type: ignore[override]
        """What the status line calls the loss: the attention's, or with random glimpses
        beside, the learned glimpses' (then named before their loss and accuracy)."""
        if self.task == "scenes":
            return f"{self.attention} loss"
        return f"{self.model_name}: loss" if self.beside is not None else "loss"

    # ------------------------------------------------------------------ building
    def _make_task(self) -> CaptionedScenes | ClutteredGlyphs:
        return self._task_for(self.seed)

    def _task_for(self, seed: int) -> CaptionedScenes | ClutteredGlyphs:
        if self.task == "scenes":
            return CaptionedScenes(IMAGE_SIZE, 1, self.shapes, rng=seed)
        return ClutteredGlyphs(CANVAS, self.clutter, rng=seed)

    def _build_model(self, task: Any, beside: bool = False) -> Any:
        """The lesson's model for ``task``; ``beside``: the one trained beside it (the other
        attention, or random glimpses), with the same settings and seed otherwise."""
        if isinstance(task, CaptionedScenes):
            attention = other_attention(self.attention) if beside else self.attention
            return Captioner(
                task.vocab_size, IMAGE_SIZE, attention, hidden_size=self.hidden_size,
                rng=self.seed,
            )  # fmt: skip
        return RecurrentAttention(
            glimpse_size=GLIMPSE, scales=self.scales, glimpses=self.glimpses,
            hidden_size=self.hidden_size, policy="random" if beside else "learned",
            rng=self.seed,
        )  # fmt: skip

    def _make_trainer(self, model: Any, task: Any) -> Trainer:
        batch = BATCH["scenes" if isinstance(task, CaptionedScenes) else "cluttered"]
        return Trainer(model, task, lr=self.lr, batch_size=batch, clip=1.0)

    def _built(self, task: Any, model: Any) -> None:
        """The model beside (``compare``) on its own copy of the task: the same seed draws the
        same batches, step for step."""
        self.beside = None
        if self.compare:
            twin = self._make_task()
            self.beside = self._make_trainer(self._build_model(twin, beside=True), twin)

    def _forget_progress(self) -> None:
        super()._forget_progress()
        self.history = _empty_history()
        self._fixed: Any = self._task_for(_FIXED_SEED + self.seed).batch(EXAMPLES)

    def _built_message(self, task: Any, model: Any) -> str:
        n = f"{model.num_parameters():,} parameters"
        if self.task == "cluttered":
            text = (
                f"{task.describe()} The recurrent attention model ({n}) takes {self.glimpses} "
                f"glimpses of {GLIMPSE} x {GLIMPSE} pixels ({self.scales} resolutions)"
            )
            if self.beside is not None:
                text += (
                    "; beside it the same model with random glimpses (each centre after the "
                    "first drawn uniformly over the canvas) trains on the same batches"
                )
            return text + "."
        text = f"{task.describe()} A captioner with {self.attention} attention ({n})"
        if self.beside is not None:
            other = other_attention(self.attention)
            text += f" and one with {other} attention beside it, on the same batches"
        return text + "."

    def _file_prepare(self, loaded: LoadedFile) -> Callable[[], None]:
        """A loaded model starts a new model beside it and its own fixed batch."""
        commit = super()._file_prepare(loaded)

        def commit_all() -> None:
            commit()
            self._built(self.task_obj, self.model)
            self._forget_progress()

        return commit_all

    # ------------------------------------------------------------------ training
    def train(self, steps: int | None = None, budget_s: float | None = None) -> list[Any]:
        """The main model's steps, each followed by one step of the model beside on the same
        batch (:meth:`_record`); the batch accuracies go to the history."""
        records = super().train(steps, budget_s)
        h = self.history
        h["accuracy"] += [r.metrics.get("accuracy", np.nan) for r in records]
        h["on_target"] += [r.metrics.get("on_target", np.nan) for r in records]
        if records:
            self.status = self._status_text()
        return records

    def _record(self, step: int, loss: float, seconds: float) -> None:
        """One main step done: its loss, then one step of the model beside (NaN when there is
        none or its step diverged)."""
        super()._record(step, loss, seconds)
        loss_b, accuracy_b = step_beside(self.beside)
        self.history["beside"].append(loss_b)
        self.history["beside_accuracy"].append(accuracy_b)

    def _untrained_note(self) -> str:
        assert self.task_obj is not None
        return f". To beat: {self.task_obj.baseline_loss():.3f}"

    def _status_extra(self) -> str:
        h = self.history
        text = f", accuracy {_recent(h['accuracy']):.2f}" if h["accuracy"] else ""
        if self.task == "cluttered" and h["on_target"]:
            text += f", last glimpse on the digit {_recent(h['on_target']):.2f}"
        if self.beside is None or not h["beside"]:
            return text
        if self.task == "scenes":
            return text + f"; {other_attention(self.attention)} loss {h['beside'][-1]:.4f}"
        return (
            text + f"; {beside_name(self.task, self.attention)}: loss {h['beside'][-1]:.4f}, "
            f"accuracy {_recent(h['beside_accuracy']):.2f}"
        )

    # ------------------------------------------------------------------ looking inside
    def captions(self, index: int = 0) -> CaptionView | None:
        """Scene ``index`` (0..7) of the fixed batch: each captioner's greedy caption and
        where it looked for each word; None unless the task is ``"scenes"``."""
        if not isinstance(self.model, Captioner) or not isinstance(self.task_obj, CaptionedScenes):
            return None
        k = int(np.clip(index, 0, EXAMPLES - 1))
        batch, vocab = self._fixed, self.task_obj.vocab
        image = batch.images[k : k + 1]  # (1, 3, S, S)
        models = [self.model, *([] if self.beside is None else [self.beside.model])]
        names, words, maps = [], [], []
        for model in models:
            ids, alpha = model.attention_maps(image.astype(model.dtype))[0]  # (n,), (n, g, g)
            names.append(str(model.attention))
            words.append([_word(vocab, int(i)) for i in ids])
            maps.append(np.asarray(alpha, dtype=np.float64))
        truth = self.task_obj.caption(batch.tgt_out[k])
        return CaptionView(np.clip(image[0].transpose(1, 2, 0), 0, 1), truth, names, words, maps)

    def paths(self, n: int = 4) -> PathView | None:
        """The first ``n`` canvases of the fixed batch and where the glimpse model looks on
        them now; None unless the task is ``"cluttered"``."""
        if not isinstance(self.model, RecurrentAttention):
            return None
        batch = self._fixed
        images = batch.inputs[:n]  # (n, 1, S, S)
        path = self.model.glimpse_path(images.astype(self.model.dtype))
        return PathView(images[:, 0], path, batch.targets[:n], batch.boxes[:n])


def _word(vocab: Any, i: int) -> str:
    """Word ``i`` of ``vocab``; the specials as ``<pad>``, ``<bos>``, ``<eos>``."""
    return ("<pad>", "<bos>", "<eos>")[i] if i < 3 else str(vocab.symbols[i - 3])


def _recent(values: list[float]) -> float:
    """The mean of the last 20 finite ``values`` (NaN when there is none)."""
    finite = [v for v in values[-20:] if np.isfinite(v)]
    return float(np.mean(finite)) if finite else float("nan")


def _empty_history() -> dict[str, list[float]]:
    """The loss curve's columns: the main model's loss, the model beside's (NaN without one),
    both batch accuracies and the glimpse model's last glimpse on the digit."""
    keys = ("step", "loss", "beside", "accuracy", "beside_accuracy", "on_target")
    return {k: [] for k in keys}
