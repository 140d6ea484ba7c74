"""State of the "Pointer networks" lesson: a pointer network (Vinyals et al. 2015) learns to sort
digits or to find the convex hull of points in the plane; its outputs are positions of its
input, picked by the softmax of additive attention scores. The lesson decodes a fixed set of
examples greedily, scores them (exact match and per-step pointer accuracy) and shows one: its
pointing weights at every output step. No Panel here; errors become messages."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import param

from pyplay.models.pointer import PointerNetwork
from pyplay.tasks.hull import ConvexHull
from pyplay.tasks.pairs import SPECIALS, PairBatch, PointerBatch
from pyplay.tasks.seq2seq import Sorting
from pyplay.train import Trainer
from pyplay.ui.base_state import LessonBase, lr_param, seed_param
from pyplay.ui.trainer_lesson import TrainerLesson

__all__ = ["EVAL_SEED", "EXAMPLES", "PointerLessonState", "Pointing", "Score"]

EXAMPLES = 100  # greedy decoding is scored on this many fixed examples
EVAL_SEED = 12345  # ... drawn from this seed (the same for every model, so runs compare)
EMBEDDING_DIM = 16


@dataclass(frozen=True)
class Score:
    """Greedy decoding on the fixed examples: the fraction of examples whose whole output is
    right (``exact``), and of target steps pointed at rightly (``pointer``)."""

    exact: float
    pointer: float
    examples: int


@dataclass(frozen=True)
class Pointing:
    """One example decoded greedily: ``inputs`` the labels of the source positions (digits, or
    point indices and END), ``predicted`` / ``target`` the positions pointed at, ``weights``
    (U, S) the pointing distribution softmax(u^i) at every output step (the decoder fed its own
    previous choice), ``values`` the sorting example's digits (None for the hull), ``points``
    the hull example's points (n, 2) (None for sorting)."""

    inputs: list[str]
    predicted: list[int]
    target: list[int]
    weights: np.ndarray
    values: list[int] | None
    points: np.ndarray | None

    @property
    def right(self) -> bool:
        return self.predicted == self.target


