"""The recurrent attention model of the TEK5040 lecture's "Image classification with RNN and
location-based attention" (lecture 004; Mnih et al. 2014): the glimpse sensor's two paths
agree and pad with zeros; with the locations fixed, the backpropagated part (glimpse network,
core, classifier) and the baseline's squared error match central differences in float64; the
location network's REINFORCE gradient is (R - b^t) d log N(l^t; mu^t, sigma^2) / d mu^t
through the tanh, checked against finite differences of the log-probability, and the Gaussian
score-function estimator is unbiased; the lecture's loop (l^0 at the centre, tau glimpses,
the class at t = tau) and bad arguments named."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from gradcheck import assert_grad_close, max_rel_error, numeric_grad
from pyplay.models.ram import RecurrentAttention
from pyplay.models.ram_policy import draw, log_prob, log_prob_grad
from pyplay.models.ram_sensor import look, patch_sizes, pyramid, sense
from pyplay.tasks.cluttered import ClutteredGlyphs

SMALL = {
    "glimpse_size": 4,
    "scales": 2,
    "glimpses": 3,
    "rho_hidden": 5,
    "loc_hidden": 3,
    "glimpse_features": 4,
    "hidden_size": 5,
    "num_classes": 10,
}
BACKPROPAGATED = [
    "glimpse.fc_x.weight",
    "glimpse.fc_x.bias",
    "glimpse.fc_l.weight",
    "glimpse.fc_l.bias",
    "glimpse.fc_g.weight",
    "glimpse.fc_g.bias",
    "core.weight_ih",
    "core.weight_hh",
    "core.bias_ih",
    "core.bias_hh",
    "classifier.weight",
    "classifier.bias",
]
POLICY = ["location.weight", "location.bias", "baseline.weight", "baseline.bias"]


def _small(**kw: Any) -> RecurrentAttention:
    """A small float64 model whose location network is not at its zero start (so that its
    gradient into the core is not vacuous)."""
    model = RecurrentAttention(**{**SMALL, **kw}, dtype=np.float64, rng=1)  # type: ignore[arg-type]
    rng = np.random.default_rng(9)
    for name in ("location.weight", "location.bias"):
        model.params[name][...] = rng.uniform(-0.8, 0.8, model.params[name].shape)
    return model


def _fixed(B: int = 3, tau: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Images, fixed locations l^0..l^{tau-1} (some beyond the edge) and class targets."""
    batch = ClutteredGlyphs(16, 3, rng=seed).batch(B)
    rng = np.random.default_rng(seed)
    L = rng.uniform(-1.2, 1.2, (B, tau, 2))  # (B, tau, 2)
    return batch.inputs, L, batch.targets


# ------------------------------------------------------------------ the glimpse sensor
@pytest.mark.parametrize(("size", "scales", "factor"), [(4, 3, 2), (3, 2, 3), (5, 1, 2), (2, 3, 4)])
def test_tek5040_location_based_attention_both_sensor_paths_crop_the_same_glimpses(
    size: int, scales: int, factor: int
) -> None:
    rng = np.random.default_rng(0)
    x = rng.random((4, 2, 19, 23))  # (B, C, H, W)
    l = rng.uniform(-1.3, 1.3, (4, 2))
    plain = sense(x, l, size, scales, factor)
    assert plain.shape == (4, scales, 2, size, size)
    assert max_rel_error(look(pyramid(x, size, scales, factor), l), plain) < 1e-12


def test_tek5040_location_based_attention_a_glimpse_is_a_crop_and_its_coarser_copies() -> None:
    """The lecture's glimpse is a crop of the image, "usually [with] some lower resolution crops
    as well": at the centre of an 8 x 8 image the 4 x 4 crop is exact, the 8 x 8 one is the
    image averaged in 2 x 2 blocks; in a corner a quarter of each crop is the image, the rest
    zeros."""
    x = np.arange(64, dtype=np.float64).reshape(1, 1, 8, 8)
    rho = sense(x, np.zeros((1, 2)), 4, 2, 2)
    np.testing.assert_array_equal(rho[0, 0, 0], x[0, 0, 2:6, 2:6])
    np.testing.assert_array_equal(rho[0, 1, 0], x[0, 0].reshape(4, 2, 4, 2).mean(axis=(1, 3)))
    corner = sense(x, np.array([[-1.0, -1.0]]), 4, 2, 2)  # centre on pixel corner (0, 0)
    np.testing.assert_array_equal(corner[0, 0, 0, 2:, 2:], x[0, 0, :2, :2])
    assert not corner[0, 0, 0, :2].any() and not corner[0, 0, 0, :, :2].any()
    assert patch_sizes(4, 3, 2) == (4, 8, 16)


