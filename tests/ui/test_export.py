"""Taking a lesson out of the page: "show as code" runs and reproduces it (and its PyTorch twin
agrees), metrics as CSV, and checkpoints that move between the page and native pyplay."""

from __future__ import annotations

import ast
import csv
import io
import math
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

pytest.importorskip("param")

import pyplay.io
from lesson_cases import gather
from pyplay.models import SequenceModel
from pyplay.tasks import make_task
from pyplay.train import Trainer
from pyplay.ui.export import EMBED_LIMIT, as_code, metrics_csv
from pyplay.ui.lessons import SPECS
from pyplay.ui.lessons.rnn.state import LessonState
from scripts import printed_losses, run_script

try:
    import torch  # noqa: F401

    HAS_TORCH = True
except ImportError:
    HAS_TORCH = False

STEPS = 3


# case id -> (lesson key, settings), each lesson's in its folder: tests/lessons/<key>/cases.py
CASES: dict[str, tuple[str, dict[str, Any]]] = {
    case: (lesson, settings)
    for lesson, cases in gather("EXPORT").items()
    for case, settings in cases.items()
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_the_script_runs_and_reproduces_the_lesson(case: str, tmp_path: Path):
    lesson, settings = CASES[case]
    state = SPECS[lesson].state_class()(**settings)
    assert state.message_kind != "danger", state.message
    code = as_code(lesson, state, steps=STEPS, log_every=1)
    ast.parse(code)
    out = run_script(code, tmp_path)
    state.train(steps=STEPS)
    assert printed_losses(out) == pytest.approx(state.history["loss"], abs=2e-6)
    assert "evaluation on fresh examples:" in out
    if lesson == "ctc":  # the decoding panel's three decoders, with the lesson's lexicon
        assert "best path:" in out and "prefix beam search [(" in out
        assert "lexicon beam search [" in out and f"# the lexicon {state.lexicon!r}" in code
    if lesson in ("rnn", "ctc"):
        ckpt = pyplay.io.load(tmp_path / "pyplay-model.npz")
        assert ckpt.meta["step"] == STEPS
        assert ckpt.params.keys() == state.model.params.keys()
        for name, value in state.model.params.items():  # the weights the lesson trained
            np.testing.assert_allclose(ckpt.params[name], value, rtol=1e-4, atol=1e-6)
        twin = re.search(r"max difference (\S+)", out)
        linear = state.model.nonlinearity == "linear" and state.model.cell == "rnn"
        residual = state.model.residual and state.model.num_layers > 1  # torch has neither
        if linear or residual or getattr(state.model, "delay", 0):
            assert twin is None and "no PyTorch twin" in code
        elif HAS_TORCH:
            assert twin is not None and float(twin.group(1)) < 1e-6
        else:
            assert twin is None


@pytest.mark.slow
def test_a_model_trained_by_the_script_loads_into_the_page(tmp_path: Path):
    source = LessonState(cell="gru", hidden_size=12, task="parity")
    run_script(as_code("rnn", source, steps=20, log_every=10), tmp_path)
    page = LessonState()
    assert page.load_bytes((tmp_path / "pyplay-model.npz").read_bytes()), page.message
    assert page.cell == "gru" and page.hidden_size == 12 and page.task == "parity"
    assert page.trainer is not None and page.trainer.step_count == 20
    page.train(steps=2)
    assert page.trainer.step_count == 22


@pytest.mark.slow
def test_the_script_can_continue_a_saved_model(tmp_path: Path):
    state = LessonState(hidden_size=8)
    state.train(steps=5)
    (tmp_path / "saved.npz").write_bytes(state.save_bytes().read())
    code = as_code("rnn", state, steps=2, log_every=1)
    code = code.replace("CHECKPOINT = None", 'CHECKPOINT = "saved.npz"')
    out = run_script(code, tmp_path)
    assert re.findall(r"^step (\d+):", out, flags=re.M) == ["6", "7"]


@pytest.mark.slow
def test_the_learners_text_is_data_never_code(tmp_path: Path):
    evil = "'''\"\"\"); import os; os.system('echo PWNED') #\n\\x00 {SEED} " * 5
    state = LessonState(seq_len=8)
    assert state.set_user_text(evil), state.message
    code = as_code("rnn", state, steps=1, log_every=1)
    tree = ast.parse(code)
    assert evil in [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)]
    calls = {n.func.attr for n in ast.walk(tree) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Attribute)}  # fmt: skip
    assert "system" not in calls
    out = run_script(code, tmp_path)
    assert "PWNED" not in out


