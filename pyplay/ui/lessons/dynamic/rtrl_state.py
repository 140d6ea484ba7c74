r"""State of the "RTRL and BPTT" sub-tab of the dynamic networks lesson: the chapter's basic
recurrent network (eq. 6.3-6.4),

.. math::

    a^1(t) = \mathrm{tansig}(IW^{1,1} p(t) + LW^{1,1} a^1(t-1) + b^1), \qquad
    a^2(t) = LW^{2,1} a^1(t) + b^2,

with :math:`S` hidden neurons, imitating the first-order system
:math:`y(t) = y(t-1)/2 + p(t)/2` on one sequence of :math:`T` random levels. A step computes
the gradient of :math:`F = \tfrac12 \sum_t (a^2(t) - y(t))^2` twice, by BPTT and by RTRL
(:mod:`pyplay.dynamic.rtrl`), shows both and their largest difference, and moves the weights
by gradient descent on the RTRL one. The costs of the two algorithms, counted by
:func:`pyplay.dynamic.rtrl.cost_figures`, are tabulated against :math:`T` and :math:`S`.

The settings (``hidden_size`` :math:`S`, ``seq_len`` :math:`T`, ``lr``, ``seed``) are the
sub-lesson's address parameters (key ``"rtrl"``). No Panel here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import param

from pyplay.dynamic import LDDN, layrecnet
from pyplay.dynamic.rtrl import CostFigures, bptt_gradient, cost_figures, rtrl_gradient
from pyplay.tasks.signals import SYSTEMS, random_levels
from pyplay.ui.base_state import LessonBase, seed_param

__all__ = ["COST_S", "COST_T", "Comparison", "RTRLState", "cost_table"]

COST_T = np.arange(1, 201)  # the lengths T the cost plot spans
COST_S = np.arange(1, 65)  # the hidden sizes S it spans
PARAM_NAMES = {"IW1,1": "IW¹˒¹", "LW1,1": "LW¹˒¹", "b1": "b¹", "LW2,1": "LW²˒¹", "b2": "b²"}


def cost_table(T: Any, S: Any) -> dict[str, np.ndarray]:
    """Operations and memory of one gradient (one input, one output) for every pair of the
    broadcast ``T`` and ``S``: columns ``bptt_ops``, ``rtrl_ops``, ``bptt_memory``,
    ``rtrl_memory`` (each of the broadcast shape, int64)."""
    Tb, Sb = np.broadcast_arrays(np.asarray(T), np.asarray(S))
    figures: list[CostFigures] = [
        cost_figures(int(t), int(s)) for t, s in zip(Tb.flat, Sb.flat, strict=True)
    ]
    return {
        key: np.array([getattr(f, key) for f in figures], dtype=np.int64).reshape(Tb.shape)
        for key in ("bptt_ops", "rtrl_ops", "bptt_memory", "rtrl_memory")
    }


@dataclass(frozen=True)
class Comparison:
    """One step's gradients: ``bptt`` and ``rtrl`` (keyed like ``net.params``), the largest
    absolute difference over every weight, and the cost ``F`` before the step."""

    bptt: dict[str, np.ndarray]
    rtrl: dict[str, np.ndarray]
    max_difference: float
    F: float


class RTRLState(LessonBase):
    """The network, its sequence, and the latest comparison of the two gradients."""

    hidden_size = param.Integer(default=3, bounds=(1, 8), doc="S, neurons of layer 1")
    seq_len = param.Integer(default=12, bounds=(2, 60), doc="T, the length of the sequence")
    lr = param.Number(default=0.05, bounds=(0.001, 1.0), doc="gradient-descent step size")
    seed = seed_param()

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.reset()
        self.param.watch(lambda *_: self.reset(), ["hidden_size", "seq_len", "seed"])

    def reset(self) -> None:
        """A fresh network (weights from the seed) and its sequence; the gradients at once."""
        S, T = int(self.hidden_size), int(self.seq_len)
        self.net: LDDN = layrecnet((1,), (S,), rng=self.seed)
        levels = random_levels(1, T, rng=self.seed)  # (1, T)
        self.p = levels[..., None]  # (1, T, 1)
        self.y = SYSTEMS["first order"](levels)[..., None]  # (1, T, 1)
        self.history = {"step": [], "loss": []}
        self._step = 0
        self.running = False
        self.comparison = self.compare()
        self.version += 1
        self.status = self._status_text()

    def compare(self) -> Comparison:
        """Both gradients of the current weights, and F."""
        bptt = bptt_gradient(self.net, self.p, self.y)
        rtrl = rtrl_gradient(self.net, self.p, self.y)
        diff = max(float(np.max(np.abs(rtrl[k] - bptt[k]))) for k in bptt)
        F = 0.5 * float(np.sum((self.net.forward(self.p)[0] - self.y) ** 2))
        return Comparison(bptt, rtrl, diff, F)

    def costs(self) -> CostFigures:
        """The two algorithms' costs at the current T and S."""
        return cost_figures(int(self.seq_len), int(self.hidden_size))

    def train(self, steps: int | None = None, budget_s: float | None = None) -> list[int]:
        """``steps`` (default 1) steps of gradient descent on the RTRL gradient, comparing it
        with BPTT's before each; returns the steps done."""
        done = []
        for _ in range(1 if steps is None else int(steps)):
            c = self.compare()
            for name, g in c.rtrl.items():
                self.net.params[name][...] -= float(self.lr) * g
            self._step += 1
            self.history["step"].append(self._step)
            self.history["loss"].append(c.F)
            done.append(self._step)
        self.comparison = self.compare()
        self.status = self._status_text()
        return done

    def _status_text(self) -> str:
        c = self.comparison
        n = sum(v.size for v in self.net.params.values())
        where = f"Step {self._step}" if self._step else "Before the first step"
        return (
            f"{where}: F = ½ Σₜ (a²(t) − y(t))² = {c.F:.6f}; largest |RTRL − BPTT| over the "
            f"{n} weights = {c.max_difference:.1e}"
        )

    def gradients_text(self, shown: int = 4) -> str:
        """Each parameter's gradient by both algorithms, the first ``shown`` entries."""
        c = self.comparison
        rows = ["weight   algorithm  ∂F/∂w (first entries)"]
        for key, label in PARAM_NAMES.items():
            for name, g in (("BPTT", c.bptt[key]), ("RTRL", c.rtrl[key])):
                v = g.reshape(-1)
                more = " …" if v.size > shown else ""
                values = " ".join(f"{x:+.6f}" for x in v[:shown])
                rows.append(f"{label:<8} {name:<10} {values}{more}")
            diff = float(np.max(np.abs(c.rtrl[key] - c.bptt[key])))
            rows.append(f"{'':<8} {'|diff|':<10} {diff:.1e}")
        return "\n".join(rows)

    def costs_text(self) -> str:
        f = self.costs()
        return (
            f"One gradient at T = {f.T}, S = {f.S} (P = S + S² + S = {f.P} weights of layer 1):\n"
            f"  BPTT: {f.bptt_ops:,} multiply-adds, {f.bptt_memory:,} numbers stored (grows "
            "with T)\n"
            f"  RTRL: {f.rtrl_ops:,} multiply-adds, {f.rtrl_memory:,} numbers stored (the "
            "S × P sensitivity: independent of T)\n"
            f"  RTRL / BPTT operations: {f.rtrl_ops / f.bptt_ops:.1f}×"
        )