# ------------------------------------------------------------------ gradients
@pytest.mark.slow
def test_tek5040_location_based_attention_backprop_part_matches_central_differences() -> None:
    """Locations fixed: the gradient of sum(y * R) reaches the glimpse network, the core and
    the classifier by BPTT; without rewards the location network and baseline get zeros."""
    x, L, _ = _fixed()
    model = _small()
    R = np.random.default_rng(5).standard_normal((3, 10))
    _, cache = model.forward(x, locations=L)
    grads = model.backward(R, cache).grads
    worst = 0.0
    for name in BACKPROPAGATED:
        value = model.params[name]
        numeric = numeric_grad(lambda: float((model.forward(x, locations=L)[0] * R).sum()), value)
        assert_grad_close(grads[name], numeric, name, rtol=1e-6)
        worst = max(worst, max_rel_error(grads[name], numeric))
    assert worst < 1e-7, worst
    assert all(not grads[name].any() for name in POLICY)


def _surrogate(model: RecurrentAttention, x: np.ndarray, L: np.ndarray, A: np.ndarray,
               rewards: np.ndarray) -> float:  # fmt: skip
    """-(1/B) sum_t sum_b A_bt log pi(l^t | h^t) + (1/B) sum (b^t - R)^2 for fixed l and A."""
    _, c = model.forward(x, locations=L)
    B = x.shape[0]
    score = -(A / B * log_prob(c.l_raw[1:], c.mu, model.sigma)).sum()
    return float(score + ((c.baseline - rewards) ** 2).sum() / B)


