"""Central-difference gradient checking in float64, shared by every test module.

Typical use: pick a random projection ``R`` of the output so that the scalar loss is
``L = sum(out * R)`` and ``dL/dout = R``; run the layer's backward with ``dout = R``; then compare
each analytic gradient with :func:`numeric_grad` of the same loss.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


def numeric_grad(loss: Callable[[], float], x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central differences of ``loss()`` with respect to every entry of ``x`` (perturbed in place).

    ``(L(x + eps) - L(x - eps)) / (2 eps)`` entry by entry; ``x`` is restored afterwards.
    """
    if x.dtype != np.float64:
        raise TypeError(f"gradient checks run in float64, got {x.dtype}")
    grad = np.zeros_like(x)
    flat = x.reshape(-1)  # a view: writes reach x
    g = grad.reshape(-1)
    for k in range(flat.size):
        old = flat[k]
        flat[k] = old + eps
        up = loss()
        flat[k] = old - eps
        down = loss()
        flat[k] = old
        g[k] = (up - down) / (2 * eps)
    return grad


def assert_grad_close(
    analytic: np.ndarray,
    numeric: np.ndarray,
    name: str,
    rtol: float = 1e-5,
    atol: float = 1e-8,
) -> None:
    """Assert two gradients agree: ``|a - n| <= atol + rtol * max|n|`` elementwise.

    Also refuses a vacuous check: a numeric gradient that is identically zero must be matched by
    an identically zero analytic one, and shapes must agree.
    """
    assert analytic.shape == numeric.shape, f"{name}: shape {analytic.shape} != {numeric.shape}"
    scale = max(float(np.max(np.abs(numeric))), 1e-12)
    err = float(np.max(np.abs(analytic - numeric))) if numeric.size else 0.0
    assert err <= atol + rtol * scale, (
        f"{name}: max abs error {err:.3e} exceeds {atol:.1e} + {rtol:.1e} * {scale:.3e}"
    )


def max_rel_error(a: np.ndarray, b: np.ndarray) -> float:
    """Largest ``|a - b| / max(|b|_max, tiny)``: bounded by 1e-6 in parity tests."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape, f"shape {a.shape} != {b.shape}"
    if a.size == 0:
        return 0.0
    return float(np.max(np.abs(a - b)) / max(float(np.max(np.abs(b))), 1e-300))


def assert_twin_matches(model: Any, twin: Any, x: np.ndarray, R: np.ndarray) -> None:
    """A pyplay ``model`` and its PyTorch ``twin`` (float64, the same ``state_dict`` names)
    agree to 1e-6 relative on ``x``: outputs, and every parameter's gradient of sum(y * R)."""
    import torch

    twin.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in model.params.items()})
    y, _, cache = model.forward(x)
    grads = model.backward(R, cache).grads
    y_t = twin(torch.from_numpy(x))
    (y_t * torch.from_numpy(R)).sum().backward()
    assert max_rel_error(y, y_t.detach().numpy()) < 1e-6
    for name, p in twin.named_parameters():
        assert max_rel_error(grads[name], p.grad.numpy()) < 1e-6, name
