"""State of the Sequence to sequence lesson's "Attention and long sentences" section: a plain
encoder-decoder (wiring "init", Sutskever) and an attention one trained side by side on the
same batches, then exact match against source length for both (no Panel).

The comparison takes the lesson's settings when it starts (task if reversal or copy, else
reversal; the training lengths, cell, hidden size, layers, attention score, learning rate,
batch size and seed) and trains models of its own: the lesson's model is never touched. It trains in
slices (:meth:`LengthComparison.train`, the same protocol as a lesson state's, so the shared
:class:`~pyplay.ui.session.TrainingSession` loop drives it) for :data:`COMPARE_STEPS` steps, and
evaluates both models by length (:func:`pyplay.tasks.by_length.accuracy_by_length`) on fresh
sources from the shortest training length to twice the longest.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyplay.models.seq2seq import EncoderDecoder
from pyplay.models.seq2seq.encoder_decoder import ATTENDING
from pyplay.tasks.by_length import LengthCurve, accuracy_by_length
from pyplay.tasks.seq2seq import PAIR_TASKS
from pyplay.train import Trainer
from pyplay.ui.comparison import SideBySide
from pyplay.ui.lessons.seq2seq.state import LENGTH_TASKS

__all__ = ["COMPARE_STEPS", "EVAL_PAIRS", "WIRINGS", "ComparisonSetting", "LengthComparison"]

COMPARE_STEPS = 500  # training steps of each model
EVAL_PAIRS = 25  # fresh sources per length in every evaluation
WIRINGS = {"init": "plain (Sutskever)", "attention": "attention (Luong)"}


@dataclass(frozen=True)
class ComparisonSetting:
    """What a comparison trains: the task, its training lengths and the models' sizes."""

    task: str
    min_len: int
    max_len: int
    cell: str
    hidden_size: int
    score: str
    lr: float
    batch_size: int
    seed: int
    steps: int = COMPARE_STEPS
    num_layers: int = 1
    wiring: str = "init"  # the lesson's wiring (used by the shared-RNN comparison)
    scale_by: str = "key_size"  # the scaled dot product's divisor (√d or √n_source)

    @classmethod
    def of(cls, state: Any, steps: int = COMPARE_STEPS) -> ComparisonSetting:
        """The setting of a :class:`~pyplay.ui.lessons.seq2seq.state.Seq2SeqState` now
        (its task if that draws sources of a chosen length, else reversal)."""
        task = state.task if state.task in LENGTH_TASKS else "reversal"
        score = state.score if state.wiring in ATTENDING else "general"
        return cls(
            task, int(state.min_len), int(state.max_len), state.cell, int(state.hidden_size),
            score, float(state.lr), int(state.batch_size), int(state.seed), int(steps),
            int(state.num_layers), state.wiring, state.model_scale_by(),
        )  # fmt: skip

    @property
    def lengths(self) -> range:
        """The evaluated source lengths: the shortest training length to twice the longest."""
        return range(self.min_len, 2 * self.max_len + 1)

    def describe(self) -> str:
        what = "Reversal" if self.task == "reversal" else "Copy"
        layers = f"{self.num_layers} layers of " if self.num_layers > 1 else ""
        return (
            f"{what} of {self.min_len}-{self.max_len} letters, {layers}{self.cell.upper()} "
            f"cells of {self.hidden_size} units, {self.steps} steps of {self.batch_size} pairs "
            f"(learning rate {self.lr:g}, seed {self.seed}, attention score {self.score}"
            f"{' by √n_source' if self.scale_by == 'source_length' else ''})"
        )


