"""Soft and hard attention on one glimpse: the soft gradient against central differences, the
hard one's score-function estimator unbiased against the exact expectation (enumerated), its
variance lowered by the baseline, and both learning the marked-symbol task."""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck import assert_grad_close, numeric_grad
from pyplay.losses import cross_entropy
from pyplay.models.glimpse import GlimpseNet
from pyplay.models.glimpse_variance import score_gradient_variance
from pyplay.tasks.glimpse import MarkedSymbol
from pyplay.train import Trainer


def _loss(model: GlimpseNet, x: np.ndarray, y: np.ndarray, **kw: object) -> float:
    return float(cross_entropy(model.forward(x, **kw)[0], y)[0])  # type: ignore[arg-type]


def test_soft_attention_gradient_matches_central_differences() -> None:
    batch = MarkedSymbol(4, 5, rng=1).batch(3)
    model = GlimpseNet(5, 4, "soft", attn_size=3, hidden_size=4, dtype=np.float64, rng=2)
    out, cache = model.forward(batch.inputs)
    _, dy = cross_entropy(out, batch.targets)
    grads = model.backward(dy, cache).grads
    for name, value in model.params.items():
        numeric = numeric_grad(lambda: _loss(model, batch.inputs, batch.targets), value)
        assert_grad_close(grads[name], numeric, name)


def test_a_hard_glimpse_at_a_given_position_has_the_read_outs_gradient() -> None:
    batch = MarkedSymbol(4, 5, rng=3).batch(3)
    model = GlimpseNet(5, 4, "hard", attn_size=3, hidden_size=4, dtype=np.float64, rng=2)
    index = np.array([0, 4, 2])
    out, cache = model.forward(batch.inputs, index=index)
    np.testing.assert_array_equal(cache.r, batch.inputs[np.arange(3), index])
    _, dy = cross_entropy(out, batch.targets)
    grads = model.backward(dy, cache, losses=np.zeros(3)).grads  # L - b = 0: no score term
    for name in ("hidden.weight", "hidden.bias", "head.weight", "head.bias"):
        value = model.params[name]
        numeric = numeric_grad(
            lambda: _loss(model, batch.inputs, batch.targets, index=index), value
        )
        assert_grad_close(grads[name], numeric, name)
    assert all(not grads[n].any() for n in ("attn.weight", "attn.bias", "attn.v"))


def _one_example(n: int) -> tuple[GlimpseNet, np.ndarray, np.ndarray]:
    task = MarkedSymbol(3, 3, rng=5)
    b = task.batch(1)
    model = GlimpseNet(4, 3, "hard", attn_size=3, hidden_size=3, dtype=np.float64, rng=4)
    return model, np.repeat(b.inputs, n, axis=0), np.repeat(b.targets, n)


