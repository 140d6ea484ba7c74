"""Hard heads of the memory net (the lecture's hard addressing and hard updates): the gradient
through what was read and written against central differences (float64, the cells given), the
score-function estimator unbiased against the exact expectation over every draw (enumerated),
the draws following the head's weights, and the errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from gradcheck import assert_grad_close, numeric_grad
from pyplay.models.memory import MemoryNet
from pyplay.objectives import row_losses
from pyplay.tasks import AssociativeRecall


def _net(hard: str, **kw: object) -> MemoryNet:
    return MemoryNet(
        2, 3, hidden_size=3, memory_size=3, memory_width=2, hard=hard, input_kind="real",
        dtype=np.float64, rng=1, **kw,  # type: ignore[arg-type]
    )  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize(
    ("hard", "kw"),
    [
        ("read", {}),
        ("write", {"update": "residual"}),
        ("both", {"read_heads": 2, "write_heads": 2}),
        ("both", {"addressing": "location", "feedback": "output"}),
    ],
)
def test_the_gradient_through_the_given_cells_matches_central_differences(
    hard: str, kw: dict[str, object]
) -> None:
    model = _net(hard, **kw)
    rng = np.random.default_rng(3)
    B, T, N = 2, 4, model.memory_size
    x = rng.standard_normal((B, T, 2))
    R = rng.standard_normal((B, T, 3))
    ri = rng.integers(0, N, (B, T, model.read_heads))
    wi = rng.integers(0, N, (B, T, model.write_heads))

    def loss() -> float:
        return float((model.forward(x, read_index=ri, write_index=wi)[0] * R).sum())

    _, _, cache = model.forward(x, read_index=ri, write_index=wi)
    if hard in ("read", "both"):
        np.testing.assert_array_equal(cache.read_index, ri)
        k = np.arange(B)[:, None], ri[:, :, 0]
        np.testing.assert_allclose(
            cache.reads[:, :, :2], cache.memory[:, 1:][k[0], np.arange(T), k[1]]
        )
    grads = model.backward(R, cache, losses=np.zeros(B)).grads  # L - b = 0: no score term
    for name, value in model.params.items():
        assert_grad_close(grads[name], numeric_grad(loss, value), name)


def _enumerate(model: MemoryNet, x: np.ndarray, R: np.ndarray):
    """Every draw of every hard head over the steps: (probability, loss, cache, indices)."""
    T, N = x.shape[1], model.memory_size
    nr = model.read_heads if model.hard in ("read", "both") else 0
    nw = model.write_heads if model.hard in ("write", "both") else 0
    for cells in itertools.product(range(N), repeat=T * (nr + nw)):
        c = np.array(cells).reshape(1, T, nr + nw)
        ri = c[:, :, :nr] if nr else None
        wi = c[:, :, nr:] if nw else None
        y, _, cache = model.forward(x, read_index=ri, write_index=wi)
        prob = 1.0
        for t in range(T):
            for k in range(nr):
                prob *= cache.read_weights[0, t, k, c[0, t, k]]
            for e in range(nw):
                prob *= cache.write_weights[0, t, e, c[0, t, nr + e]]
        yield prob, float((y * R).sum()), cache


@pytest.mark.slow
@pytest.mark.parametrize("baseline", [0.0, 0.8])
@pytest.mark.parametrize(
    ("hard", "kw"),
    [("both", {}), ("read", {"addressing": "location", "update": "residual"})],
)
def test_the_estimators_expectation_is_the_exact_gradient(
    hard: str, kw: dict[str, object], baseline: float
) -> None:
    """sum over every draw of P(draws) g(draws), the estimator's expectation, equals the
    gradient of E[L] = sum P(draws) L(draws) (central differences), whatever the baseline."""
    model = MemoryNet(
        2, 2, hidden_size=2, memory_size=2, memory_width=2, hard=hard, input_kind="real",
        dtype=np.float64, rng=4, **kw,  # type: ignore[arg-type]
    )  # fmt: skip
    rng = np.random.default_rng(5)
    x, R = rng.standard_normal((1, 2, 2)), rng.standard_normal((1, 2, 2))
    expectation = {name: np.zeros_like(v) for name, v in model.params.items()}
    total = 0.0
    for prob, L, cache in _enumerate(model, x, R):
        total += prob
        g = model.backward(R, cache, losses=np.array([L]), baseline=baseline).grads
        for name in expectation:
            expectation[name] += prob * g[name]
    assert total == pytest.approx(1.0)

    def expected_loss() -> float:
        return sum(prob * L for prob, L, _ in _enumerate(model, x, R))

    for name, value in model.params.items():
        assert_grad_close(expectation[name], numeric_grad(expected_loss, value), name)


def test_draws_follow_the_heads_weights_and_evaluation_takes_the_likeliest() -> None:
    model = _net("both")
    x = np.repeat(np.random.default_rng(6).standard_normal((1, 1, 2)), 4000, axis=0)
    _, _, cache = model.forward(x)
    for index, weights in ((cache.read_index, cache.read_weights),
                           (cache.write_index, cache.write_weights)):  # fmt: skip
        w = weights[:, 0, 0]  # (rows, N) each row's own (reads: after its drawn write)
        p, spread = w.mean(axis=0), np.sqrt((w * (1 - w)).mean(axis=0) / len(x))
        freq = np.bincount(index[:, 0, 0], minlength=3) / len(x)
        assert np.all(np.abs(freq - p) <= 4 * spread + 1e-12), (freq, p)
    _, _, cache = model.forward(x[:2], training=False)
    np.testing.assert_array_equal(cache.read_index[:, 0, 0], cache.read_weights[:, 0, 0].argmax(1))


def test_row_losses_average_to_the_batch_loss() -> None:
    task = AssociativeRecall(n_pairs=3, n_keys=4, n_values=4, rng=0)
    batch = task.batch(5)
    model = MemoryNet.for_task(task, hidden_size=4, memory_size=3, memory_width=2, hard="read")
    out, _, _ = model.forward(batch.inputs)
    from pyplay.objectives import task_loss

    loss, _ = task_loss(task, out, batch)
    rows = row_losses(task, out, batch)
    assert rows.shape == (5,) and rows.mean() == pytest.approx(loss, rel=1e-6)


def test_bad_choices_and_missing_losses_are_refused_by_name() -> None:
    model = _net("read")
    x = np.zeros((2, 3, 2))
    with pytest.raises(ValueError, match=r"read_index must have shape \(2, 3, 1\)"):
        model.forward(x, read_index=np.full((2, 3, 1), 3))
    _, _, cache = model.forward(x)
    with pytest.raises(ValueError, match="losses"):
        model.backward(np.zeros((2, 3, 3)), cache)
    with pytest.raises(ValueError, match="losses must hold one loss per row"):
        model.backward(np.zeros((2, 3, 3)), cache, losses=np.zeros(3))
    with pytest.raises(ValueError, match="hard must be one of"):
        _net("sometimes")
    with pytest.raises(ValueError, match="feedback must be one of"):
        MemoryNet(2, 3, feedback="input")
