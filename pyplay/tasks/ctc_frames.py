"""Reading symbols out of unaligned noisy frames: a toy task for CTC (Graves et al. 2006)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from pyplay._checks import check_array, check_float, check_int
from pyplay.decode.ctc import ctc_loss
from pyplay.decode.ctc_decode import ctc_greedy_decode
from pyplay.tasks.base import Batch, Task

__all__ = ["CTCBatch", "CTCFrames", "edit_distance"]

BLANK = 0


@dataclass(frozen=True)
class CTCBatch(Batch):
    """A :class:`Batch` whose targets are label sequences, not one class per frame.

    inputs : (B, T, F) float frames, zero after each sequence's length
    targets : (B, S) int64 labels in ``1..n_symbols``, padded with the blank (0)
    mask : (B, T) bool, the valid frames
    lengths : (B,) int64 frame counts (``input_lengths`` of :func:`pyplay.decode.ctc_loss`)
    target_lengths : (B,) int64 label counts
    frame_labels : (B, T) int64, the class each frame was rendered from (0 for silence and
        padding): the alignment CTC never sees, kept for display
    """

    target_lengths: np.ndarray = field(kw_only=True)
    frame_labels: np.ndarray = field(kw_only=True)


def edit_distance(a: list[int], b: list[int]) -> int:
    """Levenshtein distance between two label sequences (insertions, deletions, substitutions)."""
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (x != y))
    return row[-1]


class CTCFrames(Task):
    """Read a short label sequence out of noisy frames that were never aligned to it.

    Each example draws ``min_len``..``max_len`` symbols from ``1..n_symbols``. Every symbol is
    rendered as ``min_frames``..``max_frames`` frames of its one-hot pattern over ``n_symbols``
    features, scaled by an amplitude in [0.7, 1.3] drawn per symbol, with
    ``0``..``max_gap`` silent frames (zeros) before, between and after the symbols; two equal
    neighbours are always separated by at least one silent frame (otherwise ``a a`` could not
    be told from a long ``a``). Gaussian noise of standard deviation ``noise`` is added to every
    valid frame. Frame counts differ per example, so batches are padded (see
    :class:`CTCBatch`).

    Targets are the labels only: where each one starts and ends is not given, which is what
    connectionist temporal classification learns to handle. Outputs have ``n_symbols + 1``
    classes, class 0 being the CTC blank.

    Trivial baseline: a uniform distribution over the classes at every frame; its mean CTC loss
    (torch's "mean" reduction) is estimated once on 256 examples from a fixed seed.
    """

    name = "ctc_frames"
    objective = "ctc"  # trained with the CTC loss (pyplay.objectives.make_objective)
    input_kind = "real"
    output_kind = "classes"
    blank = BLANK

    def __init__(
        self,
        n_symbols: int = 4,
        min_len: int = 2,
        max_len: int = 6,
        min_frames: int = 2,
        max_frames: int = 5,
        max_gap: int = 2,
        noise: float = 0.3,
        rng: np.random.Generator | int | None = 0,
    ) -> None:
        n_symbols = check_int("n_symbols", n_symbols, min_value=2, max_value=100)
        min_len = check_int("min_len", min_len, min_value=1, max_value=100)
        max_len = check_int("max_len", max_len, min_value=min_len, max_value=100)
        min_frames = check_int("min_frames", min_frames, min_value=1, max_value=100)
        max_frames = check_int("max_frames", max_frames, min_value=min_frames, max_value=100)
        max_gap = check_int("max_gap", max_gap, min_value=1, max_value=100)
        noise = check_float("noise", noise, min_value=0.0, max_value=10.0)
        super().__init__(
            rng,
            n_symbols=n_symbols,
            min_len=min_len,
            max_len=max_len,
            min_frames=min_frames,
            max_frames=max_frames,
            max_gap=max_gap,
            noise=noise,
        )
        self.n_symbols, self.min_len, self.max_len = n_symbols, min_len, max_len
        self.min_frames, self.max_frames, self.max_gap = min_frames, max_frames, max_gap
        self.noise = noise
        self.input_size = n_symbols
        self.output_size = n_symbols + 1
        self._baseline: float | None = None

    def _example(self, rng: np.random.Generator) -> tuple[list[int], list[int], list[float]]:
        """Labels, the class of every frame and the amplitude of every frame, for one example."""
        n = int(rng.integers(self.min_len, self.max_len + 1))
        labels = [int(k) for k in rng.integers(1, self.n_symbols + 1, size=n)]
        frames: list[int] = [BLANK] * int(rng.integers(0, self.max_gap + 1))
        amplitude = [0.0] * len(frames)
        for i, k in enumerate(labels):
            if i:
                gap = int(rng.integers(0, self.max_gap + 1))
                gap = max(gap, 1) if k == labels[i - 1] else gap
                frames += [BLANK] * gap
                amplitude += [0.0] * gap
            hold = int(rng.integers(self.min_frames, self.max_frames + 1))
            frames += [k] * hold
            amplitude += [float(rng.uniform(0.7, 1.3))] * hold
        tail = int(rng.integers(0, self.max_gap + 1))
        return labels, frames + [BLANK] * tail, amplitude + [0.0] * tail

    def _draw(self, batch_size: int, rng: np.random.Generator) -> CTCBatch:
        examples = [self._example(rng) for _ in range(batch_size)]
        B, F = batch_size, self.n_symbols
        lengths = np.array([len(f) for _, f, _ in examples], dtype=np.int64)  # (B,)
        target_lengths = np.array([len(y) for y, _, _ in examples], dtype=np.int64)  # (B,)
        T, S = int(lengths.max()), int(target_lengths.max())
        targets = np.full((B, S), BLANK, dtype=np.int64)  # (B, S)
        frame_labels = np.full((B, T), BLANK, dtype=np.int64)  # (B, T)
        amplitude = np.zeros((B, T))  # (B, T)
        for b, (y, f, a) in enumerate(examples):
            targets[b, : len(y)] = y
            frame_labels[b, : len(f)] = f
            amplitude[b, : len(a)] = a
        mask = np.arange(T)[None, :] < lengths[:, None]  # (B, T)
        onehot = frame_labels[..., None] == np.arange(1, F + 1)  # (B, T, F)
        inputs = onehot * amplitude[..., None]  # (B, T, F)
        if self.noise:
            inputs = inputs + self.noise * rng.standard_normal((B, T, F))
        inputs = inputs * mask[..., None]  # (B, T, F): zero padding
        return CTCBatch(
            inputs,
            targets,
            mask,
            lengths,
            target_lengths=target_lengths,
            frame_labels=frame_labels,
        )

    def _batch(self, batch_size: int) -> CTCBatch:
        return self._draw(batch_size, self.rng)

    def batch(self, batch_size: int) -> CTCBatch:
        """A fresh batch of ``batch_size`` examples (see :class:`CTCBatch`)."""
        size = check_int("batch_size", batch_size, min_value=1, max_value=65536)
        return self._draw(size, self.rng)

    def baseline_loss(self) -> float:
        """Computed once per task object (it runs the CTC loss over 256 examples)."""
        if self._baseline is None:
            sample = self._draw(256, np.random.default_rng(12345))
            B, T = sample.mask.shape
            uniform = np.full((B, T, self.output_size), -np.log(self.output_size))  # (B, T, C)
            loss, _ = ctc_loss(uniform, sample.targets, sample.lengths, sample.target_lengths)
            self._baseline = float(loss)
        return self._baseline

    def metric(self, outputs: np.ndarray, batch: Batch) -> dict[str, float]:
        """Greedy (best-path) decoding of ``outputs`` (B, T, C) against the targets: the share
        of exactly right sequences and the label error rate (edit distance / labels)."""
        if not isinstance(batch, CTCBatch):
            raise TypeError(f"batch must be a CTCBatch, got {type(batch).__name__}")
        out = check_array("outputs", outputs, ndim=3, layout="(B, T, C)")
        if out.shape[:2] != batch.mask.shape:
            raise ValueError(
                f"outputs must have shape (B, T, C) with (B, T) = {batch.mask.shape}, "
                f"got {out.shape}"
            )
        decoded = ctc_greedy_decode(out, batch.lengths, blank=BLANK)
        rows = batch.targets.tolist()
        truth = [rows[b][: int(n)] for b, n in enumerate(batch.target_lengths)]
        exact = np.mean([d == t for d, t in zip(decoded, truth, strict=True)])
        errors = sum(edit_distance(d, t) for d, t in zip(decoded, truth, strict=True))
        return {
            "exact_match": float(exact),
            "label_error_rate": errors / max(int(batch.target_lengths.sum()), 1),
        }

    def describe(self) -> str:
        return (
            f"CTC frames: {self.min_len}-{self.max_len} symbols (of {self.n_symbols}), each "
            f"held for {self.min_frames}-{self.max_frames} noisy frames with up to "
            f"{self.max_gap} silent frames around them. The targets are only the symbols, "
            "not where they are: the network outputs a symbol or 'blank' at every frame and "
            "the CTC loss sums over every way of aligning the symbols to the frames. A uniform "
            f"guess scores a loss of {self.baseline_loss():.3f}."
        )
