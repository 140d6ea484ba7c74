r"""State of the "Adaptive filter" sub-tab of the dynamic networks lesson: the
adaptive filter of lecture 8 of an NLP course, a tapped delay line read by one linear neuron,

.. math::

    a(k) = \mathrm{purelin}(W p(k) + b) = \sum_{i=1}^{R} w_{1,i}\, y(k-i+1) + b,

whose weights adapt online by LMS (Widrow-Hoff), :math:`W(k+1) = W(k) + 2\alpha e(k) p^T(k)`,
while the signal streams (:func:`pyplay.dynamic.adaptive.lms_filter`), in the
noise-cancellation setting of Hagan's *NND2* ch. 10
(:func:`pyplay.dynamic.adaptive.noise_cancellation`): the filter reads the noise source
:math:`v` and learns to predict the noise :math:`m` that reached the measurement
:math:`t = s + m`, so its error :math:`e = t - a` is the restored signal.

A "step" is one sample. The settings (``lr`` = :math:`\alpha`, ``n_taps`` = :math:`R`,
``seed``) are the sub-lesson's address parameters (key ``"adaptive"``); a new setting restarts
the filter from :math:`W = 0`. Nothing to save as a file: the filter is its settings. No Panel
here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import param

from pyplay.dynamic.adaptive import LMSRecord, lms_filter, noise_cancellation, wiener_solution
from pyplay.ui.base_state import LessonBase, seed_param

__all__ = ["MAX_TAPS", "SAMPLES", "AdaptiveFilterState", "period_bound"]

SAMPLES = 3000  # the streamed signal's length K
SLICE = 4  # samples per slice of the page's Run loop (about 200 a second)
MAX_TAPS = 2  # the noise is one sinusoid: two taps hold any gain and phase of it
DIVERGED = 1e6  # a weight this large: LMS has diverged (x* is about 0.1)


class AdaptiveFilterState(LessonBase):
    """The filter's settings, the samples streamed so far and the Wiener solution."""

    lr = param.Number(
        default=0.1, bounds=(0.001, 1.5), doc="α, the LMS learning rate (stable below 1/λmax)"
    )
    n_taps = param.Integer(default=2, bounds=(1, MAX_TAPS), doc="R, the taps of the delay line")
    seed = seed_param()

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.records: list[LMSRecord] = []
        self._stream: Iterator[LMSRecord] = iter(())
        self.reset()
        self.param.watch(lambda *_: self.reset(), ["lr", "n_taps", "seed"])

    # ------------------------------------------------------------------ the setting
    def reset(self) -> None:
        """Restart the filter (W = 0) on the signal of the seed."""
        self.signal = noise_cancellation(SAMPLES, rng=self.seed)
        self.wiener, self.R, self.h = wiener_solution(self.signal.v, self.signal.t, self.n_taps)
        self.lambda_max = float(np.max(np.linalg.eigvalsh(self.R)))
        self.exact_bound = period_bound(self.signal.v, self.n_taps)
        self._stream = lms_filter(self.signal.v, self.signal.t, self.n_taps, float(self.lr))
        self.records = []
        self.running = False
        self.stopped = ""
        self.version += 1
        self.status = self._status_text()

    @property
    def bound(self) -> float:
        """:math:`1/\\lambda_{max}(R)`: the mean weights converge for :math:`0 < \\alpha <`
        this (:math:`R = \\langle p p^T \\rangle` of the noise source's delay line)."""
        return 1.0 / self.lambda_max

    def stable(self) -> bool:
        """Whether α is below the exact bound of this periodic signal (:func:`period_bound`)."""
        return 0.0 < float(self.lr) < self.exact_bound

    def bound_text(self) -> str:
        R = np.array2string(self.R, precision=3, suppress_small=True, separator=", ")
        side = "<" if self.stable() else "≥"
        verdict = "stable: the weights converge" if self.stable() else "unstable: LMS diverges"
        return (
            f"R = ⟨p pᵀ⟩ = {' '.join(R.split())}, λmax(R) = {self.lambda_max:.4f}\n"
            f"NND's bound (mean weights, independent p(k)): 0 < α < 1/λmax = {self.bound:.4f}\n"
            f"exact bound for this period-3 noise source: 0 < α < {self.exact_bound:.4f}\n"
            f"α = {float(self.lr):g} {side} {self.exact_bound:.4f}: {verdict}\n"
            f"Wiener solution x* = R⁻¹h = {_vector(self.wiener)}"
        )

    # ------------------------------------------------------------------ streaming
    def train(self, steps: int | None = None, budget_s: float | None = None) -> list[LMSRecord]:
        """Stream ``steps`` samples (a slice of :data:`SLICE` when None); stops at the end of
        the signal or when the weights diverge (``stopped`` says which)."""
        new: list[LMSRecord] = []
        for _ in range(SLICE if steps is None else int(steps)):
            record = next(self._stream, None)
            if record is None:
                self.stop_training(f"The signal ended after {SAMPLES} samples; Reset restarts.")
                break
            new.append(record)
            if not np.max(np.abs(record.w)) < DIVERGED:  # inf and nan fail too
                self.stop_training(
                    f"Diverged at sample {record.k}: α = {float(self.lr):g} is above this "
                    f"signal's bound {self.exact_bound:.4f}."
                )
                break
        self.records += new
        self.status = self._status_text()
        return new

    def _status_text(self) -> str:
        if not self.records:
            return "Before the first sample: W(1) = 0. Run, or Step one sample at a time."
        r = self.records[-1]
        gap = float(np.linalg.norm(r.w - self.wiener))
        return (
            f"Step {r.k}: sample k = {r.k}, a(k) = {r.a:+.4f}, e(k) = t(k) − a(k) = "
            f"{r.e:+.4f} (signal s(k) = {self.signal.s[r.k - 1]:+.4f}); W(k) = {_vector(r.w)}, "
            f"‖W(k) − x*‖ = {gap:.4f}"
        )

    def arrays(self) -> dict[str, np.ndarray]:
        """The samples streamed so far as columns: ``k``; ``w1``.. (the weights used at k);
        ``e``, ``s`` and the removed noise estimate ``a``, each (n,)."""
        return records_columns(self.records, self.signal.s, self.n_taps)

    def residual(self, last: int = 1000) -> float:
        """Mean of :math:`(e(k) - s(k))^2` over the last ``last`` samples: the noise left in
        the restored signal (the contaminating noise has :math:`E[m^2] = 0.0072`)."""
        cols = self.arrays()
        tail = slice(-last, None)
        return float(np.mean((cols["e"][tail] - cols["s"][tail]) ** 2))


