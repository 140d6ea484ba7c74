""" "Show as code" for the lessons trained by pyplay.dynamic.fit (time series, dynamic networks):
the scripts run and reproduce the lesson's own training, save a model the page and pyplay load,
and the learner's text stays data."""

from __future__ import annotations

import ast
import json
import math
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

pytest.importorskip("param")

import pyplay.io
from pyplay.dynamic import distdelaynet, to_dict
from pyplay.optim import SGD
from pyplay.ui.export import EMBED_LIMIT, as_code
from pyplay.ui.lessons.dynamic.state import LDDNLessonState
from pyplay.ui.lessons.timeseries.state import NARXState
from scripts import printed_losses, run_script

STEPS = 4
EVIL = "__import__('os').system('echo PWNED') '''\"\"\" {SEED} \\x00 #"


def two_columns(n: int = 300) -> str:
    rows = [f"{math.sin(0.2 * k):.6f},{math.sin(0.2 * k - 0.5) ** 3:.6f}" for k in range(n)]
    return "u,y\n" + "\n".join(rows)


def one_column(n: int = 200, header: str = "y") -> str:
    return header + "\n" + "\n".join(f"{math.cos(0.3 * k) + 0.1 * k % 3:.5f}" for k in range(n))


def narx_with(text: str, **settings: Any) -> NARXState:
    state = NARXState(**settings)
    assert state.set_user_series(text), state.message
    return state


def distributed() -> LDDNLessonState:
    """The learner pastes a distributed time-delay net over the tdnn preset: weights whose name
    and shape survive are kept, the others drawn from the seed."""
    state = LDDNLessonState(preset="tdnn", seed=1)
    text = json.dumps(to_dict(distdelaynet([[0, 1, 2], [0, 1]], (4,), rng=7).spec))
    assert state.apply_description(text), state.message
    return state


def palette() -> LDDNLessonState:
    state = LDDNLessonState(preset="elman", seed=4, system="narendra")
    assert state.add_layer(1, "purelin") and state.connect("LW", 3, 2, "0"), state.message
    assert state.connect("LW", 1, 3, "1, 2"), state.message
    return state


TIMESERIES: dict[str, Any] = {
    "narx-bundled": lambda: NARXState(),
    "narx-bundled-delays-1-3-hidden-4": lambda: NARXState(
        input_delays=1, feedback_delays=3, hidden_size=4, lr=0.05, seed=3
    ),
    "narx-pasted-two-columns": lambda: narx_with(two_columns(), hidden_size=6, seed=2),
    "nar-pasted-one-column": lambda: narx_with(one_column(), feedback_delays=4, lr=0.003),
}
DYNAMIC: dict[str, Any] = {
    "moving-average-on-first-order": lambda: LDDNLessonState(system="first order"),
    "impulse-response-step": lambda: LDDNLessonState(preset="impulse response", signal="step"),
    "elman-narendra": lambda: LDDNLessonState(preset="elman", seed=2, system="narendra", lr=0.05),
    "focused-tdnn-typed": lambda: LDDNLessonState(
        preset="tdnn", signal="typed", typed="3, 0, 0, -1.5\n2 1e-1"
    ),
    "distributed-edited": distributed,
    "palette-recurrent": palette,
}


