r"""Hard addressing and hard updates for the memory net's heads (TEK5040: "v(q, M) = M_j with
probability p_j: hard addressing", and "there exist corresponding hard update rules").

A head's weights :math:`p` (content, or content then location) are a distribution over the
cells. A *hard* head draws one cell :math:`j \sim p` and uses the one-hot vector
:math:`e_j` in place of :math:`p`:

.. math::

    \text{read: } r = M_j, \qquad
    \text{overwrite: } M_j \leftarrow w, \qquad
    \text{residual: } M_j \leftarrow M_j + w

(the soft rules with :math:`p = e_j`; every other cell is left as it was). The draw passes no
gradient to :math:`p`; the score-function estimator (:mod:`pyplay.models.score_function`, the
one the hard glimpse uses) adds :math:`(L - b)\, \nabla \log p_j` for every draw of every step,
with :math:`L` the row's loss and :math:`b` a running mean of the batch loss kept by the
objective (:class:`pyplay.objectives.SequenceObjective`). The rest of the gradient (through
what was read and written) is exact. Evaluating (``training=False``) takes the most likely
cell. A head's next weights for location addressing start from its distribution :math:`p`, not
from the drawn cell.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pyplay._checks import check_array
from pyplay.models.score_function import sample

__all__ = ["HARD", "choices", "choose", "head_weights", "onehot"]

HARD = ("none", "read", "write", "both")  # which heads draw one cell


def choose(p: np.ndarray, given: np.ndarray | None, training: bool, generator: Any) -> np.ndarray:
    """The cells (B,) a hard head takes: ``given``, else a draw from ``p`` (B, N) when
    training (from ``generator``), else the most likely."""
    if given is not None:
        return given
    return sample(p, generator) if training else p.argmax(axis=1)  # (B,)


def head_weights(
    p: np.ndarray,
    chosen: np.ndarray | None,
    given: np.ndarray | None,
    at: tuple[int, int],
    training: bool,
    generator: Any,
) -> np.ndarray:
    """The weights (B, N) a head uses at step and head ``at``: ``p`` itself (soft, ``chosen``
    None), or :math:`e_j` of the cell it takes (:func:`choose`; ``given`` (B, T, heads) or
    None), kept in ``chosen[:, t, k]``."""
    if chosen is None:
        return p
    t, k = at
    j = choose(p, None if given is None else given[:, t, k], training, generator)  # (B,)
    chosen[:, t, k] = j
    return onehot(j, p.shape[1], p.dtype)  # (B, N)


def onehot(index: np.ndarray, N: int, dtype: Any) -> np.ndarray:
    """:math:`e_j` (B, N) for each row's cell."""
    e = np.zeros((len(index), N), dtype=dtype)  # (B, N)
    e[np.arange(len(index)), index] = 1
    return e


def choices(
    which: str, value: Any, hard: str, shape: tuple[int, int, int], N: int
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """For the ``which`` ("read" or "write") heads of a net whose ``hard`` is given: the cells
    given as ``read_index`` / ``write_index`` (B, T, heads) of cells 0..N-1, checked, or None;
    and the array (B, T, heads) the forward pass keeps the cells taken in (None: soft heads)."""
    if hard not in (which, "both"):
        return None, None
    name, taken = f"{which}_index", np.zeros(shape, dtype=np.intp)  # (B, T, heads)
    if value is None:
        return None, taken
    index = check_array(name, value, ndim=3, kind="i", layout="(B, T, heads)")
    if index.shape != shape or index.min() < 0 or index.max() >= N:
        raise ValueError(f"{name} must have shape {shape} and cells in 0..{N - 1}")
    return index, taken