class LengthComparison(SideBySide):
    """Two encoder-decoders, plain and attention, trained on the same batches, and their
    accuracy by source length (see the module docstring).

    ``running``, ``stopped``, ``train(budget_s=)`` and ``notify`` (from
    :class:`~pyplay.ui.comparison.SideBySide`) are what the shared training loop drives;
    ``message`` is what the section shows next to its buttons; ``losses`` holds each model's
    training loss at every step. Another side-by-side comparison names its
    models in :attr:`MODELS` and builds them in :meth:`_trainer`.
    """

    MODELS: dict[str, str] = WIRINGS  # key -> name of the models trained side by side

    setting: ComparisonSetting | None
    trainers: dict[str, Trainer]

    def __init__(self) -> None:
        super().__init__()
        self.losses: dict[str, list[float]] = {}
        self._curves: tuple[int, dict[str, LengthCurve]] | None = None

    # ------------------------------------------------------------------ building
    def begin(self, state: Any, steps: int = COMPARE_STEPS) -> bool:
        """New models from the lesson's settings now; False with a message if they do not
        fit (the comparison shown so far is kept)."""
        try:
            setting = ComparisonSetting.of(state, steps)
            trainers = {key: self._trainer(setting, key) for key in self.MODELS}
        except (ValueError, TypeError) as err:
            self.notify(f"Cannot compare: {err}", "warning")
            return False
        self.setting, self.trainers, self._curves = setting, trainers, None
        self.losses = {key: [] for key in trainers}
        self.message = ""
        return True

    def _trainer(self, setting: ComparisonSetting, key: str) -> Trainer:
        """A model of wiring ``key`` and its trainer."""
        return self.make_trainer(setting, wiring=key)

    @staticmethod
    def make_trainer(setting: ComparisonSetting, **options: Any) -> Trainer:
        """An encoder-decoder of ``setting`` (``options`` sets or overrides its arguments) and
        its trainer; every trainer's task has the same seed, so all models see the same
        batches."""
        task = PAIR_TASKS[setting.task](
            min_len=setting.min_len, max_len=setting.max_len, rng=setting.seed
        )
        V = len(task.src_vocab)
        wiring = options.pop("wiring", setting.wiring)
        model = EncoderDecoder(
            V, V, embedding_dim=16, hidden_size=setting.hidden_size, cell=setting.cell,
            num_layers=setting.num_layers, wiring=wiring,
            score=setting.score if wiring in ATTENDING else None, rng=setting.seed,
            scale_by=setting.scale_by if wiring in ATTENDING else "key_size", **options,
        )  # fmt: skip
        return Trainer(
            model, task, lr=setting.lr, batch_size=setting.batch_size, clip=1.0,
            rng=setting.seed,
        )  # fmt: skip

    # ------------------------------------------------------------------ training
    def _step(self) -> bool:
        """One training step of every model, its loss kept; False when one diverged."""
        for key, trainer in self.trainers.items():
            record = trainer.train_step()
            if record.status != "ok":
                self.notify(f"The {self.MODELS[key]} model diverged: {record.message}")
                return False
            self.losses[key].append(float(record.loss))
        return True

    # ------------------------------------------------------------------ results
    def curves(self) -> dict[str, LengthCurve]:
        """Exact match and token accuracy by length of both models now (computed once per
        step count; the same fresh sources every time, so curves of two moments compare)."""
        if self.setting is None:
            return {}
        if self._curves is None or self._curves[0] != self.step_count:
            curves = {
                w: accuracy_by_length(t.model, t.task, self.setting.lengths, EVAL_PAIRS, rng=99)
                for w, t in self.trainers.items()
            }
            self._curves = (self.step_count, curves)
        return self._curves[1]

    def progress(self) -> str:
        """One line: the steps done and, from the last evaluation, both models' exact match
        at the longest training length and at the next, just beyond the training range."""
        s = self.setting
        if s is None:
            return "Not trained yet: press Compare."
        text = self.steps_line()
        if self._curves is not None:
            step, curves = self._curves
            plain, attention = curves["init"], curves["attention"]
            text += f" After {step} steps, exact match"
            for length in (s.max_len, s.max_len + 1):
                text += (
                    f" at length {length}: plain {plain.at(length)[0]:.2f}, "
                    f"attention {attention.at(length)[0]:.2f};"
                )
            text = text[:-1] + "."
        return text
