"""A training curve keeps at most CURVE_POINTS points in the page, evenly spaced in steps, its
first step always; the state's history keeps every step (pyplay.ui.curve_points)."""

from __future__ import annotations

import numpy as np
import pytest
from bokeh.document import Document
from bokeh.models import ColumnDataSource

from pyplay.train import StepRecord
from pyplay.ui.curve_points import CURVE_POINTS, curve_stride, stream_curve, thinned
from pyplay.ui.export_bar import curve_data
from pyplay.ui.plot_gradnorm import GradNormPlot
from pyplay.ui.training import stream_losses


def _records(first: int, last: int) -> list[StepRecord]:
    return [StepRecord(step=k, loss=1.0 / k, grad_norm=float(k), lr=0.01, seconds=0.001)
            for k in range(first, last + 1)]  # fmt: skip


def _stream_in_slices(source: ColumnDataSource, last: int, points: int, size: int = 37) -> None:
    for a in range(1, last + 1, size):
        steps = list(range(a, min(a + size, last + 1)))
        stream_curve(source, {"step": steps, "loss": [1.0 / k for k in steps]}, points)


def test_the_stride_is_the_smallest_power_of_two_that_fits():
    assert [curve_stride(n, 100) for n in (0, 1, 100, 101, 200, 201, 400, 401, 10_000)] == [
        1, 1, 1, 2, 2, 4, 4, 8, 128,
    ]  # fmt: skip
    assert curve_stride(CURVE_POINTS) == 1 and curve_stride(CURVE_POINTS + 1) == 2


def test_a_short_curve_keeps_every_step():
    data: dict[str, list[float]] = {"step": [1, 2, 3], "loss": [0.3, 0.2, 0.1]}
    assert thinned(data, points=3) == data
    source = ColumnDataSource({"step": [], "loss": []})
    _stream_in_slices(source, 100, points=100)
    assert list(source.data["step"]) == list(range(1, 101))


@pytest.mark.parametrize("last", [101, 1_000, 9_999, 10_000])
def test_a_long_curve_is_thinned_evenly_and_keeps_its_first_step(last):
    source = ColumnDataSource({"step": [], "loss": []})
    _stream_in_slices(source, last, points=100)
    steps = list(source.data["step"])
    stride = curve_stride(last, 100)
    assert steps[0] == 1 and steps[1:] == list(range(stride, last + 1, stride))
    assert len(steps) <= 101
    # every point is the step's own value, never an average
    np.testing.assert_allclose(source.data["loss"], [1.0 / k for k in steps])
    # thinning what was streamed gives the curve a set-afresh source draws (a loaded model)
    assert thinned({"step": list(range(1, last + 1)), "loss": [1.0 / k for k in
                    range(1, last + 1)]}, points=100)["step"] == steps  # fmt: skip


def test_the_curve_is_replaced_only_when_its_stride_doubles():
    source = ColumnDataSource({"step": [], "loss": []})
    doc = Document()
    doc.add_root(source)
    sent: list[str] = []  # what the page would receive: a stream, or the whole data
    doc.on_change(lambda event: sent.append(type(event).__name__))
    _stream_in_slices(source, 1_000, points=100)
    # 1,000 steps on 100 points: the stride goes 1 -> 2 -> 4 -> 8 -> 16, one replacement each
    assert sent.count("ColumnDataChangedEvent") == 4
    assert sent.count("ColumnsStreamedEvent") == len(sent) - 4 > 0


def test_a_lesson_curve_from_the_history_and_from_the_stream_agree():
    records = _records(1, 3 * CURVE_POINTS)
    source = ColumnDataSource({"step": [], "loss": []})
    for k in range(0, len(records), 50):  # the page streams a slice of records at a time
        stream_losses(source, records[k : k + 50])
    history: dict[str, list[float]] = {
        "step": [r.step for r in records],
        "loss": [r.loss for r in records],
    }
    assert curve_data(history, ("step", "loss")) == {k: list(v) for k, v in source.data.items()}
    assert CURVE_POINTS // 2 <= len(source.data["step"]) <= CURVE_POINTS + 1
    assert len(history["step"]) == 3 * CURVE_POINTS  # the history (the CSV) keeps every step


def test_the_gradient_norm_curve_is_thinned_too():
    plot = GradNormPlot()
    records = _records(1, 3 * CURVE_POINTS)
    for k in range(0, len(records), 64):
        plot.stream(records[k : k + 64])
    steps = list(plot.source.data["step"])
    assert steps[0] == 1 and len(steps) <= CURVE_POINTS + 1
    assert plot.source.data["grad_norm"][-1] == float(steps[-1])
