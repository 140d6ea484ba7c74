"""Issue 34, the command line: ``--save`` checked before training, the model reached so far
saved on Ctrl-C and SIGTERM (saying where, exiting non-zero), and every refused input one line
with no traceback.

Each test is named after the case of the issue it reproduces."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import numpy as np
import pytest

from paths import ROOT
from pyplay.__main__ import main
from pyplay.io import load, load_model
from pyplay.train import Trainer

SMALL = ["train", "--task", "adding", "--seq-len", "6", "--hidden-size", "4", "--log-every", "1"]


def _one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    assert "Traceback" not in text
    return lines[0]


def test_bidirectional_on_a_next_input_task_exits_non_zero_with_one_line(capsys):
    code = main(["train", "--task", "charlm", "--model", "gru", "--bidirectional", "--steps", "2"])
    out, err = capsys.readouterr()
    assert code == 2 and "step " not in out
    line = _one_line(err)
    assert line.startswith("error: bidirectional=True does not fit the task 'charlm'")
    assert "predicts the next input" in line


@pytest.mark.parametrize(
    ("where", "words"),
    [
        ("missing", "does not exist"),
        ("folder", "must name a file, got the folder"),
        ("empty", "must name a file (say model.npz), got an empty path"),
    ],
)
def test_save_path_is_checked_before_training_starts(where, words, tmp_path, capsys, monkeypatch):
    path = {"missing": str(tmp_path / "nope" / "m.npz"), "folder": str(tmp_path), "empty": ""}
    steps: list[int] = []
    real = Trainer.train_step

    def counting(self: Trainer, batch: object = None) -> object:
        steps.append(1)
        return real(self, batch)

    monkeypatch.setattr(Trainer, "train_step", counting)
    code = main([*SMALL, "--steps", "3", "--save", path[where]])
    err = capsys.readouterr().err
    assert code == 2 and not steps  # refused before the first step
    line = _one_line(err)
    assert line.startswith("error: --save") and words in line
    assert list(tmp_path.iterdir()) == []


def _main(argv: list[str]) -> int:
    """``main(argv)``; a KeyboardInterrupt that escapes it fails the test (instead of ending
    the whole pytest session, as pytest does on one)."""
    try:
        return main(argv)
    except KeyboardInterrupt:
        pytest.fail("KeyboardInterrupt escaped the command line")


@pytest.fixture
def terminal_sigint():
    """Ctrl-C as at a terminal: a suite started in the background (``cmd &`` in a script)
    inherits SIGINT ignored, and the command line leaves an ignored signal ignored."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def _sigint_as_at_a_terminal() -> None:
    """In the child, before it starts: SIGINT not ignored (see :func:`terminal_sigint`)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _interrupt_at(monkeypatch, call: int, how: str) -> dict[str, np.ndarray]:
    """Make the ``call``-th training step be interrupted: by a real SIGINT sent to this
    process during the step ("signal"), or by KeyboardInterrupt raised at its start ("raise").
    Returns, once interrupted, the parameters of the last whole step."""
    calls: list[int] = []
    kept: dict[str, np.ndarray] = {}
    real = Trainer.train_step

    def step(self: Trainer, batch: object = None) -> object:
        calls.append(1)
        if len(calls) == call:
            kept.update({k: v.copy() for k, v in self.model.params.items()})
            if how == "raise":
                raise KeyboardInterrupt
            os.kill(os.getpid(), signal.SIGINT)  # arrives while the step runs
        record = real(self, batch)
        if len(calls) == call:
            kept.update({k: v.copy() for k, v in self.model.params.items()})
        return record

    monkeypatch.setattr(Trainer, "train_step", step)
    return kept


@pytest.mark.parametrize(("how", "reached"), [("signal", 4), ("raise", 3)])
def test_ctrl_c_saves_the_model_reached_so_far_and_says_where(
    how, reached, tmp_path, capsys, monkeypatch, terminal_sigint
):
    """A Ctrl-C (SIGINT) stops after the step under way; a KeyboardInterrupt inside a step (a
    second Ctrl-C) stops at once: either way the model of the last whole step is saved."""
    path = tmp_path / "run.npz"
    kept = _interrupt_at(monkeypatch, 4, how)
    code = _main([*SMALL, "--steps", "50", "--save", str(path)])
    out, err = capsys.readouterr()
    assert code == 128 + signal.SIGINT
    assert f"step      {reached}/50" in out and f"step      {reached + 1}/50" not in out
    line = _one_line(err)
    assert (
        line == f"stopped by SIGINT at step {reached}: the model reached so far is saved to {path}"
    )
    model = load_model(path)
    assert load(path).meta["step"] == reached
    for name, value in kept.items():
        np.testing.assert_array_equal(model.params[name], value)


def test_ctrl_c_without_save_says_nothing_was_saved(tmp_path, capsys, monkeypatch, terminal_sigint):
    _interrupt_at(monkeypatch, 2, "signal")
    code = _main([*SMALL, "--steps", "50"])
    assert code == 128 + signal.SIGINT
    assert _one_line(capsys.readouterr().err) == (
        "stopped by SIGINT at step 2: nothing saved (no --save given)"
    )


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--task", "nope"], "argument --task: invalid choice: 'nope'"),
        (["--steps", "many"], "argument --steps: invalid int value: 'many'"),
        (["--model", "transformer"], "argument --model: invalid choice"),
    ],
)
def test_refused_arguments_are_one_line_and_exit_2(argv, words, capsys):
    with pytest.raises(SystemExit) as info:
        main(["train", *argv])
    assert info.value.code == 2
    line = _one_line(capsys.readouterr().err)
    assert line.startswith("error: ") and words in line


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signalled_process_saves_the_model_and_exits_non_zero(sig, tmp_path):
    path = tmp_path / "run.npz"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "pyplay", *SMALL, "--steps", "100000", "--save", str(path)]
    child = subprocess.Popen(
        argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=_sigint_as_at_a_terminal,
    )  # fmt: skip
    try:
        assert child.stdout is not None
        for line in child.stdout:  # a progress line every step: training has started
            if line.startswith("step "):
                break
        child.send_signal(sig)
        _, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        for pipe in (child.stdout, child.stderr):  # closed here, not by a later test's GC
            if pipe is not None:
                pipe.close()
    assert child.returncode == 128 + sig
    name = signal.Signals(sig).name
    line = _one_line(err)
    assert line.startswith(f"stopped by {name} at step ")
    assert line.endswith(f": the model reached so far is saved to {path}")
    step = int(line.split(" at step ")[1].split(":")[0])
    assert step >= 1 and load(path).meta["step"] == step
    assert load_model(path).rnn.hidden_size == 4