def _exact(model: GlimpseNet, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The losses L_j of looking at each position j and alpha, for one example."""
    T = x.shape[1]
    L = np.array([_loss(model, x[:1], y[:1], index=np.array([j])) for j in range(T)])
    return L, model.scores(x[:1])[2][0]


def test_the_score_function_estimator_is_unbiased() -> None:
    n = 40_000
    model, x, y = _one_example(n)
    L, alpha = _exact(model, x, y)
    expected = L @ alpha  # E_j[L_j]
    exact_de = alpha * (L - expected)  # d E[L] / d e_t = sum_j L_j alpha_j ([t=j] - alpha_t)
    out, cache = model.forward(x)  # n draws of the position
    losses, _ = cross_entropy(out, y, reduction="none")
    _, dy = cross_entropy(out, y)
    result = model.backward(dy, cache, losses=losses, baseline=0.5)
    per_row = result.record["de"] * n  # (n, T) one estimate per draw
    mean, se = per_row.mean(axis=0), per_row.std(axis=0) / np.sqrt(n)
    assert np.all(np.abs(mean - exact_de) <= 4 * se), (mean, exact_de, se)


@pytest.mark.parametrize("baseline", [0.0, 0.7])
def test_the_estimators_expectation_is_the_exact_gradient_of_every_parameter(
    baseline: float,
) -> None:
    """sum_j alpha_j g(j), the estimator's expectation enumerated over the positions j, equals
    the gradient of E_j[L_j] = sum_j alpha_j L_j (central differences), whatever the baseline."""
    model, x, y = _one_example(1)
    L, alpha = _exact(model, x, y)
    expectation = {name: np.zeros_like(v) for name, v in model.params.items()}
    for j in range(x.shape[1]):
        out, cache = model.forward(x, index=np.array([j]))
        _, dy = cross_entropy(out, y)
        g = model.backward(dy, cache, losses=L[j : j + 1], baseline=baseline).grads
        for name in expectation:
            expectation[name] += alpha[j] * g[name]

    def expected_loss() -> float:
        Lj, a = _exact(model, x, y)
        return float(Lj @ a)

    for name, value in model.params.items():
        assert_grad_close(expectation[name], numeric_grad(expected_loss, value), name)


def test_a_baseline_near_the_mean_loss_lowers_the_variance() -> None:
    model, x, y = _one_example(20_000)
    L, alpha = _exact(model, x, y)
    out, cache = model.forward(x)
    losses, _ = cross_entropy(out, y, reduction="none")
    _, dy = cross_entropy(out, y)
    spread = {}
    for b in (0.0, float(L @ alpha)):
        de = model.backward(dy, cache, losses=losses, baseline=b).record["de"] * len(x)
        spread[b] = float(de.var(axis=0).sum())
    without, with_mean = spread.values()
    assert with_mean < 0.5 * without, spread


def test_bad_inputs_are_refused_by_name() -> None:
    model = GlimpseNet(5, 4, "hard")
    x = np.zeros((2, 3, 5), dtype=np.float32)
    with pytest.raises(ValueError, match=r"inputs must have shape \(B, T >= 1, input_size=5\)"):
        model.forward(np.zeros((2, 3, 4), dtype=np.float32))
    with pytest.raises(ValueError, match=r"index must hold B=2 positions in 0\.\.2"):
        model.forward(x, index=np.array([0, 3]))
    out, cache = model.forward(x)
    with pytest.raises(ValueError, match="losses"):
        model.backward(np.zeros_like(out), cache)
    with pytest.raises(ValueError, match="attention must be one of"):
        GlimpseNet(5, 4, "glance")


@pytest.mark.slow
@pytest.mark.parametrize("attention", ["soft", "hard"])
def test_soft_and_hard_attention_both_learn_the_glimpse_task(attention: str) -> None:
    task = MarkedSymbol(8, 10, rng=0)
    model = GlimpseNet(task.input_size, task.num_classes, attention, rng=0)
    trainer = Trainer(model, task, lr=0.01, batch_size=32)
    for _ in trainer.run(400):
        pass
    result = trainer.evaluate(batch_size=1000)
    assert result["accuracy"] >= 0.95 and result["on_mark"] >= 0.95, result


def test_the_running_mean_baseline_lowers_the_measured_variance_on_a_fixed_batch() -> None:
    """score_gradient_variance, the lesson's measurement: on one fixed batch, the same draws,
    b = 0 against b near the batch's mean loss; the baseline's spread is far smaller, and
    the figures are those of the model's own backward pass (two runs, same draws, agree)."""
    task = MarkedSymbol(8, 10, rng=0)
    model = GlimpseNet(task.input_size, task.num_classes, "hard", rng=0)
    batch = MarkedSymbol(8, 10, rng=10_000).batch(32)
    x = batch.inputs.astype(np.float32)
    out, _ = model.forward(x, training=False)
    mean_loss = float(cross_entropy(out, batch.targets)[0])  # about ln 8 while untrained
    plain, with_b = score_gradient_variance(model, x, batch.targets, [0.0, mean_loss], 40, 1)
    assert with_b < 0.1 * plain, (plain, with_b)
    again = score_gradient_variance(model, x, batch.targets, [0.0, mean_loss], 40, 1)
    assert again == [plain, with_b]
    before = model.generator.bit_generator.state
    score_gradient_variance(model, x, batch.targets, [0.0], 4, 2)
    assert model.generator.bit_generator.state == before  # measuring never moves training


def test_the_variance_of_a_sure_model_is_zero_and_bad_requests_are_refused() -> None:
    task = MarkedSymbol(3, 4, rng=0)
    model = GlimpseNet(task.input_size, task.num_classes, "hard", rng=0)
    batch = task.batch(5)
    model.params["attn.v"][:] = 0  # equal scores: every position as likely
    assert score_gradient_variance(model, batch.inputs.astype(np.float32), batch.targets,
                                   [0.0], 8, 0)[0] > 0  # fmt: skip
    with pytest.raises(TypeError, match="attention='hard'"):
        score_gradient_variance(GlimpseNet(4, 3, "soft"), batch.inputs, batch.targets, [0.0])
    with pytest.raises(ValueError, match="repeats"):
        score_gradient_variance(model, batch.inputs, batch.targets, [0.0], repeats=1)
    with pytest.raises(ValueError, match="baselines"):
        score_gradient_variance(model, batch.inputs, batch.targets, [np.nan])
    with pytest.raises(ValueError, match=r"targets must have shape \(B,\)"):
        score_gradient_variance(model, batch.inputs, batch.targets[:2], [0.0])


def test_without_the_baseline_a_step_uses_b_zero() -> None:
    """use_baseline=False: the step's gradient is the backward pass's with b = 0 (the running
    mean is still kept); True: with the running mean."""
    for use in (True, False):
        task = MarkedSymbol(4, 5, rng=3)
        model = GlimpseNet(task.input_size, task.num_classes, "hard", rng=3)
        trainer = Trainer(model, task, lr=0.01, batch_size=8)
        trainer.objective.use_baseline = use
        for _ in trainer.run(3):
            pass
        objective = trainer.objective
        assert objective.baseline > 0  # kept either way
        batch = MarkedSymbol(4, 5, rng=9).batch(8)
        state = model.generator.bit_generator.state
        _, grads, _ = objective.step(batch)
        model.generator.bit_generator.state = state  # the same draws again
        out, cache = model.forward(batch.inputs)
        losses, _ = cross_entropy(out, batch.targets, reduction="none")
        _, dy = cross_entropy(out, batch.targets)
        b = objective.baseline if use else 0.0
        expected = model.backward(dy, cache, losses=losses, baseline=b).grads
        for name in grads:
            np.testing.assert_array_equal(grads[name], expected[name])