@pytest.mark.parametrize("reinforce_core", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_tek5040_location_based_attention_reinforce_gradient_matches_the_log_probability(
    reinforce_core: bool,
) -> None:
    """The location network's gradient is -(1/B) sum (R - b^t) d log N(l^t; mu^t, sigma^2)/d
    theta, with d log N / d mu = (l - mu) / sigma^2 through mu = tanh(W_mu h + b_mu): against
    central differences of the log-probability of the fixed locations, the advantages held.
    The baseline's gradient is that of (1/B) sum (b^t - R)^2. With reinforce_core the policy's
    term also reaches the core and the glimpse network (Mnih et al.), the classifier's not."""
    x, L, _ = _fixed(seed=2)
    model = _small(reinforce_core=reinforce_core, sigma=0.3)
    rewards = np.array([1.0, 0.0, 1.0])
    y, cache = model.forward(x, locations=L)
    back = model.backward(np.zeros_like(y), cache, rewards=rewards)
    assert back.record is not None
    A = back.record["advantage"]  # (tau - 1, B)
    np.testing.assert_allclose(A, rewards - cache.baseline)
    expected_dmu = -(A / 3)[:, :, None] * (cache.l_raw[1:] - cache.mu) / 0.3**2
    np.testing.assert_allclose(back.record["dmu"], expected_dmu, rtol=1e-12)
    checked = POLICY + (BACKPROPAGATED[:10] if reinforce_core else [])
    for name in checked:
        value = model.params[name]
        if name.startswith("baseline"):
            numeric = numeric_grad(lambda: _surrogate(model, x, L, A, rewards), value)
        else:  # the policy term alone: its baseline held
            numeric = numeric_grad(lambda: _surrogate(model, x, L, A, rewards) -
                                   _surrogate(model, x, L, 0 * A, rewards), value)  # fmt: skip
        assert_grad_close(back.grads[name], numeric, name, rtol=1e-6)
    assert not back.grads["classifier.weight"].any()
    if not reinforce_core:
        assert all(not back.grads[name].any() for name in BACKPROPAGATED)


def test_tek5040_location_based_attention_gaussian_policy_score_is_its_log_density_slope() -> None:
    rng = np.random.default_rng(0)
    l, mu = rng.uniform(-1, 1, (4, 2)), rng.uniform(-1, 1, (4, 2))
    for sigma in (0.1, 0.5):
        numeric = numeric_grad(lambda s=sigma: float(log_prob(l, mu, s).sum()), mu)
        assert_grad_close(log_prob_grad(l, mu, sigma), numeric, "dlogN/dmu")
        # the density integrates to one: log N at its mean is -log(2 pi sigma^2)
        assert log_prob(mu, mu, sigma)[0] == pytest.approx(-np.log(2 * np.pi * sigma**2))


def test_tek5040_location_based_attention_the_gaussian_score_estimator_is_unbiased() -> None:
    """E_l[f(l) (l - mu)/sigma^2] = d E_l[f(l)] / d mu for l ~ N(mu, sigma^2 I), with a smooth
    'found it' reward f(l) = exp(-|l - a|^2 / (2 s^2)), whose expectation is known in closed
    form; 200,000 draws within 4 standard errors."""
    a, s, sigma = np.array([0.4, -0.3]), 0.25, 0.2
    mu = np.array([[0.1, 0.1]])

    def expected(m: np.ndarray) -> float:  # E f(l) = (s^2/(s^2+sigma^2)) exp(-|m-a|^2/...)
        v = s**2 + sigma**2
        return float(s**2 / v * np.exp(-((m - a) ** 2).sum() / (2 * v)))

    exact = numeric_grad(lambda: expected(mu), mu)[0]
    l = draw(np.repeat(mu, 200_000, axis=0), sigma, np.random.default_rng(3))
    f = np.exp(-((l - a) ** 2).sum(axis=1) / (2 * s**2))  # (N,)
    per_draw = f[:, None] * log_prob_grad(l, mu, sigma)  # (N, 2)
    mean, se = per_draw.mean(axis=0), per_draw.std(axis=0) / np.sqrt(len(l))
    assert np.all(np.abs(mean - exact) <= 4 * se), (mean, exact, se)


# ------------------------------------------------------------------ the lecture's loop
def test_tek5040_location_based_attention_the_first_glimpse_is_at_the_centre_then_mu() -> None:
    """l^0 = (0, 0); not training, l^t = mu^t for t < tau; tau glimpses, the class at tau."""
    x, _, _ = _fixed(B=4)
    model = _small(glimpses=4)
    y, cache = model.forward(x, training=False)
    assert y.shape == (4, 10) and cache.l.shape == (4, 4, 2) and cache.hs.shape == (5, 4, 5)
    np.testing.assert_array_equal(cache.l[0], 0.0)
    np.testing.assert_array_equal(cache.l_raw[1:], cache.mu)
    path = model.glimpse_path(x)
    assert path.locations.shape == (4, 4, 2) and path.sizes == (4, 8)
    np.testing.assert_allclose(path.centres[:, 0], 8.0)  # the centre of a 16 x 16 image
    np.testing.assert_array_equal(path.corners[:, 0, 0], 6)  # the 4 x 4 crop starts at 6
    np.testing.assert_array_equal(path.corners[:, 0, 1], 4)  # the 8 x 8 one at 4
    np.testing.assert_array_equal(path.predicted, y.argmax(axis=1))
    fresh = RecurrentAttention(**SMALL, rng=0)  # type: ignore[arg-type]
    _, c = fresh.forward(x, training=False)
    assert not c.l.any()  # an untrained policy looks at the centre: mu^t = 0


def test_tek5040_location_based_attention_training_draws_around_mu_and_random_ignores_it() -> None:
    x, _, _ = _fixed(B=1000)
    model = _small(glimpses=2, sigma=0.1)
    _, cache = model.forward(x, training=True)
    spread = (cache.l_raw[1] - cache.mu[0]).std(axis=0)
    np.testing.assert_allclose(spread, 0.1, rtol=0.1)
    rand = _small(glimpses=2, policy="random", start="random")
    for training in (True, False):
        _, c = rand.forward(x, training=training)
        assert np.abs(c.l_raw).max() <= 1 and c.l_raw.std() > 0.5  # U[-1, 1]^2 for l^0 and l^1
    back = rand.backward(np.zeros((1000, 10)), c, rewards=np.ones(1000))
    assert all(not back.grads[name].any() for name in POLICY)  # the policy is ignored
    one = _small(glimpses=1)
    y, c1 = one.forward(x[:3])
    assert c1.mu.shape == (0, 3, 2) and one.backward(np.ones_like(y), c1, rewards=np.ones(3))


def test_tek5040_location_based_attention_float32_model_keeps_its_dtype_and_config() -> None:
    model = RecurrentAttention(**SMALL, rng=0)  # type: ignore[arg-type]
    x, _, _ = _fixed()
    y, cache = model.forward(x)
    grads = model.backward(y, cache, rewards=np.ones(3)).grads
    assert y.dtype == np.float32 and all(g.dtype == np.float32 for g in grads.values())
    again = RecurrentAttention.from_config(model.config, rng=0)
    assert again.config == model.config
    for name in model.params:
        np.testing.assert_array_equal(again.params[name], model.params[name])
    assert model.num_parameters() <= RecurrentAttention.estimate_parameters(model.config)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"num_classes": 1}, ValueError, "num_classes must be >= 2, got 1"),
        ({"glimpses": 0}, ValueError, "glimpses must be >= 1, got 0"),
        ({"glimpse_size": 2.5}, TypeError, "glimpse_size must be an integer, got 2.5"),
        ({"factor": 1}, ValueError, "factor must be >= 2, got 1"),
        ({"glimpse_size": 64, "scales": 6}, ValueError, "largest patch.*at most 1024.*got 2048"),
        ({"sigma": 0.0}, ValueError, "sigma must be > 0.0, got 0.0"),
        ({"sigma": "wide"}, TypeError, "sigma must be a real number"),
        ({"policy": "greedy"}, ValueError, "policy must be one of 'learned', 'random'"),
        ({"start": "corner"}, ValueError, "start must be one of 'centre', 'random'"),
        ({"reinforce_core": 1}, TypeError, "reinforce_core must be True or False, got 1"),
        ({"dtype": np.int32}, TypeError, "dtype must be numpy.float32 or numpy.float64"),
        ({"rng": -1}, ValueError, "rng must be a non-negative integer seed, got -1"),
    ],
)
def test_tek5040_location_based_attention_bad_model_arguments_are_named(
    kwargs: dict, error: type, message: str
) -> None:
    with pytest.raises(error, match=message):
        RecurrentAttention(**kwargs)


