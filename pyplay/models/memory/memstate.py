"""The recurrent state and the cache of :class:`~pyplay.models.memory.MemoryNet`, and their
checks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay.models.memory._common import ControllerState
from pyplay.models.memory.heads import LSTMStep
from pyplay.models.memory.location import HeadAddress

__all__ = ["MemoryCache", "MemoryState", "check_state", "first_cell"]


@dataclass(frozen=True)
class MemoryState(ControllerState):
    """The recurrent state after a step: controller (h, c) (B, H), reads r (B, RW), memory M
    (B, N, W) and every head's last weights ``w`` (B, H_w + R, N), write heads first (what
    location addressing moves on from; None: all on cell 0), and the last output ``y`` (B, O)
    (read back with ``feedback="output"``; None: zeros). Pass it back to ``forward`` to
    continue a sequence."""

    r: np.ndarray
    M: np.ndarray
    w: np.ndarray | None = None
    y: np.ndarray | None = None


@dataclass(frozen=True)
class MemoryCache:
    """What :meth:`MemoryNet.backward` needs, and what the lesson shows.

    ``read_weights`` (B, T, R, N), ``write_weights`` (B, T, H_w, N), ``memory`` (B, T+1, N, W)
    (``memory[:, t]`` is :math:`M_t`, index 0 the initial memory), ``hidden`` (B, T, H); with
    hard heads the cells they took, ``read_index`` (B, T, R) and ``write_index`` (B, T, H_w)
    (None for soft heads).
    """

    x: np.ndarray  # (B, T, F) inputs as the controller reads them
    steps: tuple[LSTMStep, ...]
    reads: np.ndarray  # (B, T, RW) r_t
    writes: tuple[tuple[tuple[np.ndarray, HeadAddress, np.ndarray], ...], ...]  # [t][e] M, a, v
    read_addr: tuple[tuple[HeadAddress, ...], ...]  # [t][r]
    memory: np.ndarray  # (B, T+1, N, W)
    hidden: np.ndarray  # (B, T, H)
    read_weights: np.ndarray  # (B, T, R, N)
    write_weights: np.ndarray  # (B, T, H_w, N)
    initial: bool  # the state started from the parameters (M_0 = memory.init)
    read_index: np.ndarray | None = None  # (B, T, R) hard reads' cells
    write_index: np.ndarray | None = None  # (B, T, H_w) hard writes' cells


def check_state(model: Any, state: Any, B: int) -> MemoryState:
    """``state`` checked against ``model`` and a batch of B rows."""
    if not isinstance(state, MemoryState):
        raise TypeError(f"state must be a MemoryState, got {type(state).__name__}")
    N, W, H = model.memory_size, model.memory_width, model.hidden_size
    state.check_shapes(B, H, r=(B, model.read_heads * W), M=(B, N, W))
    heads = (B, model.write_heads + model.read_heads, N)
    if state.w is not None and state.w.shape != heads:
        raise ValueError(f"state.w must have shape {heads} or be None, got {state.w.shape}")
    return state


def first_cell(model: Any, B: int) -> np.ndarray:
    """Every head's weights all on cell 0 (B, H_w + R, N): where location addressing starts."""
    w = np.zeros((B, model.write_heads + model.read_heads, model.memory_size), model.dtype)
    w[:, :, 0] = 1.0
    return w
