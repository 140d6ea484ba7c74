"""Show, Attend and Tell learns the captioned scenes (fixed seeds, the same batches for every
model): soft attention writes better captions than the no-attention encoder-decoder, which sees
only the mean annotation and so cannot say where a shape is, and its attention for a colour or
shape word lands on that shape far more often than chance; hard attention, trained by
REINFORCE with a running-mean baseline, learns too (IDSIA lecture, "Image Captioning with
Visual Attention": soft vs hard; TEK5040 lecture, "Image captioning with RNN and content-based
attention")."""

from __future__ import annotations

import pytest

from pyplay.models.captioner import Captioner
from pyplay.objectives.caption import train
from pyplay.tasks.scenes import CaptionedScenes


def _trained(attention: str, steps: int, lr: float) -> dict[str, float]:
    task = CaptionedScenes(min_shapes=1, max_shapes=1, rng=0)
    model = Captioner(task.vocab_size, attention=attention, rng=0)
    objective = train(model, task, steps, batch_size=32, lr=lr)
    held_out = CaptionedScenes(min_shapes=1, max_shapes=1, rng=123)
    return objective.evaluate(held_out, 300)


@pytest.mark.slow
def test_idsia_image_captioning_visual_attention_soft_beats_none_and_looks_at_the_named_shape():
    soft, none = _trained("soft", 150, 0.01), _trained("none", 150, 0.01)
    assert soft["accuracy"] >= 0.9 and none["accuracy"] <= 0.82, (soft, none)
    assert soft["accuracy"] - none["accuracy"] >= 0.12, (soft, none)
    assert soft["loss"] < 0.6 * none["loss"], (soft, none)
    assert soft["on_shape"] >= 0.8 and soft["on_shape"] >= 5 * soft["chance"], soft


@pytest.mark.slow
def test_idsia_image_captioning_hard_attention_learns_by_reinforce_with_a_baseline():
    hard = _trained("hard", 300, 0.01)
    assert hard["accuracy"] >= 0.85, hard  # the no-attention model stays near 0.77
    assert hard["on_shape"] >= 3 * hard["chance"], hard
