"""The bridge from a bidirectional encoder to a one-directional decoder.

A bidirectional encoder ends each layer l with two states, the forward direction's at the last
source step and the backward direction's at the first, :math:`h^{\\rightarrow}_{l,S}` and
:math:`h^{\\leftarrow}_{l,1}`, while the decoder's layer l starts from one state of width H.
The bridge concatenates the two and maps them back to H (Bahdanau et al. 2015 initialise the
decoder from the backward state through a tanh layer; concatenation with a linear bridge is the
form most NMT toolkits use; summing the directions is the parameter-free alternative):

.. math::

    s_{l,0} = \\tanh(W_b [h^{\\rightarrow}_{l,S}; h^{\\leftarrow}_{l,1}] + b_b), \\qquad
    c_{l,0} = W_c [c^{\\rightarrow}_{l,S}; c^{\\leftarrow}_{l,1}] + b_c \\text{ (LSTM)}

with one :math:`W_b` (H, 2H) shared by all layers. Attention reads the encoder's outputs, both
directions side by side (B, S, 2H), through its own key width, so it needs no bridge.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay.nn import Linear

__all__ = ["Bridge", "BridgeCache"]


@dataclass(frozen=True)
class BridgeCache:
    """What :meth:`Bridge.backward` needs: the caches of both linear maps and tanh's output."""

    h: Any
    h0: np.ndarray  # (L, B, H) the bridged hidden state (tanh's output)
    c: Any  # None without a cell state


class Bridge:
    """Concatenate each layer's two directions and map them to the decoder's width (see the
    module docstring); ``layers()`` names its parts ``h`` and, for an LSTM, ``c``."""

    def __init__(self, hidden_size: int, cell_state: bool, dtype: Any, rng: Any) -> None:
        H = hidden_size
        self.hidden_size = H
        self.h = Linear(2 * H, H, dtype=dtype, rng=rng)
        self.c = Linear(2 * H, H, dtype=dtype, rng=rng) if cell_state else None

    def layers(self) -> list[tuple[str, Any]]:
        return [("h", self.h)] + ([("c", self.c)] if self.c is not None else [])

    def _join(self, state: np.ndarray) -> np.ndarray:
        """(2L, B, H), layer-major as torch stores it -> (L, B, 2H) [forward; backward]."""
        L2, B, H = state.shape
        return state.reshape(L2 // 2, 2, B, H).transpose(0, 2, 1, 3).reshape(L2 // 2, B, 2 * H)

    def _split(self, both: np.ndarray) -> np.ndarray:
        """The inverse of :meth:`_join`: (L, B, 2H) -> (2L, B, H)."""
        L, B, _ = both.shape
        H = self.hidden_size
        return both.reshape(L, B, 2, H).transpose(0, 2, 1, 3).reshape(2 * L, B, H)

    def forward(
        self, h_n: np.ndarray, c_n: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray | None, BridgeCache]:
        """The decoder's initial (h, c), (L, B, H) each, from the encoder's (2L, B, H)."""
        pre, h_cache = self.h.forward(self._join(h_n))  # (L, B, H)
        h0 = np.tanh(pre)
        c0 = c_cache = None
        if c_n is not None and self.c is not None:
            c0, c_cache = self.c.forward(self._join(c_n))  # (L, B, H)
        return h0, c0, BridgeCache(h_cache, h0, c_cache)

    def backward(
        self, dh0: np.ndarray, dc0: np.ndarray | None, cache: BridgeCache
    ) -> tuple[np.ndarray, np.ndarray | None, dict[str, np.ndarray]]:
        """d(loss)/d(encoder's h_n, c_n) (2L, B, H) and the bridge's gradients by name."""
        dboth, g = self.h.backward(dh0 * (1.0 - cache.h0 * cache.h0), cache.h)  # (L, B, 2H)
        grads = {f"h.{k}": v for k, v in g.items()}
        dh_n, dc_n = self._split(dboth), None  # (2L, B, H)
        if dc0 is not None and self.c is not None:
            dboth_c, g = self.c.backward(dc0, cache.c)  # (L, B, 2H)
            grads.update({f"c.{k}": v for k, v in g.items()})
            dc_n = self._split(dboth_c)
        return dh_n, dc_n, grads