def test_tek5040_location_based_attention_bad_inputs_are_named() -> None:
    model = _small()
    x, L, _ = _fixed()
    with pytest.raises(ValueError, match=r"images must be a 4-D array \(B, C, H, W\), got"):
        model.forward(x[:, 0])
    with pytest.raises(ValueError, match=r"channels=1.*got \(3, 2, 16, 16\)"):
        model.forward(np.zeros((3, 2, 16, 16)))
    with pytest.raises(ValueError, match="images must be finite"):
        model.forward(np.full((1, 1, 4, 4), np.nan))
    with pytest.raises(TypeError, match="images must be a numeric array"):
        model.forward("image")
    with pytest.raises(ValueError, match=r"locations must have shape \(B, glimpses, 2\) = "
                       r"\(3, 3, 2\), got \(3, 2, 2\)"):  # fmt: skip
        model.forward(x, locations=L[:, :2])
    y, cache = model.forward(x, locations=L)
    with pytest.raises(ValueError, match=r"dy must have shape \(B, num_classes\) = \(3, 10\)"):
        model.backward(y[:, :4], cache)
    with pytest.raises(ValueError, match=r"rewards must hold one reward per example \(B=3\)"):
        model.backward(y, cache, rewards=np.ones(2))
    with pytest.raises(ValueError, match="rewards must be finite"):
        model.backward(y, cache, rewards=np.array([1.0, np.inf, 0.0]))
