r"""A stack of feed-forward layers applied at every time step: what a recurrent stack often reads.

Wand's IDSIA lecture's typical setup: "a stack of feedforward layers (fully connected or
convolutional), after which one or several recurrent layers are placed", the output then "a
feedforward step on the output of the last recurrent layer". Here the fully connected kind,
:math:`K` layers of width :math:`S`, each with a tanh, applied to every step alone (no
connection across time):

.. math::

    a^0_t = x_t, \qquad a^k_t = \tanh\!\big(W^k a^{k-1}_t + b^k\big) \quad (k = 1 \ldots K),

so the recurrent stack reads :math:`a^K_t`. Backward, with :math:`\delta^k_t = \partial L /
\partial a^k_t`:

.. math::

    g^k_t = \delta^k_t \odot \big(1 - (a^k_t)^2\big), \quad
    \frac{\partial L}{\partial W^k} = \sum_{b, t} g^k_t \, (a^{k-1}_t)^\top, \quad
    \frac{\partial L}{\partial b^k} = \sum_{b, t} g^k_t, \quad
    \delta^{k-1}_t = (W^k)^\top g^k_t .

Parameter names are those of PyTorch's ``nn.Sequential(nn.Linear, nn.Tanh, nn.Linear, ...)``:
``"0.weight"``, ``"0.bias"``, ``"2.weight"``, ... (the tanh modules take the odd indices).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pyplay._checks import as_generator, check_int
from pyplay.nn.linear import Linear

__all__ = ["MAX_FEEDFORWARD_LAYERS", "FeedForwardStack", "reference_forward"]

MAX_FEEDFORWARD_LAYERS = 8


class FeedForwardStack:
    """``num_layers`` tanh layers of ``hidden_size`` units, step by step over (B, T, F) inputs.

    Parameters
    ----------
    input_size, hidden_size : int
        :math:`F` and :math:`S`.
    num_layers : int
        :math:`K \\ge 1`.
    dtype : numpy.float32 or numpy.float64
    rng : numpy.random.Generator or int seed

    Attributes
    ----------
    layers : list of Linear
    params : dict of str to ndarray
        ``"{2k}.weight"`` (S, F or S), ``"{2k}.bias"`` (S,): the layers' very arrays.
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        dtype: Any = np.float32,
        rng: np.random.Generator | int | None = 0,
    ) -> None:
        self.input_size = check_int("input_size", input_size, min_value=1)
        self.hidden_size = check_int("hidden_size", hidden_size, min_value=1)
        self.num_layers = check_int(
            "num_layers", num_layers, min_value=1, max_value=MAX_FEEDFORWARD_LAYERS
        )
        gen = as_generator(rng)
        sizes = [self.input_size] + [self.hidden_size] * self.num_layers
        self.layers = [
            Linear(sizes[k], sizes[k + 1], dtype=dtype, rng=gen) for k in range(self.num_layers)
        ]
        self.params: dict[str, np.ndarray] = {
            f"{2 * k}.{name}": value
            for k, layer in enumerate(self.layers)
            for name, value in layer.params.items()
        }

    def forward(self, x: Any) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
        """:math:`a^K` (B, T, S) from ``x`` (B, T, F), and the cache: per layer its Linear
        cache and its output :math:`a^k`."""
        a, cache = x, []
        for layer in self.layers:
            z, lin_cache = layer.forward(a)  # (B, T, S)
            a = np.tanh(z)  # (B, T, S)
            cache.append((lin_cache, a))
        return a, cache

    def backward(
        self, da: Any, cache: list[tuple[np.ndarray, np.ndarray]]
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """:math:`\\partial L / \\partial x` (B, T, F) and the parameters' gradients from
        :math:`\\delta^K` = ``da`` (B, T, S)."""
        grads: dict[str, np.ndarray] = {}
        delta = np.asarray(da)
        for k in range(self.num_layers - 1, -1, -1):
            lin_cache, a = cache[k]
            g = delta * (1.0 - a * a)  # (B, T, S)
            delta, layer_grads = self.layers[k].backward(g, lin_cache)  # (B, T, in)
            grads.update({f"{2 * k}.{name}": v for name, v in layer_grads.items()})
        return delta, grads

    @staticmethod
    def count(input_size: int, hidden_size: int, num_layers: int) -> int:
        """Parameters of such a stack (weights and biases)."""
        if num_layers < 1:
            return 0
        first = (input_size + 1) * hidden_size
        return first + (num_layers - 1) * (hidden_size + 1) * hidden_size


def reference_forward(x: np.ndarray, params: dict[str, np.ndarray], num_layers: int) -> np.ndarray:
    """The plain version: the equations above one layer at a time, for the tests."""
    a = x
    for k in range(num_layers):
        a = np.tanh(a @ params[f"{2 * k}.weight"].T + params[f"{2 * k}.bias"])
    return a
