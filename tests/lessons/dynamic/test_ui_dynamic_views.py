"""The dynamic networks lesson's Adaptive filter, Stability and memory, and RTRL and BPTT
sub-tabs without a browser: each view computes what it says (LMS reaches the Wiener solution,
the eigenvalues drawn are those of the matrix shown, the response and gradient are its powers,
RTRL equals BPTT, the cost curves are the algorithms' counts), and their settings go through
the page address."""

from __future__ import annotations

import numpy as np
import pytest

from addresses import apply_query
from gradcheck import numeric_grad
from pyplay.ui.lessons.dynamic.adaptive_state import SAMPLES, AdaptiveFilterState
from pyplay.ui.lessons.dynamic.adaptive_view import AdaptiveFilterView
from pyplay.ui.lessons.dynamic.rtrl_state import COST_S, COST_T, RTRLState
from pyplay.ui.lessons.dynamic.rtrl_view import RTRLView
from pyplay.ui.lessons.dynamic.stability_state import IW, StabilityState, feedback_matrix
from pyplay.ui.lessons.dynamic.stability_view import StabilityView
from pyplay.ui.lessons.dynamic.view import PARTS, SUBTABS, DynamicLesson
from pyplay.ui.urlstate import to_query, url_fields

# the noise-cancellation setting's statistics, derived (see tests/dynamic/test_dynamic_adaptive.py)
R_EXACT = 0.72 * np.array([[1.0, np.cos(2 * np.pi / 3)], [np.cos(2 * np.pi / 3), 1.0]])
H_EXACT = 0.072 * np.cos(np.pi / 2 + 2 * np.pi * np.arange(2) / 3)
M_POWER = 0.12**2 / 2  # E[m^2], the noise the filter should cancel


