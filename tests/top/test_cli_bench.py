"""The command line (`python -m pyplay train`) and the benchmark module's output."""

from __future__ import annotations

import numpy as np
import pytest

from pyplay.__main__ import main
from pyplay.bench import recurrent, report
from pyplay.io import load


def test_train_prints_progress_and_saves(tmp_path, capsys):
    path = tmp_path / "adding.npz"
    code = main(
        [
            "train",
            "--task",
            "adding",
            "--model",
            "lstm",
            "--steps",
            "20",
            "--log-every",
            "10",
            "--seq-len",
            "10",
            "--hidden-size",
            "8",
            "--save",
            str(path),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    progress = [line for line in out.splitlines() if line.startswith("step ")]
    assert len(progress) == 2 and "loss" in progress[0] and "steps/s" in progress[0]
    assert "evaluation on fresh data" in out
    ckpt = load(path)
    assert ckpt.meta["model"]["cell"] == "lstm" and ckpt.meta["step"] == 20
    assert "rnn.weight_ih_l0" in ckpt.params


def test_bad_argument_is_a_message_not_a_traceback(capsys):
    code = main(["train", "--task", "adding", "--hidden-size", "0", "--steps", "1"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("error: ") and "hidden_size" in err


@pytest.mark.slow
def test_bench_rows_have_ratio_and_memory():
    case = recurrent.Case("lstm", batch=2, steps=4, hidden=8, vocab=5)
    rows = report.run([case], repeats=2, rounds=1)
    (row,) = rows
    assert row["pyplay_ms"] > 0 and row["peak_kib"] > 0
    pytest.importorskip("torch")
    assert row["torch_ms"] > 0
    assert row["ratio"] == pytest.approx(row["pyplay_ms"] / row["torch_ms"])
    table = report.format_rows(rows)
    assert case.label in table


@pytest.mark.slow
def test_bench_step_trains_the_same_model_as_torch():
    """The pyplay and torch closures must train comparable models: both losses start near
    log(V) for a freshly initialised model and fall when the same batch is repeated."""
    pytest.importorskip("torch")
    case = recurrent.Case("gru", batch=4, steps=6, hidden=8, vocab=5)
    for make in (recurrent.pyplay_step, recurrent.torch_step):
        step = make(case)
        assert step is not None
        first = step()
        assert abs(first - np.log(case.vocab)) < 0.5
        for _ in range(30):
            last = step()
        assert last < first


def test_steps_are_timed_one_at_a_time_by_name():
    """web/measure.py interleaves single steps in the page and natively: prepare_steps makes
    the page's steps, time_once times one call of one of them and names the others when asked
    for a step that is not prepared."""
    names = report.prepare_steps(warmup=0).split()
    assert names == list(report.page_steps())
    ms = report.time_once("lstm_b1")
    assert 0 < ms < 60_000
    with pytest.raises(ValueError, match=r"name must be one of the prepared steps .*'gru'"):
        report.time_once("gru")


def test_transformer_lesson_step_trains_the_lesson():
    from pyplay.bench import transformer

    step = transformer.lesson_step(compare_lstm=False)
    losses = [step() for _ in range(3)]
    assert all(isinstance(v, float) and v == v for v in losses)
