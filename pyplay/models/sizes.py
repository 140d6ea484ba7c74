"""Parameter counts computed from a config, without building a model: the pieces of every
model class's ``estimate_parameters`` (:mod:`pyplay.models.contract`).

The estimates are upper bounds within a small factor of the true count; they read a config
that came from a file, so every number is checked before it is used.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["blocks", "config_int", "recurrent"]


def config_int(config: Mapping[str, Any], key: str, default: int) -> int:
    """``config[key]`` as a non-negative integer (``default`` when absent or None)."""
    value = config.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"config[{key!r}] must be a non-negative integer, got {value!r}"[:200])
    return value


def recurrent(cell: Any, size_in: int, hidden: int, layers: int, directions: int) -> int:
    """A recurrent stack of ``layers`` layers, ``directions`` directions each:
    gates x H x (inputs + H + 2 biases) per layer and direction."""
    gates = {"lstm": 4, "gru": 3}.get(cell, 1)
    per = gates * hidden * (max(size_in, directions * hidden) + hidden + 2)
    return directions * layers * per


def blocks(D: int, F: int, layers: int, attentions: int) -> int:
    """``layers`` transformer blocks of width D, feed-forward width F and ``attentions``
    attention layers each (1 in an encoder, 2 in a decoder), with their layer norms."""
    return layers * (attentions * (4 * D * D + 6 * D) + 2 * D * F + F + 3 * D)