@pytest.mark.slow
def test_long_data_is_read_from_a_file_next_to_the_script(tmp_path: Path):
    text = "abcdefgh ijk\n" * (EMBED_LIMIT // 10)
    state = LessonState()
    assert state.set_user_text(text), state.message
    code = as_code("rnn", state, steps=1, log_every=1)
    assert len(code) < 10_000 and 'Path("my_text.txt")' in code
    (tmp_path / "my_text.txt").write_text(text, encoding="utf-8")
    run_script(code, tmp_path)


@pytest.mark.slow
def test_the_learners_numbers_are_written_as_a_list(tmp_path: Path):
    state = LessonState()
    assert state.set_user_numbers("\n".join(str(math.sin(t / 3)) for t in range(300)))
    code = as_code("rnn", state, steps=2, log_every=1)
    assert "DATA_VALUES = [" in code
    out = run_script(code, tmp_path)
    state.train(steps=2)
    assert printed_losses(out) == pytest.approx(state.history["loss"], abs=2e-6)


def test_bad_requests_are_refused_clearly():
    state = LessonState()
    with pytest.raises(ValueError, match="lesson must be one of rnn, seq2seq"):
        as_code("lddn", state)
    with pytest.raises(ValueError, match="steps must be an integer from 1"):
        as_code("rnn", state, steps=0)
    with pytest.raises(ValueError, match="log_every must be an integer"):
        as_code("rnn", state, log_every=True)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no model yet"):
        as_code("rnn", SimpleNamespace(model=None, trainer=None))
    fake = SimpleNamespace(**vars(state))
    fake.task_obj = SimpleNamespace(config={"seq_len": object()})
    with pytest.raises(ValueError, match="must come from pyplay"):
        as_code("rnn", fake)
    fake.task_obj = type(state.task_obj)(seq_len=10)
    fake.task_obj.config["seq_len"] = float("nan")
    with pytest.raises(ValueError, match="seq_len must be a finite number"):
        as_code("rnn", fake)
    fake.task_obj.config = {"seq_len); import os": 3}
    with pytest.raises(ValueError, match="must be a Python name"):
        as_code("rnn", fake)


# ---------------------------------------------------------------------------- metrics as CSV
def test_metrics_csv_has_a_row_per_step():
    state = LessonState(hidden_size=8)
    state.train(steps=4)
    rows = list(csv.reader(io.StringIO(metrics_csv(state.history))))
    assert rows[0] == ["step", "loss"]
    assert [int(r[0]) for r in rows[1:]] == [1, 2, 3, 4]
    assert [float(r[1]) for r in rows[1:]] == state.history["loss"]  # exact (repr)


def test_metrics_csv_keeps_extra_columns_and_leaves_nan_empty():
    history = {"step": [1, 2], "loss": [np.float32(0.5), 0.25], "accuracy": [0.5, float("nan")]}
    assert metrics_csv(history) == "step,loss,accuracy\n1,0.5,0.5\n2,0.25,\n"


@pytest.mark.parametrize(
    ("history", "match"),
    [
        ({"loss": [1.0]}, "must map 'step' and 'loss'"),
        ({"step": [1, 2], "loss": [1.0]}, "same length, got step 2, loss 1"),
        ({"step": [1], "loss": ["=cmd()"]}, "loss values must be numbers, got '=cmd\\(\\)'"),
        ({"step": [1], "loss": [1.0], "=x": [1.0]}, "column names must be plain words"),
    ],
)
def test_metrics_csv_refuses_bad_histories(history: dict[str, Any], match: str):
    with pytest.raises(ValueError, match=match):
        metrics_csv(history)


# ---------------------------------------------------------------------------- checkpoints
@pytest.mark.slow
def test_a_page_checkpoint_loads_natively_and_training_continues(tmp_path: Path):
    state = LessonState(hidden_size=16)
    state.train(steps=100)
    before = state.history["loss"][-20:]
    path = tmp_path / "pyplay-model.npz"
    path.write_bytes(state.save_bytes().read())

    ckpt = pyplay.io.load(path)  # one call reads everything the page saved
    model = SequenceModel.from_config(ckpt.meta["model"])
    model.load_params(ckpt.params)
    settings = ckpt.meta["settings"]
    task = make_task(ckpt.meta["task"], **ckpt.meta["task_config"], rng=1)
    trainer = Trainer(
        model, task, optimizer=settings["optimizer"], lr=settings["lr"],
        batch_size=settings["batch_size"], clip=settings["clip"] or None,
    )  # fmt: skip
    assert ckpt.optimizer_state is not None
    trainer.optimizer.load_state_dict(ckpt.optimizer_state)
    trainer.step_count = ckpt.meta["step"]

    x = state.inspection_batch().inputs
    np.testing.assert_array_equal(
        model.forward(x, training=False)[0], state.model.forward(x, training=False)[0]
    )
    moments = state.trainer.optimizer.state_dict()
    for key, value in trainer.optimizer.state_dict().items():
        np.testing.assert_array_equal(value, moments[key])
    records = list(trainer.run(200))
    assert [r.step for r in records] == list(range(101, 301))  # the step count continues
    assert all(r.status == "ok" for r in records)
    after = [r.loss for r in records[-20:]]
    assert np.mean(after) < 0.7 * np.mean(before)
