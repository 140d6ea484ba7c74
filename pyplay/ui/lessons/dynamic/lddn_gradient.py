r"""State of the vanishing-gradient demonstration of the "Dynamic networks" lesson.

The first-order recurrent network of the book, one neuron without bias,

.. math::

    a(t) = f\bigl(lw \, a(t-1) + iw \, p(t)\bigr),

is run on an impulse or a step; backpropagation through time gives how much the last output
depends on each earlier one, :math:`\partial a(T) / \partial a(t)`, which for ``purelin`` is
exactly :math:`lw^{T-t}`: it shrinks geometrically when :math:`|lw| < 1` (vanishing) and grows
when :math:`|lw| > 1` (exploding). With ``tansig`` every step also multiplies by
:math:`1 - a(t)^2`, so a saturated neuron forgets faster still. No Panel here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import param

from pyplay.dynamic import LDDN

__all__ = ["GradientView", "VanishingGradientState"]


@dataclass(frozen=True)
class GradientView:
    """``t`` (T,) = 1..T; the response ``a`` (T,); ``grad`` (T,) = dA(T)/da(t) from BPTT;
    ``theory`` (T,) = lw^(T-t), the purelin value; ``ratio``: grad(t-1)/grad(t) averaged."""

    t: np.ndarray
    p: np.ndarray
    a: np.ndarray
    grad: np.ndarray
    theory: np.ndarray
    ratio: float


class VanishingGradientState(param.Parameterized):
    """lw, iw, the transfer function, the input and the length; :meth:`view` computes."""

    lw = param.Number(default=0.5, bounds=(-2.0, 2.0))
    iw = param.Number(default=1.0, bounds=(-5.0, 5.0))
    transfer = param.Selector(objects=["purelin", "tansig"], default="purelin")
    signal = param.Selector(objects=["impulse", "step"], default="impulse")
    steps = param.Integer(default=20, bounds=(2, 100))

    def network(self) -> LDDN:
        desc: dict[str, Any] = {
            "inputs": [1],
            "layers": [{"size": 1, "transfer": self.transfer, "bias": False}],
            "input_weights": [{"to": 1, "from": 1, "delays": [0]}],
            "layer_weights": [{"to": 1, "from": 1, "delays": [1]}],
        }
        params = {
            "IW1,1": np.full((1, 1, 1), float(self.iw)),
            "LW1,1": np.full((1, 1, 1), float(self.lw)),
        }
        return LDDN(desc, params=params)

    def equation(self) -> str:
        return f"a(t) = {self.transfer}({self.lw:g} a(t−1) + {self.iw:g} p(t))".replace("+ -", "− ")

    def view(self) -> GradientView:
        """Forward on the input, then BPTT from the last output alone (dL/da(T) = 1)."""
        T = int(self.steps)
        p = np.ones(T) if self.signal == "step" else (np.arange(T) == 0).astype(np.float64)
        net = self.network()
        out, cache = net.forward(p[None, :, None])  # (1, T, 1)
        dout = np.zeros_like(out)  # (1, T, 1)
        dout[0, -1, 0] = 1.0
        grads = net.backward_full(dout, cache)
        grad = grads.da[1][0, :, 0]  # (T,) total derivative dA(T)/da(t)
        t = np.arange(1, T + 1)  # (T,)
        theory = float(self.lw) ** (T - t).astype(np.float64)  # (T,)
        with np.errstate(divide="ignore", invalid="ignore"):
            steps = np.abs(grad[:-1] / grad[1:])  # (T-1,)
        steps = steps[np.isfinite(steps)]
        ratio = float(np.exp(np.mean(np.log(steps)))) if steps.size and np.all(steps > 0) else 0.0
        return GradientView(t, p, out[0, :, 0], grad, theory, ratio)
