"""The Transformers lesson's training step as the page runs it (developer-only, see
:mod:`pyplay.bench`): the lesson's state at its defaults (decoder-only, d_model 32, 4 heads, 2
layers, sequence length 10, sinusoidal positions, causal, the copy task, B=32, float32, Adam with
clipping, and the LSTM trained beside it step for step), and what its Train button calls for
every step, ``state.train(steps=1)``. PyTorch has no twin of a lesson, so this case has no
baseline: compare two versions of pyplay by timing this step in each, alternately.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["lesson_step"]


def lesson_step(compare_lstm: bool = True) -> Callable[[], float]:
    """A closure running one step of the Transformers lesson at its defaults (the LSTM beside
    it too, unless ``compare_lstm`` is False); returns the transformer's loss."""
    from pyplay.ui.lessons.transformer.state import TransformerLessonState

    state = TransformerLessonState(compare_lstm=compare_lstm)

    def step() -> float:
        ((_, loss, _),) = state.train(steps=1)
        return float(loss)

    return step
