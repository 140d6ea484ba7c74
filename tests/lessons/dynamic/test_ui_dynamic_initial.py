"""The Dynamic networks lesson's initial output a(0) and its distributed time-delay network
preset, without a browser (Hagan, *Neural Network Design*: the delay's initial condition a(0),
after eq. 6.1; lecture 8's "Distributed Time Delay Network": tapped delay lines at the input of
every layer, not only the first)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("param")

from pyplay.ui.export import as_code
from pyplay.ui.lessons import SPECS
from pyplay.ui.lessons.dynamic.state import PRESETS, LDDNLessonState
from pyplay.ui.urlstate import parse_query, to_query
from scripts import printed_losses, run_script


def test_a0_starts_the_first_order_network_and_shows_in_its_response() -> None:
    """The impulse-response preset (lw = 0.5, iw = 1, lecture 8): with a(0) = -1 the impulse
    gives a(t) = 0.5^(t-1) - 0.5^t = 0.5^t; on the first-order preset any a(0) adds
    lw^t a(0) to the response from rest."""
    assert "a0" in SPECS["dynamic"].params
    s = LDDNLessonState(preset="impulse response", signal="impulse", steps=8)
    t = np.arange(1, 9)
    rest = s.run()
    assert rest is not None and rest.initial == (1,)
    np.testing.assert_array_equal(rest.out[:, 0], 0.5 ** (t - 1))
    s.a0 = -1.0
    run = s.run()
    assert run is not None
    np.testing.assert_array_equal(run.out[:, 0], 0.5**t)
    assert run.target is not None  # the reference starts at rest: a0 leaves it alone
    np.testing.assert_array_equal(run.target, rest.target)
    assert s.initial_text() == "Initial conditions: a¹(0) = -1; the reference starts at rest."
    s.param.update(preset="first order", signal="sine", a0=1.5)
    with_a0 = s.run()
    s.a0 = 0.0
    without = s.run()
    assert with_a0 is not None and without is not None
    np.testing.assert_allclose(with_a0.out[:, 0] - without.out[:, 0], 0.5**t * 1.5, atol=1e-15)


def test_a0_is_ignored_without_layer_delays_and_travels_in_the_address() -> None:
    s = LDDNLessonState(a0=2.0, signal="impulse", steps=4)  # the moving average: no feedback
    run = s.run()
    assert run is not None and run.initial == ()
    np.testing.assert_allclose(run.out[:, 0], [1 / 3, 1 / 3, 1 / 3, 0], rtol=0, atol=1e-15)
    assert "a(0) is not used" in s.initial_text()
    query = to_query("dynamic", s)
    assert "a0=2" in query and parse_query(query).settings["a0"] == 2.0


def test_the_distributed_time_delay_preset_has_a_tapped_delay_line_at_every_layer() -> None:
    """Lecture 8's distributed TDNN: delays at the input of layer 1 (IW¹˒¹) and of layer 2
    (LW²˒¹), drawn by the diagram as TDLs feeding forward; the focused TDNN has them at the
    first layer only."""
    assert PRESETS["Distributed time-delay network (distdelaynet)"] == "dtdnn"
    s = LDDNLessonState(preset="dtdnn", seed=3)
    spec = s.net.spec
    assert [(w.to, w.source, w.delays) for w in spec.input_weights] == [(1, 1, (0, 1, 2))]
    assert [(w.to, w.source, w.delays) for w in spec.layer_weights] == [(2, 1, (0, 1, 2))]
    assert not s.net.recurrent  # delays, but no feedback
    edges = {(e.source, e.target): e for e in s.diagram().edges}
    assert edges["p1", "a1"].delays == edges["a1", "a2"].delays == "TDL 0,1,2"
    assert not edges["a1", "a2"].feedback
    columns = {n.key: n.column for n in s.diagram().nodes}
    assert columns["a2"] == columns["a1"] + 1
    assert any("a¹(t−2)" in line and line.startswith("n²(t)") for line in s.equations())
    assert "a¹(0) = 0 (older values 0)" in s.initial_text()  # layer 1's TDL has a(0), a(-1)
    tdnn = LDDNLessonState(preset="tdnn").net.spec
    assert [w.delays for w in tdnn.layer_weights] == [(0,)]


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_distributed_time_delay_network_learns_first_order_better_than_the_focused(
    seed: int,
) -> None:
    """Trained 200 steps (Adam, the lesson's batches) to imitate y(t) = y(t-1)/2 + p(t)/2:
    measured mean loss over the last 10 steps 0.0008, 0.0008, 0.0005 (seeds 0, 1, 2) for the
    distributed network, whose taps reach four steps back through its two TDLs, against
    0.0027, 0.0026, 0.0023 for the focused one, which sees two."""
    losses = {}
    for preset in ("dtdnn", "tdnn"):
        s = LDDNLessonState(preset=preset, system="first order", seed=seed)
        s.train(steps=200)
        tail = s.history["loss"][-10:]
        losses[preset] = sum(tail) / len(tail)
    assert losses["dtdnn"] < 0.001, losses
    assert losses["dtdnn"] < 0.5 * losses["tdnn"], losses


@pytest.mark.slow
def test_the_script_runs_the_network_from_the_pages_a0(tmp_path: Path) -> None:
    s = LDDNLessonState(preset="dtdnn", a0=0.5, seed=2, signal="impulse", steps=5)
    code = as_code("dynamic", s, steps=3, log_every=1)
    assert "A0 = 0.5" in code and "net.forward(p[None, :, None], a0)" in code
    out = run_script(code, tmp_path)
    s.train(steps=3)
    assert printed_losses(out) == pytest.approx(s.history["loss"], abs=2e-6)
    run = s.run()
    assert run is not None
    printed = [float(a) for a in re.findall(r"^t = \d+: p \S+, a (\S+),", out, flags=re.M)]
    np.testing.assert_allclose(printed, run.out[:, 0], atol=1e-6)


@pytest.mark.slow
def test_the_view_shows_the_initial_conditions_and_redraws_on_a0() -> None:
    from pyplay.ui.lessons.dynamic.view import DynamicLesson

    lesson = DynamicLesson(LDDNLessonState(preset="first order", signal="impulse"))
    lesson.panel()
    before = list(lesson.run_source.data["a"])
    assert "a¹(0) = 0" in lesson.initial.object
    lesson.state.a0 = 1.0
    assert "a¹(0) = 1" in lesson.initial.object
    assert lesson.run_source.data["a"][0] == pytest.approx(before[0] + 0.5)