# ---------------------------------------------------------------------------- adaptive filter
def test_adaptive_view_streams_lms_to_the_wiener_solution() -> None:
    view = AdaptiveFilterView(AdaptiveFilterState(lr=0.03, seed=0))
    s = view.state
    np.testing.assert_allclose(s.wiener, np.linalg.solve(R_EXACT, H_EXACT), atol=5e-3)
    np.testing.assert_allclose(s.bound, 1 / 1.08, atol=1e-3)  # NND's 1/lambda_max
    view.session.step()
    assert view.source.data["k"].tolist() == [1] and s.status.startswith("Step 1:")
    for _ in range(SAMPLES // 500 - 1):
        view._stream(s.train(steps=500))  # as the page's Run loop does, slice by slice
    view._stream(s.train(steps=499))
    data = view.source.data
    assert data["k"].tolist() == list(range(1, SAMPLES + 1)) and s.stopped == ""
    np.testing.assert_array_equal(np.asarray(data["w2"]), s.arrays()["w2"])  # drawn = computed
    W = np.stack([data["w1"], data["w2"]], axis=1)[-1000:]  # (1000, 2)
    gap = float(np.linalg.norm(W.mean(axis=0) - s.wiener))
    print(f"LMS alpha 0.03: mean of the last 1000 weights is {gap:.4f} from x*")
    assert gap < 0.02
    residual = s.residual()
    print(f"noise left in the restored signal: {residual:.2e} of {M_POWER:.2e}")
    assert residual < 0.15 * M_POWER
    assert [span.location for span in view.spans] == pytest.approx(s.wiener.tolist())
    assert s.train(steps=1) == []
    assert "ended after 3000 samples" in s.stopped


def test_adaptive_bounds_one_tap_and_divergence() -> None:
    s = AdaptiveFilterState(lr=0.65)
    assert 0.69 < s.exact_bound < 0.70 < s.bound  # the periodic input's exact bound is lower
    s.train(steps=SAMPLES)
    assert len(s.records) == SAMPLES and s.stopped == ""  # below it: stable
    s.lr = 0.75  # below NND's 1 / lambda_max, above the exact bound: diverges
    assert s.records == [] and "≥" in s.bound_text()
    s.train(steps=SAMPLES)
    assert s.stopped.startswith("Diverged at sample") and not s.running
    view = AdaptiveFilterView(AdaptiveFilterState(n_taps=1))
    assert [line.visible for line in view.weight_lines] == [True, False]
    assert np.isclose(view.state.bound, 1 / 0.72, atol=1e-3)  # R = E[v^2] = 0.72


# ---------------------------------------------------------------------------- stability
def test_stability_view_draws_the_eigenvalues_of_the_matrix_shown() -> None:
    view = StabilityView(StabilityState(radius=0.8, angle=40.0, steps=25))
    m = view.state.memory
    np.testing.assert_allclose(m.LW, feedback_matrix(0.8, 40.0))
    drawn = np.array(view.eigen_source.data["re"]) + 1j * np.array(view.eigen_source.data["im"])
    expected = np.linalg.eigvals(m.LW)
    np.testing.assert_allclose(np.sort_complex(drawn), np.sort_complex(expected), atol=1e-12)
    np.testing.assert_allclose(np.abs(drawn), 0.8, atol=1e-12)
    np.testing.assert_allclose(np.abs(np.angle(drawn)), np.deg2rad(40.0), atol=1e-12)
    # purelin: a(t) = LW^(t-1) IW and dF/da(t) = (LW^T)^(T-t) [1, 1]
    for t in (1, 7, 25):
        power = np.linalg.matrix_power(m.LW, t - 1)
        np.testing.assert_allclose(m.a[t - 1], power @ IW, atol=1e-12)
        back = np.linalg.matrix_power(m.LW.T, 25 - t)
        np.testing.assert_allclose(m.grad[t - 1], back @ np.ones(2), atol=1e-12)
    np.testing.assert_allclose(view.source.data["a1"], m.a[:, 0])
    assert "stable" in view.verdict.object and "unstable" not in view.verdict.object


def test_an_eigenvalue_outside_the_circle_explodes() -> None:
    view = StabilityView(StabilityState(steps=60))
    s = view.state
    s.radius = 0.5
    small = np.asarray(view.source.data["norm_a"])[-1]
    s.radius = 1.2
    big = np.asarray(view.source.data["norm_a"])[-1]
    grad = np.asarray(view.source.data["norm_g"])[0]
    print(f"||a(60)||: {small:.1e} at rho 0.5, {big:.1e} at rho 1.2; ||dF/da(1)|| {grad:.1e}")
    assert small < 1e-14 and big > 1e3 and grad > 1e3
    assert "outside the unit circle: unstable" in view.verdict.object
    s.transfer = "tansig"  # saturates instead
    assert np.max(np.abs(s.memory.a)) < 1.0 and "saturates" in view.verdict.object
    view.session.step()
    view.session.step()
    assert s.status.startswith("Step 2: t = 2") and view.spans[0].location == 2.0
    s.train(steps=100)
    assert s.cursor == 60 and not s.running  # Run stops at T


# ---------------------------------------------------------------------------- rtrl
@pytest.mark.parametrize(("S", "T"), [(1, 2), (3, 12), (6, 30)])
def test_rtrl_view_gradients_equal_bptt(S: int, T: int) -> None:
    view = RTRLView(RTRLState(hidden_size=S, seq_len=T, seed=S))
    c = view.state.comparison
    assert c.max_difference < 1e-10
    assert max(float(np.max(np.abs(g))) for g in c.bptt.values()) > 1e-3
    net, p, y = view.state.net, view.state.p, view.state.y

    def F() -> float:
        return 0.5 * float(np.sum((net.forward(p)[0] - y) ** 2))

    np.testing.assert_allclose(c.rtrl["LW1,1"], numeric_grad(F, net.params["LW1,1"]), atol=1e-7)
    assert "|diff|" in view.gradients.object and "LW¹˒¹" in view.gradients.object


@pytest.mark.slow
def test_rtrl_view_learns_with_its_gradient() -> None:
    view = RTRLView(RTRLState(seed=0))
    s = view.state
    first = s.comparison.F
    for _ in range(10):
        view._stream(s.train(steps=10))
    assert s.history["step"][-1] == 100 and s.status.startswith("Step 100:")
    print(f"F from {first:.4f} to {s.comparison.F:.2e} in 100 steps")
    assert s.comparison.F < 0.01 * first and s.comparison.max_difference < 1e-10


def test_rtrl_cost_curves_are_the_algorithms_counts() -> None:
    view = RTRLView(RTRLState(hidden_size=4, seq_len=20))

    def counts(T: np.ndarray, S: np.ndarray) -> dict[str, np.ndarray]:
        P = S + S * S + S  # layer-1 weights, one input
        return {
            "bptt_ops": T * (3 * S * S + 5 * S),  # forward S + S^2 + S, backward S + S^2 + ...
            "rtrl_ops": T * (S + S * S + S + S * S * P + 2 * S * P + S),
            "bptt_memory": 2 * T * S,
            "rtrl_memory": 2 * S * P + 2 * S,
        }

    by_t, by_s = view.t_source.data, view.s_source.data
    for key, value in counts(COST_T, np.full_like(COST_T, 4)).items():
        np.testing.assert_array_equal(by_t[key], value, err_msg=key)
    for key, value in counts(np.full_like(COST_S, 20), COST_S).items():
        np.testing.assert_array_equal(by_s[key], value, err_msg=key)
    assert len(set(by_t["rtrl_memory"].tolist())) == 1  # RTRL's memory does not grow with T
    ratio = by_s["rtrl_ops"] / by_s["bptt_ops"]
    assert np.all(np.diff(ratio) > 0) and ratio[-1] > 1000  # and its operations grow like S^2
    view.state.seq_len = 50
    assert view.t_span.location == 50.0 and view.s_source.data["bptt_memory"][0] == 100


# ---------------------------------------------------------------------------- in the lesson
@pytest.mark.slow
def test_the_sub_tabs_are_lessons_with_their_settings_in_the_address() -> None:
    lesson = DynamicLesson()
    lesson.panel()
    assert SUBTABS[-len(PARTS) :] == (
        "Textbook seq2seq", "Adaptive filter", "Stability and memory", "RTRL and BPTT",
        "LSTM and GRU (lecture 8)",
    )  # fmt: skip
    changes = {
        "adaptive": {"lr": 0.05, "n_taps": 1, "seed": 3},
        "stability": {"radius": 1.1, "angle": 90.0, "steps": 40, "transfer": "tansig"},
        "rtrl": {"hidden_size": 5, "seq_len": 20, "lr": 0.02, "seed": 4},
    }
    for key, update in changes.items():
        assert list(url_fields(key)) == list(update)
        view = lesson.show_part(key)
        assert lesson.shown_part() == key and view is lesson.parts[key]
        source = type(view.state)(**update)
        version = view.state.version
        assert apply_query(to_query(key, source), {key: view.state}) == (key, [])
        assert {k: getattr(view.state, k) for k in update} == update
        assert view.state.version > version
    assert lesson.parts["stability"].state.memory.rho == pytest.approx(1.1)
    _, messages = apply_query("?lesson=stability&radius=2", {"stability": StabilityState()})
    assert messages == ["Address: radius must be a number from 0 to 1.3, got '2'; ignored."]