class PointerLessonState(TrainerLesson, LessonBase):
    """Settings and actions of the Pointer networks lesson."""

    accuracy_metric = "accuracy"  # teacher-forced pointing, over the last steps trained
    task = param.Selector(objects=["sorting", "hull"], default="sorting")
    cell = param.Selector(objects=["lstm", "gru", "rnn"], default="lstm")
    hidden_size = param.Integer(default=32, softbounds=(4, 128))
    min_len = param.Integer(default=3, softbounds=(3, 20), doc="fewest digits or points")
    max_len = param.Integer(default=6, softbounds=(3, 20), doc="most digits or points")
    lr = lr_param(0.01)
    batch_size = param.Integer(default=32, softbounds=(1, 256))
    seed = seed_param()
    model: PointerNetwork | None

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._examples: PairBatch | PointerBatch | None = None
        self._start(
            rebuild=["task", "cell", "hidden_size", "min_len", "max_len", "seed"],
            training=["lr", "batch_size"],
        )

    # ------------------------------------------------------------------ building
    def _make_task(self, rng: Any = None) -> Sorting | ConvexHull:
        rng = self.seed if rng is None else rng
        if self.min_len > self.max_len:
            raise ValueError(
                f"the fewest digits or points ({self.min_len}) must not be more than the most "
                f"({self.max_len})"
            )
        if self.task == "hull":
            return ConvexHull(min_points=self.min_len, max_points=self.max_len, rng=rng)
        return Sorting(min_len=self.min_len, max_len=self.max_len, output="positions", rng=rng)

    def _build_model(self, task: Any) -> PointerNetwork:
        if isinstance(task, Sorting):
            sizes: dict[str, Any] = {"vocab_size": len(task.src_vocab)}
        else:
            sizes = {"vocab_size": None, "input_size": task.input_size}
        return PointerNetwork(
            embedding_dim=EMBEDDING_DIM,
            hidden_size=self.hidden_size,
            cell=self.cell,
            rng=self.seed,
            **sizes,
        )

    def _make_trainer(self, model: Any, task: Any) -> Trainer:
        return Trainer(model, task, lr=self.lr, batch_size=self.batch_size, clip=5.0)

    def _built(self, task: Any, model: Any) -> None:
        """The fixed examples greedy decoding is scored on, for the new task."""
        self._examples = self._make_task(rng=EVAL_SEED).batch(EXAMPLES)

    def _file_prepare(self, loaded: Any) -> Any:
        """A loaded file's model, and the fixed examples of its task."""
        commit = super()._file_prepare(loaded)

        def done() -> None:
            commit()
            self._built(self.task_obj, self.model)

        return done

    def _built_message(self, task: Any, model: Any) -> str:
        return (
            f"{task.describe()} A pointer network ({self.cell.upper()}, width "
            f"{self.hidden_size}, {model.num_parameters():,} parameters) points at positions "
            "of its input: its output dictionary is the input itself."
        )

    # ------------------------------------------------------------------ training
    def _untrained_note(self) -> str:
        assert self.task_obj is not None
        return f". Pointing uniformly: {self.task_obj.baseline_loss():.3f}"

    def _status_extra(self) -> str:
        if self.accuracy is None:
            return ""
        return f", pointer accuracy (teacher forced) {self.accuracy:.2f}"

    # ------------------------------------------------------------------ looking inside
    def _targets(self) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """The fixed examples' source, lengths and end positions (None for sorting)."""
        batch = self._examples
        assert batch is not None
        if isinstance(batch, PointerBatch):
            return batch.src, batch.src_lengths, batch.end
        return batch.src, batch.src_lengths, None

    def target(self, k: int) -> list[int]:
        """The positions example ``k`` must point at, in order."""
        batch = self._examples
        if isinstance(batch, PointerBatch):
            return [int(t) for t in batch.targets[k, : batch.mask[k].sum()]]
        assert isinstance(batch, PairBatch)
        n = int(batch.src_lengths[k])
        return [int(t) - len(SPECIALS) for t in batch.tgt_out[k, :n]]

    def decode(self) -> list[list[int]]:
        """Greedy pointers for every fixed example (never one position twice; the hull stops
        after pointing at END)."""
        if self.model is None or self._examples is None:
            return []
        src, lengths, end = self._targets()
        return self.model.greedy(src, lengths, end)

    def score(self, decoded: list[list[int]] | None = None) -> Score | None:
        """Exact match and per-step pointer accuracy of greedy decoding on the fixed examples
        (a step is right when the position pointed at is the target's at that step)."""
        decoded = self.decode() if decoded is None else decoded
        if not decoded:
            return None
        exact = hits = steps = 0
        for k, got in enumerate(decoded):
            want = self.target(k)
            exact += got == want
            hits += sum(g == w for g, w in zip(got, want, strict=False))
            steps += len(want)
        return Score(exact / len(decoded), hits / max(steps, 1), len(decoded))

    def pointing(self, k: int, decoded: list[list[int]] | None = None) -> Pointing | None:
        """Example ``k`` decoded greedily, with the pointing weights of every step."""
        decoded = self.decode() if decoded is None else decoded
        if not decoded or self.model is None:
            return None
        k = max(0, min(int(k), len(decoded) - 1))
        src, lengths, _ = self._targets()
        n = int(lengths[k])
        got = decoded[k]
        ptr_in = np.array([[-1, *got[:-1]]])  # (1, U): the decoder reads its own choices
        probs, _ = self.model.forward(src[k : k + 1, :n], lengths[k : k + 1], ptr_in)  # (1, U, n)
        values = points = None
        if src.ndim == 3:  # the hull: point indices, then END
            points = np.asarray(src[k, : n - 1, :2])  # (n - 1, 2)
            inputs = [str(i) for i in range(n - 1)] + ["END"]
        else:
            values = [int(v) - len(SPECIALS) for v in src[k, :n]]
            inputs = [str(v) for v in values]
        return Pointing(inputs, got, self.target(k), probs[0], values, points)
