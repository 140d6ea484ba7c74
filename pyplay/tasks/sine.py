"""Time-series prediction: sums of sines, and a nonlinear dynamic system (Narendra 1990)."""

from __future__ import annotations

import numpy as np

from pyplay._checks import check_float, check_int
from pyplay.tasks.base import Batch, Task

__all__ = ["NoisySystem", "SinePrediction"]


class _NoisySeries(Task):
    """Shared by the real-valued series tasks: ``seq_len`` steps, measurement ``noise``."""

    input_kind = "real"
    output_kind = "real"

    def __init__(
        self, seq_len: int = 40, noise: float = 0.0, rng: np.random.Generator | int | None = 0
    ) -> None:
        seq_len = check_int("seq_len", seq_len, min_value=2, max_value=10_000)
        noise = check_float("noise", noise, min_value=0.0, max_value=10.0)
        super().__init__(rng, seq_len=seq_len, noise=noise)
        self.seq_len, self.noise = seq_len, noise


class SinePrediction(_NoisySeries):
    """Predict the next value of a sum of two sines with random frequencies and phases.

    x_t = sin(w1 t + p1) + 0.5 sin(w2 t + p2) + noise, w in [0.1, 0.6] rad/step. Inputs x_t,
    targets x_{t+1}, every step counts. A network must infer frequency and phase from the
    history it has seen.

    Trivial baseline: predicting 0 (the mean) gives the signal's power, 1/2 + 1/8 + noise^2.
    """

    name = "sine"
    title = "Sine prediction"
    predicts_next_input = True
    input_size = 1
    output_size = 1

    def _batch(self, batch_size: int) -> Batch:
        B, T = batch_size, self.seq_len
        t = np.arange(T + 1)[None, :]  # (1, T+1)
        w = self.rng.uniform(0.1, 0.6, size=(B, 2, 1))  # (B, 2, 1)
        p = self.rng.uniform(0, 2 * np.pi, size=(B, 2, 1))  # (B, 2, 1)
        x = np.sin(w[:, 0] * t + p[:, 0]) + 0.5 * np.sin(w[:, 1] * t + p[:, 1])  # (B, T+1)
        if self.noise:
            x = x + self.noise * self.rng.standard_normal(x.shape)
        inputs = x[:, :-1, None]  # (B, T, 1)
        targets = x[:, 1:, None]  # (B, T, 1)
        return Batch(inputs, targets, np.ones((B, T), dtype=bool))

    def baseline_loss(self) -> float:
        return 0.5 + 0.125 + self.noise**2

    def describe(self) -> str:
        return (
            f"Sine prediction: {self.seq_len} samples of two superposed sine waves of random "
            "frequency and phase; predict the next sample at every step. Predicting 0 scores "
            f"{self.baseline_loss():.3f}."
        )


class NoisySystem(_NoisySeries):
    """Identify the plant y(t+1) = y(t) / (1 + y(t)^2) + u(t)^3 (Narendra & Parthasarathy 1990).

    The input u(t) is uniform in [-1, 1]; each step gives (u(t), y(t)) plus optional
    measurement noise on y, and the target is y(t+1). A model must learn the nonlinear map.

    Trivial baseline: predicting 0, i.e. the mean square of y, estimated once by simulation.
    """

    name = "system"
    title = "Noisy system"
    input_size = 2
    output_size = 1

    @staticmethod
    def simulate(u: np.ndarray) -> np.ndarray:
        """Outputs y (B, T+1) of the plant for inputs u (B, T), starting at y(0) = 0."""
        B, T = u.shape
        y = np.zeros((B, T + 1))
        for t in range(T):
            y[:, t + 1] = y[:, t] / (1 + y[:, t] ** 2) + u[:, t] ** 3
        return y

    def _batch(self, batch_size: int) -> Batch:
        B, T = batch_size, self.seq_len
        u = self.rng.uniform(-1, 1, size=(B, T))  # (B, T)
        y = self.simulate(u)  # (B, T+1)
        seen = (
            y[:, :-1] + self.noise * self.rng.standard_normal((B, T)) if self.noise else y[:, :-1]
        )
        inputs = np.stack([u, seen], axis=-1)  # (B, T, 2)
        return Batch(inputs, y[:, 1:, None], np.ones((B, T), dtype=bool))

    def baseline_loss(self) -> float:
        u = np.random.default_rng(12345).uniform(-1, 1, size=(2000, self.seq_len))
        return float(np.mean(self.simulate(u)[:, 1:] ** 2))

    def describe(self) -> str:
        return (
            "System identification: a nonlinear plant y(t+1) = y(t)/(1+y(t)^2) + u(t)^3 "
            "driven by a random input u; from (u(t), y(t)) predict y(t+1). Predicting 0 "
            f"scores {self.baseline_loss():.3f}."
        )
