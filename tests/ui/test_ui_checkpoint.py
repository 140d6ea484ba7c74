"""Lesson files: every lesson state saves and loads its model (same predictions, step count,
history), refuses every kind of bad file with a message and nothing changed, and its files
load natively; the export bar (model, metrics CSV, code) and the PNG save tool of the plots."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

pn = pytest.importorskip("panel")

from lesson_cases import gather  # noqa: E402
from pyplay.io import load, load_model, resume, save, save_model  # noqa: E402
from pyplay.models import SequenceModel  # noqa: E402
from pyplay.tasks import make_task  # noqa: E402
from pyplay.train import Trainer  # noqa: E402
from pyplay.ui.checkpoint import settings_names  # noqa: E402
from pyplay.ui.export_bar import ExportBar  # noqa: E402
from pyplay.ui.lessons import SPECS  # noqa: E402
from pyplay.ui.lessons.ctc.state import CTCState  # noqa: E402
from pyplay.ui.lessons.memory.state import MemoryLessonState  # noqa: E402
from pyplay.ui.lessons.rnn.state import LessonState  # noqa: E402
from pyplay.ui.lessons.seq2seq.state import Seq2SeqState  # noqa: E402
from pyplay.ui.lessons.transformer.state import TransformerLessonState  # noqa: E402
from pyplay.ui.trainer_lesson import TrainerLesson  # noqa: E402

# lesson key -> (state class, settings to train with, other settings to load into); each
# lesson's settings in its folder: tests/lessons/<key>/cases.py
LESSONS: dict[str, tuple[Callable[..., Any], dict[str, Any], dict[str, Any]]] = {
    key: (SPECS[key].state_class(), settings, other)
    for key, (settings, other) in gather("FILES").items()
}


def _model(state: Any) -> Any:
    return state.net if hasattr(state, "net") else state.model


def _snapshot(state: Any, lesson: str) -> dict[str, Any]:
    model = _model(state)
    return {
        "model": model,
        "params": {k: v.copy() for k, v in model.params.items()},
        "settings": {k: getattr(state, k) for k in settings_names(lesson)},
        "history": {k: list(v) for k, v in state.history.items()},
        "version": state.version,
        "status": state.status,
    }


def _assert_untouched(state: Any, lesson: str, before: dict[str, Any]) -> None:
    after = _snapshot(state, lesson)
    assert after["model"] is before["model"]
    for k, v in before["params"].items():
        np.testing.assert_array_equal(after["params"][k], v)
    assert after["settings"] == before["settings"] and after["history"] == before["history"]
    assert after["version"] == before["version"] and after["status"] == before["status"]


def _outputs(state: Any) -> np.ndarray:
    model = _model(state)
    params = sorted(model.params)
    return np.concatenate([model.params[k].ravel() for k in params])


@pytest.fixture(scope="module")
def trained() -> dict[str, tuple[Any, bytes]]:
    out = {}
    for lesson, (cls, settings, _) in LESSONS.items():
        state = cls(**settings)
        state.train(steps=3)
        out[lesson] = (state, state.save_bytes().getvalue())
    return out


@pytest.mark.parametrize("lesson", list(LESSONS))
def test_round_trip_restores_model_settings_step_and_history(lesson: str, trained: Any):
    source, data = trained[lesson]
    cls, settings, other = LESSONS[lesson]
    state = cls(**other)
    version = state.version
    assert state.load_bytes(data), state.message
    assert state.message_kind == "success" and "trained for 3 steps" in state.message
    for k, v in settings.items():
        assert getattr(state, k) == v
    np.testing.assert_array_equal(_outputs(state), _outputs(source))
    assert state.history["step"] == [1, 2, 3] and state.version > version
    assert state.history["loss"] == pytest.approx(source.history["loss"])
    assert state.status.startswith("Step 3")
    state.train(steps=2)  # and it trains on from there
    assert state.history["step"][-2:] == [4, 5]


def test_round_trip_gives_the_same_predictions():
    source = Seq2SeqState(hidden_size=8, cell="lstm", wiring="attention", score="dot")
    source.train(steps=4)
    state = Seq2SeqState()
    assert state.load_bytes(source.save_bytes().getvalue())
    text = source.example_source()
    first, second = source.translate(text), state.translate(text)
    assert first is not None and second is not None and first.output == second.output
    np.testing.assert_array_equal(first.weights, second.weights)
    assert state.trainer.step_count == 4 and state.trainer.optimizer.step_count == 4


def test_the_transformer_file_keeps_the_comparison_lstm():
    source = TransformerLessonState(d_model=8, nhead=2, num_layers=1)
    source.train(steps=3)
    data = source.save_bytes().getvalue()
    lstm = source.lstm_trainer.model
    state = TransformerLessonState()
    assert state.load_bytes(data), state.message
    assert state.lstm_trainer.step_count == 3 and state.lstm_trainer.optimizer.step_count == 3
    assert state.lstm_trainer.task is state.trainer.task  # one task feeds both, as after Reset
    for k, v in lstm.params.items():
        np.testing.assert_array_equal(state.lstm_trainer.model.params[k], v)
    saved, restored = (t.optimizer.state_dict() for t in (source.lstm_trainer, state.lstm_trainer))
    assert set(saved) == set(restored) and len(saved) > 2  # moments, not only lr and step
    for k, v in saved.items():
        np.testing.assert_array_equal(restored[k], v)
    twin = load_model(data, beside="lstm")  # natively too
    np.testing.assert_array_equal(twin.params["head.weight"], lstm.params["head.weight"])
    state.train(steps=1)  # both train on from there
    assert state.lstm_trainer.step_count == 4 and np.isfinite(state.history["lstm"][-1])


def test_a_transformer_file_without_or_with_a_bad_comparison_lstm():
    source = TransformerLessonState(d_model=8, nhead=2, num_layers=1)
    source.train(steps=2)
    data = source.save_bytes().getvalue()
    state = TransformerLessonState(d_model=8, nhead=2, num_layers=1)
    assert state.load_bytes(_resaved(data)), state.message  # an older file: the LSTM afresh
    assert state.lstm_trainer.step_count == 0 and state.trainer.step_count == 2
    ckpt = load(data)
    part = ckpt.beside["lstm"]
    name = max(part.params, key=lambda k: part.params[k].size)
    bad_params = {**part.params, name: part.params[name][..., :1]}
    bad = io.BytesIO()
    save(bad, ckpt.params, optimizer_state=ckpt.optimizer_state, meta=ckpt.meta,
         beside={"lstm": type(part)(bad_params, part.optimizer_state, part.meta)})  # fmt: skip
    state.train(steps=1)
    before = _snapshot(state, "transformer")
    lstm_before = state.lstm_trainer
    assert not state.load_bytes(bad.getvalue())
    assert state.message.startswith("Not loaded: the comparison LSTM in it does not fit")
    _assert_untouched(state, "transformer", before)
    assert state.lstm_trainer is lstm_before


def _zip_with(data: bytes, change: Callable[[dict[str, bytes]], None]) -> bytes:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    change(members)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        for name, blob in members.items():
            archive.writestr(name, blob)
    return buf.getvalue()


def _resaved(data: bytes, params: Any = None, **meta_changes: Any) -> bytes:
    ckpt = load(data)
    meta = {**ckpt.meta, **meta_changes}
    buf = io.BytesIO()
    save(buf, ckpt.params if params is None else params(ckpt.params), meta=meta,
         optimizer_state=ckpt.optimizer_state)  # fmt: skip
    return buf.getvalue()


def _bad_files(lesson: str, data: bytes, other: bytes) -> dict[str, tuple[bytes, str]]:
    def shrink(params: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        name = max(params, key=lambda k: params[k].shape[-1])
        return {**params, name: params[name][..., :1]}

    def drop(params: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return dict(sorted(params.items())[1:])

    ckpt = load(data)
    huge = dict(ckpt.meta["config"])
    size_key = "description" if lesson in ("timeseries", "dynamic") else None
    if size_key is None:
        key = next(k for k in ("hidden_size", "d_model") if k in huge)
        huge[key] = 10**6
    else:
        inputs = huge["description"]["inputs"]
        huge["description"] = {**huge["description"], "inputs": [10**7, *inputs[1:]]}
    return {
        "random bytes": (np.random.default_rng(1).bytes(2000), "not a zip archive"),
        "truncated": (data[: len(data) // 2], "not a zip archive"),
        "garbled array": (
            _zip_with(data, lambda m: m.update({n: b"x" * 40 for n in list(m)[:1]})),
            "not a pyplay checkpoint",
        ),
        "other lesson": (other, "this file is a model of the"),
        "wrong shapes": (_resaved(data, shrink), "must have shape"),
        "missing arrays": (_resaved(data, drop), "missing"),
        "absurd size": (_resaved(data, config=huge), "describes about .* parameters"),
        "unknown class": (_resaved(data, **{"class": "subprocess.Popen"}), "must be one of"),
        "bad setting": (_resaved(data, settings={"seed": -5}), "seed"),
        "unknown setting": (_resaved(data, settings={"colour": 1}), "unknown keys"),
        "bad history": (_resaved(data, history={"step": [1], "loss": ["x"]}), "history"),
        "bad step": (_resaved(data, step=-1), "step count"),
        "step as text": (_resaved(data, step="3"), "step count must be a whole number"),
        "absurd step": (_resaved(data, step=10**13), "step count must be a whole number"),
        "no model": (_resaved(data, **{"class": None, "config": None}), "must be"),
    }


@pytest.mark.slow
@pytest.mark.parametrize("lesson", list(LESSONS))
def test_every_bad_file_is_a_message_and_nothing_changes(lesson: str, trained: Any):
    cls, settings, _ = LESSONS[lesson]
    data = trained[lesson][1]
    other = trained["ctc" if lesson == "rnn" else "rnn"][1]
    state = cls(**settings)
    state.train(steps=2)
    before = _snapshot(state, lesson)
    for case, (blob, match) in _bad_files(lesson, data, other).items():
        assert state.load_bytes(blob) is False, case
        assert state.message.startswith("Not loaded: ") and state.message_kind == "danger"
        assert __import__("re").search(match, state.message), (case, state.message)
        _assert_untouched(state, lesson, before)
    assert state.load_bytes(b"x" * 60_000_001) is False and "at most 50 MB" in state.message
    state.train(steps=1)  # still works
    assert state.history["step"][-1] == 3


def test_a_file_whose_model_does_not_fit_its_settings_is_refused(trained: Any):
    data = trained["rnn"][1]
    settings = {**load(data).meta["settings"], "hidden_size": 16}  # the model has 8
    state = LessonState()
    before = _snapshot(state, "rnn")
    assert not state.load_bytes(_resaved(data, settings=settings))
    assert "does not fit the lesson's settings: " in state.message
    assert "hidden_size 8 (lesson: 16)" in state.message
    _assert_untouched(state, "rnn", before)


@pytest.mark.parametrize("lesson", list(LESSONS))
def test_a_page_file_loads_natively_and_trains_on(lesson: str, trained: Any):
    source, data = trained[lesson]
    model = load_model(data)  # one call
    np.testing.assert_array_equal(
        np.concatenate([model.params[k].ravel() for k in sorted(model.params)]),
        _outputs(source),
    )
    if isinstance(source, TrainerLesson):  # the lessons trained by a Trainer (not dynamic.fit)
        trainer = Trainer(model, source.task_obj, lr=source.lr)
        resume(trainer, load(data))
        assert trainer.step_count == 3
        records = list(trainer.run(2))
        assert [r.step for r in records] == [4, 5] and records[-1].status == "ok"


def test_a_native_model_loads_into_the_page():
    task = make_task("parity", seq_len=10, rng=0)
    model = SequenceModel.for_task(task, "rnn", hidden_size=12, rng=3)
    trainer = Trainer(model, task, lr=0.01)
    list(trainer.run(4))
    buf = io.BytesIO()
    save_model(buf, model, optimizer=trainer.optimizer, step=4,
               meta={"task": "parity", "task_config": {"seq_len": 10}})  # fmt: skip
    state = LessonState()
    assert state.load_bytes(buf.getvalue()), state.message
    assert (state.task, state.cell, state.hidden_size) == ("parity", "rnn", 12)
    assert state.trainer.step_count == 4 and state.history["step"] == []
    x = task.batch(2).inputs
    np.testing.assert_array_equal(
        state.model.forward(x, training=False)[0], model.forward(x, training=False)[0]
    )
    # a native model the lesson's settings cannot build is refused, naming why
    ctc = CTCState()
    bad = io.BytesIO()
    save_model(bad, SequenceModel("gru", input_kind="real", input_size=99, output_size=3))
    assert not ctc.load_bytes(bad.getvalue()) and "input_size 99" in ctc.message


# ---------------------------------------------------------------------------- export bar
def test_export_bar_downloads_loads_and_shows_code():
    state = LessonState(hidden_size=8)
    bar = ExportBar("rnn", state)
    state.train(steps=3)
    csv_text = bar.metrics_file().getvalue().splitlines()
    assert csv_text[0] == "step,loss" and [r.split(",")[0] for r in csv_text[1:]] == ["1", "2", "3"]
    data = bar.model_file().getvalue()
    assert type(load_model(data)).__name__ == "SequenceModel"
    assert bar.show_code is not None and not bar.code.visible
    bar.show_code.value = True
    assert bar.code.visible and "SequenceModel.for_task" in bar.code.object
    compile(bar.code.object, "<as_code>", "exec")
    other = LessonState()
    other_bar = ExportBar("rnn", other)
    other_bar.upload.value = data  # as the file input does
    assert other.message_kind == "success" and other.trainer.step_count == 3
    assert not other_bar.load(b"junk") and "Not loaded" in other.message
    memory_bar = ExportBar("memory", MemoryLessonState())  # every lesson has the script
    assert memory_bar.show_code is not None
    memory_bar.show_code.value = True
    assert "MemoryNet.for_task" in memory_bar.code.object


@pytest.mark.slow
def test_loaded_curve_shows_in_the_view(trained: Any):
    from pyplay.ui.lessons.rnn.view import RecurrentLesson
    from pyplay.ui.lessons.transformer.view import TransformerLesson

    lesson = RecurrentLesson(LessonState())
    assert lesson.state.load_bytes(trained["rnn"][1])
    assert lesson.loss_source.data["step"] == [1, 2, 3]
    view = TransformerLesson(TransformerLessonState())
    assert view.state.load_bytes(trained["transformer"][1])
    assert view.loss_source.data["step"] == [1, 2, 3] and len(view.loss_source.data["lstm"]) == 3


@pytest.mark.slow
def test_every_lesson_plot_has_the_png_save_tool():
    from bokeh.models import Plot, SaveTool

    from pyplay.ui.app import LESSONS as VIEWS

    for spec in VIEWS.values():
        name = spec.view
        view = spec.view_class()()
        plots = list(view.panel().select(pn.pane.Bokeh))
        assert plots, name
        for pane in plots:
            for plot in pane.object.select({"type": Plot}):
                assert any(isinstance(t, SaveTool) for t in plot.toolbar.tools), (name, plot)


def test_an_empty_upload_is_a_message_and_nothing_changes():
    # issue 21: an empty .npz upload did nothing at all
    from pyplay.ui.export_bar import ExportBar
    from pyplay.ui.lessons.rnn.state import LessonState

    state = LessonState()
    state.train(steps=2)
    before = {k: v.copy() for k, v in state.model.params.items()}
    assert ExportBar("rnn", state).load(b"") is False
    assert state.message == "Not loaded: the file is empty (0 bytes)."
    assert state.message_kind == "danger" and state.trainer.step_count == 2
    for name, value in state.model.params.items():
        assert (value == before[name]).all()


def test_a_file_optimiser_rate_other_than_its_settings_is_not_used():
    # issue 21: optim/lr=1e6 in a file trained at 1e6 while the page showed 0.02
    import io as _io

    from pyplay.io import load, save
    from pyplay.ui.lessons.rnn.state import LessonState

    state = LessonState()
    state.train(steps=2)
    ckpt = load(state.save_bytes().getvalue())
    buffer = _io.BytesIO()
    save(buffer, ckpt.params, optimizer_state={**ckpt.optimizer_state, "lr": 1e6}, meta=ckpt.meta)
    fresh = LessonState()
    assert fresh.load_bytes(buffer.getvalue())
    assert fresh.trainer.optimizer.lr == fresh.lr == state.lr
