"""A training curve's points in the page: at most :data:`CURVE_POINTS`, evenly spaced in steps.

A lesson's curves (loss, accuracy, gradient norm) gain a point per training step. Streamed
with a rollover of 20,000 points, every stream made BokehJS redo work proportional to the
points in the page's main thread: its index of the points (``compute_indices``), the log
axis's bounds (``log_bounds``), the repaint. While the recurrent lesson trained that was 23 MiB
a second allocated on the main thread, so the browser's memory climbed by hundreds of MiB
between two garbage collections, and the longest tasks grew with the curve.

A curve is now thinned as it grows, the way TensorBoard downsamples a long run: once its last
step ``n`` exceeds ``CURVE_POINTS``, it keeps the first step and the steps that are multiples of
the stride ``s``, the smallest power of two with ``n / s <= CURVE_POINTS``. Between two
doublings of ``s`` new rows are streamed as before (those on the stride); when ``s`` doubles,
the curve is replaced once by its rows on the new stride. The stride follows from the step
numbers alone, so a curve set afresh (a new or loaded model) needs no bookkeeping. The state's
``history`` keeps every step: the metrics download and the status line read that.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["CURVE_POINTS", "CurveBuffer", "curve_stride", "stream_curve", "thinned"]

CURVE_POINTS = 2_000  # a curve's points in the page at most (plus its first step)


def curve_stride(last_step: int, points: int = CURVE_POINTS) -> int:
    """The stride of a curve whose last step is ``last_step``: the smallest power of two ``s``
    with ``last_step / s <= points`` (1 while the curve has room for every step)."""
    stride = 1
    while last_step > points * stride:
        stride *= 2
    return stride


def _kept(steps: Sequence[Any], stride: int, first: Any) -> list[int]:
    """The indices of ``steps`` on ``stride``, and of the curve's ``first`` step."""
    return [i for i, step in enumerate(steps) if step == first or int(step) % stride == 0]


def thinned(data: Mapping[str, Sequence[Any]], points: int = CURVE_POINTS) -> dict[str, list]:
    """``data`` (columns, one of them ``"step"``) with only its rows on the stride of its last
    step (:func:`curve_stride`) and its first row; every row while that stride is 1."""
    columns = {k: list(v) for k, v in data.items()}
    steps = columns.get("step", [])
    if not steps:
        return columns
    stride = curve_stride(int(max(steps)), points)
    if stride == 1:
        return columns
    keep = _kept(steps, stride, steps[0])
    return {k: [v[i] for i in keep] for k, v in columns.items()}


def stream_curve(
    source: Any, rows: Mapping[str, Sequence[Any]], points: int = CURVE_POINTS
) -> None:
    """Append ``rows`` (the columns of ``source``, ``"step"`` among them) to the curve that
    ``source`` (a ``ColumnDataSource``) draws, keeping at most ``points`` points (and the
    first): the rows on the curve's stride are streamed; a row that doubles the stride
    replaces the curve once by its rows on the new stride (:func:`thinned`)."""
    steps = list(rows.get("step", []))
    if not steps:
        return
    drawn = source.data.get("step", [])
    last_before = int(max(drawn)) if len(drawn) else 0
    stride = curve_stride(max(last_before, int(max(steps))), points)
    if stride != curve_stride(last_before, points) and any(
        int(step) % stride for step in list(drawn)[1:]
    ):  # the stride doubled (the rows after the last one drawn can be off it): thin the curve
        source.data = thinned({k: list(v) + list(rows[k]) for k, v in source.data.items()}, points)
        return
    keep = _kept(steps, stride, drawn[0] if len(drawn) else steps[0])
    if len(keep) == len(steps):
        source.stream(dict(rows))
    elif keep:
        columns = {k: list(v) for k, v in rows.items()}
        source.stream({k: [v[i] for i in keep] for k, v in columns.items()})


class CurveBuffer:
    """A curve's points kept in Python before its plot exists: :func:`stream_curve` thins
    it as it does a plot's source (``data``, columns of lists; ``stream`` appends), so a plot
    made later (a closed section's, when first opened) starts from the same points."""

    def __init__(self) -> None:
        self.data: dict[str, list[Any]] = {}

    def stream(self, rows: Mapping[str, Sequence[Any]]) -> None:
        """Append ``rows`` (columns) to :attr:`data`."""
        for key, values in rows.items():
            self.data.setdefault(key, []).extend(values)