def records_columns(records: list[LMSRecord], s: np.ndarray, n_taps: int) -> dict[str, Any]:
    """The plot columns of ``records`` (see :meth:`AdaptiveFilterState.arrays`)."""
    k = np.array([r.k for r in records], dtype=np.int64)  # (n,)
    W = np.array([r.w for r in records]).reshape(len(records), n_taps)  # (n, R)
    cols: dict[str, Any] = {"k": k}
    for i in range(MAX_TAPS):
        cols[f"w{i + 1}"] = W[:, i] if i < n_taps else np.full(len(records), np.nan)
    cols["e"] = np.array([r.e for r in records], dtype=np.float64)
    cols["s"] = s[k - 1] if len(records) else np.zeros(0)
    cols["a"] = np.array([r.a for r in records], dtype=np.float64)
    return cols


def period_bound(v: np.ndarray, n_taps: int, period: int = 3) -> float:
    r"""The largest α (to 0.0005) for which LMS on the periodic input ``v`` is stable: the
    weight error obeys :math:`\tilde W(k+1) = (I - 2\alpha p(k) p^T(k)) \tilde W(k)` plus the
    signal's push, so over one period it is multiplied by
    :math:`\Phi(\alpha) = \prod_k (I - 2\alpha p(k) p^T(k))`, and LMS is stable exactly
    while :math:`\rho(\Phi(\alpha)) < 1` (the first α on a fine grid where it is not)."""
    start = n_taps + period  # a full delay line, one period on
    P = np.stack([v[start - 1 - np.arange(n_taps) + j] for j in range(period)])  # (period, R)
    alphas = np.arange(1, 8001) * 0.0005  # (N,) up to 4
    eye = np.eye(n_taps)  # (R, R)
    phi = np.broadcast_to(eye, (alphas.size, n_taps, n_taps))  # (N, R, R)
    for p in P:
        phi = (eye - 2.0 * alphas[:, None, None] * np.outer(p, p)) @ phi  # (N, R, R)
    unstable = np.max(np.abs(np.linalg.eigvals(phi)), axis=1) >= 1.0  # (N,)
    return float(alphas[np.argmax(unstable)]) if unstable.any() else float(alphas[-1])


def _vector(v: np.ndarray) -> str:
    return "[" + " ".join(f"{x:+.4f}" for x in np.asarray(v).reshape(-1)) + "]"
