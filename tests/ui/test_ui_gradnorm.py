"""Issue 19, "the gradient norm plotted live with the clipping threshold drawn on it": the
recurrent lesson's norm plot receives every trained step's pre-clipping norm, draws the
threshold where the Clip control says (no line when clipping is off), and starts empty for a
new model."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pyplay.ui.lessons.rnn.view import RecurrentLesson
from pyplay.ui.plot_gradnorm import GradNormPlot


@pytest.mark.slow
def test_the_norm_plot_follows_training_and_the_clip_control():
    lesson = RecurrentLesson()
    norms = lesson.norms
    assert list(norms.source.data["step"]) == []
    assert norms.clip_line.visible and norms.clip_line.location == lesson.state.clip == 1.0

    records = lesson.state.train(steps=6)
    lesson._stream(records)
    assert list(norms.source.data["step"]) == [r.step for r in records] == [1, 2, 3, 4, 5, 6]
    shown = np.asarray(norms.source.data["grad_norm"])
    assert np.array_equal(shown, [r.grad_norm for r in records])
    assert np.all(shown > 0) and np.all(np.isfinite(shown))
    # the threshold's invisible point keeps the line in the axes' range
    assert norms._reach.data == {"step": [1.0], "clip": [1.0]}

    lesson.state.clip = 0.25
    assert norms.clip_line.location == 0.25 and norms.clip_line.visible
    assert norms._legend.items[-1].label.value == "clip threshold c = 0.25 (above: scaled to c)"
    lesson.state.clip = 0
    assert not norms.clip_line.visible
    assert norms._legend.items[-1].label.value == "clipping off"
    assert math.isnan(norms._reach.data["clip"][0])

    lesson.state.hidden_size = 16  # a new model: no norms of the old one
    lesson.state.reset()
    assert list(norms.source.data["step"]) == []


@pytest.mark.slow
def test_the_plotted_norm_is_the_norm_before_clipping():
    """A step clipped to c = 1e-3 reports the gradient's own norm (as torch's
    clip_grad_norm_ returns it), so the points lie above the line they were scaled to."""
    lesson = RecurrentLesson()
    lesson.state.clip = 1e-3
    trainer = lesson.state.trainer
    assert trainer is not None and trainer.clip == 1e-3  # the control reached the trainer
    records = lesson.state.train(steps=3)
    lesson._stream(records)
    shown = np.asarray(lesson.norms.source.data["grad_norm"])
    assert len(shown) == 3 and np.all(shown > 1e-3)  # after clipping each would be <= 1e-3


def test_a_diverged_step_is_a_gap():
    plot = GradNormPlot()

    class Record:
        def __init__(self, step: int, grad_norm: float) -> None:
            self.step, self.grad_norm = step, grad_norm

    plot.stream([Record(1, 2.0), Record(2, float("inf")), Record(3, 0.5)])
    assert list(plot.source.data["step"]) == [1, 2, 3]
    g = plot.source.data["grad_norm"]
    assert g[0] == 2.0 and math.isnan(g[1]) and g[2] == 0.5
    plot.clear()
    assert list(plot.source.data["grad_norm"]) == []


def test_the_log_ticks_span_the_norms_and_the_threshold_not_the_steps():
    plot = GradNormPlot()

    class Record:
        def __init__(self, step: int, grad_norm: float) -> None:
            self.step, self.grad_norm = step, grad_norm

    plot.set_clip(5.0)
    plot.stream([Record(500 + k, 0.01 * (k + 1)) for k in range(4)])
    ticks = list(plot.fig.yaxis[0].ticker.ticks)
    assert min(ticks) <= 0.01 and 5.0 <= max(ticks) <= 100.0, ticks  # not up to step 503
