"""The textbook notation of an LDDN (equations, diagram), the test signals and reference
systems, and the CSV reader of the time-series lesson."""

from __future__ import annotations

import numpy as np
import pytest

from pyplay.dynamic import LDDN, closeloop, narxnet, timedelaynet
from pyplay.tasks.signals import SYSTEMS, random_levels, signal
from pyplay.tasks.sysid import narendra_series, parse_columns
from pyplay.ui.lddn_notation import delay_text, diagram, equations, sup


def test_equations_of_a_narx_network_in_both_loop_forms() -> None:
    op = narxnet((1, 2), (1, 2), (3,), rng=0)
    assert equations(op.spec) == [
        "n¹(t) = IW¹˒¹(1) p¹(t−1) + IW¹˒¹(2) p¹(t−2) + IW¹˒²(1) p²(t−1) + IW¹˒²(2) p²(t−2) + b¹",
        "a¹(t) = tansig(n¹(t))",
        "n²(t) = LW²˒¹(0) a¹(t) + b²",
        "a²(t) = purelin(n²(t))",
    ]
    b2 = float(op.params["b2"][0])
    assert equations(op)[2] == f"n²(t) = LW²˒¹(0) a¹(t) {'+' if b2 > 0 else '−'} {abs(b2):.4g}"
    closed = equations(closeloop(op).spec)
    assert closed[0].endswith("LW¹˒²(1) a²(t−1) + LW¹˒²(2) a²(t−2) + b¹")


def test_scalar_weights_are_written_as_numbers() -> None:
    desc = {
        "inputs": [1],
        "layers": [{"size": 1, "transfer": "purelin", "bias": False}],
        "input_weights": [{"to": 1, "from": 1, "delays": [0]}],
        "layer_weights": [{"to": 1, "from": 1, "delays": [1]}],
    }
    net = LDDN(desc, params={"IW1,1": np.full((1, 1, 1), 1.0), "LW1,1": np.full((1, 1, 1), -0.5)})
    assert equations(net) == ["n¹(t) = 1 p¹(t) − 0.5 a¹(t−1)", "a¹(t) = purelin(n¹(t))"]
    assert equations(desc)[0] == "n¹(t) = IW¹˒¹(0) p¹(t) + LW¹˒¹(1) a¹(t−1)"


def test_outputs_line_when_not_just_the_last_layer() -> None:
    desc = {
        "inputs": [1],
        "layers": [{"size": 2}, {"size": 1}],
        "input_weights": [{"to": 1, "from": 1, "delays": [0]}],
        "layer_weights": [{"to": 2, "from": 1, "delays": [0]}],
        "outputs": [1, 2],
    }
    assert equations(desc)[-1] == "outputs: a¹(t), a²(t)"


def test_diagram_columns_rows_and_feedback() -> None:
    d = diagram(closeloop(narxnet((1, 2), (1,), (3,), rng=0)))
    assert [(n.key, n.column, n.row) for n in d.nodes] == [("p1", 0, 0), ("a1", 1, 0), ("a2", 2, 0)]
    feedback = {(e.source, e.target): e.feedback for e in d.edges}
    assert feedback == {("p1", "a1"): False, ("a1", "a2"): False, ("a2", "a1"): True}
    assert [e.delays for e in d.edges] == ["TDL 1,2", "", "D"]
    assert d.columns == 3 and d.rows == 1
    assert diagram(timedelaynet((0, 1), (2,), rng=0)).edges[0].name == "IW¹˒¹"


def test_helpers() -> None:
    assert sup("1,2") == "¹˒²" and sup(10) == "¹⁰"
    assert delay_text((0,)) == "" and delay_text((1,)) == "D" and delay_text((0, 2)) == "TDL 0,2"


def test_equations_refuse_a_bad_description() -> None:
    with pytest.raises(ValueError, match="layers"):
        equations({"inputs": [1], "layers": []})


def test_signals() -> None:
    np.testing.assert_array_equal(signal("impulse", 4), [1, 0, 0, 0])
    np.testing.assert_array_equal(signal("step", 3), [1, 1, 1])
    np.testing.assert_allclose(signal("sine", 4, period=4), [0, 1, 0, -1], atol=1e-15)
    np.testing.assert_array_equal(signal("typed", typed="1, 2\n-3"), [1, 2, -3])
    with pytest.raises(ValueError, match="signal must be one of"):
        signal("noise")
    with pytest.raises(ValueError, match="at least one number"):
        signal("typed", typed="  ")
    with pytest.raises(ValueError, match="line 1: 'x' is not a number"):
        signal("typed", typed="1, x")
    with pytest.raises(ValueError, match="T must be"):
        signal("step", 0)


def test_reference_systems() -> None:
    p = np.array([[1.0, 0, 0, 0]])
    np.testing.assert_allclose(SYSTEMS["moving average"](p), [[1 / 3, 1 / 3, 1 / 3, 0]])
    np.testing.assert_allclose(SYSTEMS["first order"](p), [[0.5, 0.25, 0.125, 0.0625]])
    u, y = narendra_series(n=50, seed=3)
    np.testing.assert_allclose(SYSTEMS["narendra"](u[None])[0], y, rtol=0, atol=1e-15)


def test_random_levels_are_held_and_seeded() -> None:
    a = random_levels(4, 200, rng=1)
    assert a.shape == (4, 200) and np.all(np.abs(a) <= 1)
    np.testing.assert_array_equal(a, random_levels(4, 200, rng=1))
    changes = np.mean(np.diff(a, axis=1) != 0)
    assert 0.1 < changes < 0.3  # a new level about one step in five


def test_parse_columns() -> None:
    rows = "\n".join(f"{k},{2 * k}" for k in range(25))
    u, y = parse_columns("u,y\n" + rows)
    assert u is not None and u.shape == (25,)
    np.testing.assert_array_equal(y, 2 * u)
    u, y = parse_columns("\n".join(str(k) for k in range(30)))
    assert u is None and y.size == 30
    with pytest.raises(ValueError, match="at least 20 rows, got 2"):
        parse_columns("1\n2")
    with pytest.raises(ValueError, match="line 3 must hold 2 value"):
        parse_columns("1,2\n3,4\n5\n")
    with pytest.raises(ValueError, match=r"line 2: .* not a number"):
        parse_columns("1\nabc\n")
    with pytest.raises(ValueError, match="line 1 must hold 1 or 2"):
        parse_columns("1,2,3\n")
    with pytest.raises(ValueError, match="finite"):
        parse_columns("1\nnan\n")
    with pytest.raises(TypeError, match="text must be a str"):
        parse_columns(b"1")  # type: ignore[arg-type]