def check_model_file(path: Path, state: Any) -> None:
    """The script's file: pyplay loads it, with the weights the lesson trained."""
    model = pyplay.io.load_model(path)
    assert model.config == state.net.config
    assert model.params.keys() == state.net.params.keys()
    for name, value in state.net.params.items():
        np.testing.assert_allclose(model.params[name], value, rtol=1e-9, atol=1e-12)
    ckpt = pyplay.io.load(path)
    assert ckpt.meta["step"] == STEPS and ckpt.optimizer_state
    assert ckpt.meta["history"]["loss"] == pytest.approx(state.history["loss"], abs=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("case", list(TIMESERIES))
def test_the_time_series_script_reproduces_the_lesson(case: str, tmp_path: Path):
    state = TIMESERIES[case]()
    code = as_code("timeseries", state, steps=STEPS, log_every=1)
    ast.parse(code)
    assert code.startswith('"""The "Time series" lesson of the pyplay playground')
    assert re.search(r"^STEPS = 4\nLOG_EVERY = 1\nSEED = \d+$", code, flags=re.M)
    out = run_script(code, tmp_path)
    state.train(steps=STEPS)
    assert len(state.history["loss"]) == STEPS
    assert printed_losses(out) == pytest.approx(state.history["loss"], abs=2e-6)
    held = re.search(r"one-step MSE (\S+) \(open loop\), free-run MSE (\S+) .* mean (\S+)$",
                     out, flags=re.M)  # fmt: skip
    assert held is not None, out
    p = state.predict()
    got = [float(x) for x in held.groups()]
    assert got == pytest.approx([p.mse_open, p.mse_closed, p.baseline], abs=2e-6)
    check_model_file(tmp_path / "pyplay-model.npz", state)


@pytest.mark.slow
@pytest.mark.parametrize("case", list(DYNAMIC))
def test_the_dynamic_network_script_reproduces_the_lesson(case: str, tmp_path: Path):
    state = DYNAMIC[case]()
    assert state.message_kind != "danger", state.message
    equations = state.equations()
    code = as_code("dynamic", state, steps=STEPS, log_every=1)
    tree = ast.parse(code)
    assert code.startswith('"""The "Dynamic networks" lesson of the pyplay playground')
    described = next(n.value for n in tree.body if isinstance(n, ast.Assign)
                     and getattr(n.targets[0], "id", "") == "DESCRIPTION")  # fmt: skip
    assert ast.literal_eval(described) == to_dict(state.net.spec)  # data, not code
    out = run_script(code, tmp_path)
    assert "\n    ".join(equations) in out  # the book's notation, as the page shows it
    state.train(steps=STEPS)
    assert len(state.history["loss"]) == STEPS
    assert printed_losses(out) == pytest.approx(state.history["loss"], abs=2e-6)
    run = state.run()
    assert run is not None and run.target is not None
    shown = re.search(r"^mean squared error on this input: (\S+)$", out, flags=re.M)
    assert shown is not None
    assert float(shown.group(1)) == pytest.approx(np.mean((run.out[:, 0] - run.target) ** 2),
                                                  abs=2e-6)  # fmt: skip
    check_model_file(tmp_path / "pyplay-model.npz", state)


def test_weights_are_written_only_when_the_seed_does_not_draw_them():
    elman = as_code("dynamic", LDDNLessonState(preset="elman"), steps=1, log_every=1)
    assert "WEIGHTS = {}" in elman
    average = as_code("dynamic", LDDNLessonState(), steps=1, log_every=1)
    assert "'IW1,1': [[[0.3333333333333333]], [[0.3333333333333333]]" in average


@pytest.mark.slow
def test_a_trained_network_is_written_with_its_weights_as_they_are_now(tmp_path: Path):
    state = LDDNLessonState(preset="tdnn", system="first order")
    state.train(steps=3)
    state.lr = 0.02  # the page starts a new optimiser from the trained weights
    code = as_code("dynamic", state, steps=STEPS, log_every=1)
    assert "after 3 steps in the page" in code
    out = run_script(code, tmp_path)
    state.train(steps=STEPS)
    assert printed_losses(out) == pytest.approx(state.history["loss"][3:], abs=2e-6)


@pytest.mark.slow
def test_a_trained_time_series_script_starts_from_the_seed(tmp_path: Path):
    state = NARXState(hidden_size=5)
    state.train(steps=3)
    out = run_script(as_code("timeseries", state, steps=STEPS, log_every=2), tmp_path)
    state.reset()  # what the script rebuilds: the network after Reset
    state.train(steps=STEPS)
    assert printed_losses(out) == pytest.approx(state.history["loss"][1::2], abs=2e-6)


@pytest.mark.slow
@pytest.mark.parametrize("lesson", ["timeseries", "dynamic"])
def test_a_model_saved_by_the_script_loads_into_the_page(lesson: str, tmp_path: Path):
    if lesson == "timeseries":
        source: Any = NARXState(input_delays=1, feedback_delays=3, hidden_size=4, seed=5)
        page: Any = NARXState()
    else:
        source, page = LDDNLessonState(preset="elman", system="narendra"), LDDNLessonState()
    run_script(as_code(lesson, source, steps=STEPS, log_every=1), tmp_path)
    assert page.load_bytes((tmp_path / "pyplay-model.npz").read_bytes()), page.message
    source.train(steps=STEPS)
    assert page._step == STEPS and page.history["loss"] == pytest.approx(source.history["loss"])
    for name, value in source.net.params.items():
        np.testing.assert_allclose(page.net.params[name], value, rtol=1e-9, atol=1e-12)
    if lesson == "timeseries":
        assert (page.hidden_size, page.input_delays, page.feedback_delays) == (4, 1, 3)
    else:
        assert page.preset == "elman" and page.system == "narendra"
    page.train(steps=2)
    assert page._step == STEPS + 2


@pytest.mark.slow
@pytest.mark.parametrize("lesson", ["timeseries", "dynamic"])
def test_the_script_can_continue_a_saved_model(lesson: str, tmp_path: Path):
    state: Any = NARXState(hidden_size=4) if lesson == "timeseries" else LDDNLessonState()
    state.train(steps=5)
    (tmp_path / "saved.npz").write_bytes(state.save_bytes().read())
    code = as_code(lesson, state, steps=2, log_every=1)
    out = run_script(code.replace("CHECKPOINT = None", 'CHECKPOINT = "saved.npz"'), tmp_path)
    assert re.findall(r"^step (\d+):", out, flags=re.M) == ["6", "7"]
    assert pyplay.io.load(tmp_path / "pyplay-model.npz").meta["step"] == 7


def no_system_call(code: str, text: str) -> None:
    tree = ast.parse(code)
    constants = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)]
    assert text in constants  # the learner's text, whole, as a string constant
    calls = {n.func.attr for n in ast.walk(tree) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Attribute)}  # fmt: skip
    assert "system" not in calls and "__import__" not in code.replace(repr(text), "")


