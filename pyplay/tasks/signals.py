r"""Test signals and reference systems for the dynamic-network lessons and examples.

Signals (:func:`signal`): the book's impulse :math:`p(1) = 1`, the unit step, a sine, or the
user's own numbers. Reference systems (:data:`SYSTEMS`) turn an input sequence into the target
a network should learn to reproduce:

``"moving average"``
    :math:`y(t) = \tfrac13 \bigl(p(t) + p(t-1) + p(t-2)\bigr)`, the three-tap filter of the
    book's first example (zero before :math:`t = 1`).
``"first order"``
    :math:`y(t) = \tfrac12 y(t-1) + \tfrac12 p(t)`, the first-order recurrent example.
``"narendra"``
    The Narendra-Parthasarathy plant :math:`y(t) = y(t-1) / (1 + y(t-1)^2) + p(t-1)^3`
    (:mod:`pyplay.tasks.sysid`).

:func:`random_levels` draws the amplitude-modulated pseudo-random input used to train on them.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from pyplay._checks import as_generator, check_choice, check_int
from pyplay.tasks.series import parse_numbers

__all__ = ["MAX_STEPS", "SIGNALS", "SYSTEMS", "random_levels", "signal"]

SIGNALS = ("impulse", "step", "sine", "typed")
MAX_STEPS = 500


def signal(kind: str, T: int = 20, typed: str = "", period: float = 12.0) -> np.ndarray:
    """An input sequence (T,), or the user's numbers for ``kind="typed"``.

    Parameters
    ----------
    kind : {"impulse", "step", "sine", "typed"}
    T : int
        Length (1 to :data:`MAX_STEPS`); ignored for typed numbers.
    typed : str
        Numbers separated by commas, spaces or new lines (at most :data:`MAX_STEPS`).
    period : float
        Of the sine, in steps.
    """
    kind = check_choice("signal", kind, SIGNALS)
    if kind == "typed":
        p = parse_numbers(typed)
        if p.size == 0:
            raise ValueError("typed input must hold at least one number, got none")
        if p.size > MAX_STEPS:
            raise ValueError(f"typed input must hold at most {MAX_STEPS} numbers, got {p.size}")
        if not np.all(np.isfinite(p)):
            raise ValueError("typed input must hold finite numbers, got inf or nan")
        return p
    T = check_int("T", T, min_value=1, max_value=MAX_STEPS)
    t = np.arange(T)  # (T,) t = 1..T shifted to 0..T-1
    if kind == "impulse":
        return (t == 0).astype(np.float64)
    if kind == "step":
        return np.ones(T)
    return np.sin(2 * np.pi * t / period)


def _moving_average(p: np.ndarray) -> np.ndarray:
    padded = np.concatenate([np.zeros((p.shape[0], 2)), p], axis=1)  # (B, N+2)
    return (padded[:, 2:] + padded[:, 1:-1] + padded[:, :-2]) / 3.0  # (B, N)


def _first_order(p: np.ndarray) -> np.ndarray:
    y = np.zeros_like(p)  # (B, N)
    prev = np.zeros(p.shape[0])  # (B,)
    for t in range(p.shape[1]):
        prev = 0.5 * prev + 0.5 * p[:, t]
        y[:, t] = prev
    return y


def _narendra(p: np.ndarray) -> np.ndarray:
    y = np.zeros_like(p)  # (B, N)
    for t in range(1, p.shape[1]):
        y[:, t] = y[:, t - 1] / (1.0 + y[:, t - 1] ** 2) + p[:, t - 1] ** 3
    return y


SYSTEMS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "moving average": _moving_average,
    "first order": _first_order,
    "narendra": _narendra,
}


def random_levels(
    batch_size: int, steps: int, rng: np.random.Generator | int | None = 0
) -> np.ndarray:
    """(batch_size, steps) pseudo-random levels uniform in [-1, 1]; a new level starts with
    probability 0.2 at every step (so each is held for 5 steps on average)."""
    B = check_int("batch_size", batch_size, min_value=1, max_value=4096)
    N = check_int("steps", steps, min_value=1, max_value=10_000)
    gen = as_generator(rng)
    switch = gen.random((B, N)) < 0.2  # (B, N) a new level here
    switch[:, 0] = True
    levels = gen.uniform(-1.0, 1.0, size=(B, N))  # (B, N)
    index = np.maximum.accumulate(np.where(switch, np.arange(N), 0), axis=1)  # (B, N)
    return np.take_along_axis(levels, index, axis=1)  # (B, N)
