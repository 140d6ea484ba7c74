"""Global-norm gradient clipping, as ``torch.nn.utils.clip_grad_norm_``.

.. math::

    \\|g\\| = \\sqrt{\\textstyle\\sum_k \\|g_k\\|_2^2}, \\qquad
    g_k \\leftarrow g_k \\cdot \\min\\left(1, \\frac{c}{\\|g\\| + 10^{-6}}\\right)
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from pyplay._checks import check_float

__all__ = ["clip_grad_norm", "global_norm"]


def global_norm(grads: Mapping[str, np.ndarray]) -> float:
    """The L2 norm of all gradient arrays taken together."""
    return float(np.sqrt(sum(float(np.vdot(g, g)) for g in grads.values())))


def clip_grad_norm(
    grads: Mapping[str, np.ndarray], max_norm: float, total: float | None = None
) -> float:
    """Scale ``grads`` in place so their global norm is at most ``max_norm``.

    Returns the norm before clipping (as torch does). Non-finite norms are returned untouched
    so the caller can report them. ``total``: their norm (:func:`global_norm`), when the
    caller has it already.
    """
    max_norm = check_float("max_norm", max_norm, min_value=0.0, min_inclusive=False)
    total = global_norm(grads) if total is None else float(total)
    if np.isfinite(total):
        coef = max_norm / (total + 1e-6)
        if coef < 1.0:
            for g in grads.values():
                g *= coef
    return total
