"""The CTC lesson without a browser, and the CTC objective of the common Trainer."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("panel")

from pyplay.models import SequenceModel
from pyplay.tasks.ctc_frames import CTCFrames
from pyplay.train import Trainer
from pyplay.ui.lessons.ctc.state import CTCState
from pyplay.ui.lessons.ctc.view import CTCLesson


def test_trainer_uses_the_ctc_loss() -> None:
    task = CTCFrames(rng=0)
    model = SequenceModel.for_task(task, "gru", hidden_size=16, bidirectional=True, rng=0)
    trainer = Trainer(model, task, lr=0.02, batch_size=16)
    records = list(trainer.run(60))
    assert records[-1].loss < 0.7 * records[0].loss
    assert {"exact_match", "label_error_rate"} <= set(records[-1].metrics)
    assert set(trainer.evaluate(batch_size=32)) == {"loss", "exact_match", "label_error_rate"}
    with pytest.raises(ValueError, match="tbptt=True is for character models, not for CTC"):
        Trainer(model, task, tbptt=True)


def test_lesson_state_learns_to_read_the_frames() -> None:
    state = CTCState()
    before = state.view(0)
    assert before is not None and before.probs.shape[1] == 5 and before.classes[0] == "_"
    np.testing.assert_allclose(before.probs.sum(axis=1), 1.0, rtol=1e-6)
    state.train(steps=250)
    assert state.trainer.evaluate(batch_size=200)["exact_match"] > 0.7
    views = [state.view(k) for k in range(8)]
    assert sum(v.decoded == v.target for v in views) >= 6
    v = views[0]
    assert len(v.best_path) == len(v.frames) == v.probs.shape[0]
    collapsed = "".join(c for i, c in enumerate(v.best_path) if i == 0 or c != v.best_path[i - 1])
    assert collapsed.replace("_", "") == v.decoded  # the collapse of the best path


def test_settings_rebuild_and_bad_values_are_messages() -> None:
    state = CTCState()
    state.train(steps=2)
    version = state.version
    state.noise = 0.5
    assert state.version == version + 1 and state.trainer.step_count == 0
    state.train(steps=2)
    state.lr = 0.0
    assert state.message_kind == "danger" and "lr must be > 0" in state.message
    assert state.trainer.step_count == 2
    state.noise = -1.0
    assert "Not rebuilt" in state.message and state.version == version + 1


def test_lesson_renders_probabilities_and_paths() -> None:
    lesson = CTCLesson()
    lesson.state.train(steps=5)
    lesson.refresh()
    assert "best path" in lesson.paths.object and "collapse" in lesson.paths.object
    image = lesson.prob_source.data["image"][0]
    assert image.shape[0] == 5  # one row per class, blank first
    assert lesson.panel() is not None