@pytest.mark.slow
def test_pasted_text_that_looks_like_code_is_data(tmp_path: Path):
    text = one_column(header=EVIL)  # a header line: the page skips it
    state = narx_with(text)
    code = as_code("timeseries", state, steps=2, log_every=1)
    no_system_call(code, text)
    out = run_script(code, tmp_path)
    assert "PWNED" not in out
    state.train(steps=2)
    assert printed_losses(out) == pytest.approx(state.history["loss"], abs=2e-6)


@pytest.mark.slow
def test_typed_numbers_that_look_like_code_are_data_or_refused(tmp_path: Path):
    state = LDDNLessonState(signal="impulse", typed=EVIL)  # not the signal in use: kept as text
    code = as_code("dynamic", state, steps=1, log_every=1)
    no_system_call(code, EVIL)
    assert "PWNED" not in run_script(code, tmp_path)
    state.signal = "typed"  # the page reads a first line that is not numbers as a header
    with pytest.raises(ValueError, match=r"the typed input is not usable: .* at least one"):
        as_code("dynamic", state, steps=1, log_every=1)
    state.typed = "1, 2\n" + EVIL
    with pytest.raises(ValueError, match=r"the typed input is not usable: line 2: .* not a num"):
        as_code("dynamic", state, steps=1, log_every=1)


@pytest.mark.slow
def test_long_pasted_data_is_read_from_a_file_next_to_the_script(tmp_path: Path):
    text = two_columns(EMBED_LIMIT // 10)
    state = narx_with(text, hidden_size=3)
    code = as_code("timeseries", state, steps=2, log_every=1)
    assert len(code) < 10_000 and 'Path("my_series.csv")' in code
    (tmp_path / "my_series.csv").write_text(text, encoding="utf-8")
    out = run_script(code, tmp_path)
    state.train(steps=2)
    assert printed_losses(out) == pytest.approx(state.history["loss"], abs=2e-6)


def test_bad_requests_are_refused_clearly():
    with pytest.raises(ValueError, match=r"lesson must be one of .*timeseries"):
        as_code("narx", NARXState(), steps=1, log_every=1)
    for lesson in ("timeseries", "dynamic"):
        with pytest.raises(ValueError, match="no model yet"):
            as_code(lesson, SimpleNamespace(net=None), steps=1, log_every=1)
    state = LDDNLessonState()
    fake = SimpleNamespace(**{k: getattr(state, k) for k in state.param}, net=state.net)
    fake.lr = float("nan")
    with pytest.raises(ValueError, match="the learning rate must be a finite number"):
        as_code("dynamic", fake, steps=1, log_every=1)
    fake.lr, fake.seed = 0.01, "0; import os"
    with pytest.raises(ValueError, match="the seed must be a whole number"):
        as_code("dynamic", fake, steps=1, log_every=1)
    fake.seed, fake.system = 0, "rm -rf"
    with pytest.raises(ValueError, match="the system must be one of moving average"):
        as_code("dynamic", fake, steps=1, log_every=1)
    fake.system, fake._optimizer = "first order", SGD(state.net.params, lr=0.1)
    with pytest.raises(ValueError, match="the optimiser must be Adam, got SGD"):
        as_code("dynamic", fake, steps=1, log_every=1)
    assert state.apply_description(json.dumps({**json.loads(state.description), "inputs": [2]}))
    with pytest.raises(ValueError, match="one-input, one-output networks only"):
        as_code("dynamic", state, steps=1, log_every=1)
    narx = NARXState()
    narx.y = narx.y + 1.0  # a series the script could not rebuild
    with pytest.raises(ValueError, match="neither the bundled one nor the pasted text"):
        as_code("timeseries", narx, steps=1, log_every=1)
