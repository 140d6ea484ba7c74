r"""What the controller of a memory net reads, in the lecture's form (TEK5040, "RNN example with
external memory - how to use it"):

.. math::

    s^t = h(x^t, s^{t-1}, y^{t-1}, r^{t-1}), \qquad y^t = f(s^t, r^t)

With ``feedback="output"`` the controller of :class:`~pyplay.models.memory.MemoryNet` (and of
:class:`~pyplay.models.memory.AttendRNN`) also reads its previous output :math:`y^{t-1}` (the
raw outputs, logits for classes; :math:`y^0 = 0`), between :math:`x^t` and the read; with
``"none"`` (the default) it reads :math:`[x^t; r^{t-1}]` only. The output layer already reads
:math:`r^t`, the lecture's :math:`y^t = f(s^t, r^t)`. Feeding the output back makes it part of
the recurrence: step t + 1 sends :math:`\partial L/\partial y^t` back into the output layer, so
the output is computed step by step (:func:`output_step`) and its backward gathers that gradient
(:func:`feedback_backward`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["FEEDBACKS", "feedback_backward", "feedback_size", "output_step", "previous_output"]

FEEDBACKS = ("none", "output")  # output: the lecture's y^{t-1} reaches the controller


def feedback_size(feedback: str, output_size: int) -> int:
    """The controller's extra input columns: O with feedback, else 0."""
    return output_size if feedback == "output" else 0


def output_step(h: np.ndarray, r: np.ndarray, p: dict[str, np.ndarray]) -> np.ndarray:
    """:math:`y^t = W_o [h^t; r^t] + b_o` (B, O) for one step."""
    return np.concatenate([h, r], axis=1) @ p["head.weight"].T + p["head.bias"]  # (B, O)


def previous_output(state_y: Any, B: int, O: int, dtype: Any) -> np.ndarray:
    """:math:`y^{t-1}` a sequence starts from: the state's (checked, (B, O)) or zeros."""
    if state_y is None:
        return np.zeros((B, O), dtype=dtype)
    if state_y.shape != (B, O):
        raise ValueError(f"state.y must have shape {(B, O)} or be None, got {state_y.shape}")
    return state_y


def feedback_backward(
    g: dict[str, np.ndarray],
    p: dict[str, np.ndarray],
    dy_next: np.ndarray,
    h: np.ndarray,
    r: np.ndarray,
) -> np.ndarray:
    """The output layer backwards for :math:`\\partial L/\\partial y^t` (B, O) that came from
    step t + 1's input: adds to the head's gradients in ``g`` and returns the extra
    dL/d[h^t; r^t] (B, H + reads)."""
    hr = np.concatenate([h, r], axis=1)  # (B, H + reads)
    g["head.weight"] += dy_next.T @ hr  # (O, H + reads)
    g["head.bias"] += dy_next.sum(axis=0)
    return dy_next @ p["head.weight"]  # (B, H + reads)
