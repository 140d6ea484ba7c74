"""The types of the recurrent layer: the cell interface, the layer's cache and its results.

:class:`Cell` is the interface between the recurrent driver and a cell kernel (RNN, GRU, LSTM),
and the base of the three.

A *cell* is a small strategy object (:class:`~pyplay.nn.rnn.RNNCell`,
:class:`~pyplay.nn.gru.GRUCell`, :class:`~pyplay.nn.lstm.LSTMCell`) that knows the maths of one
layer in one direction: how to lay out its weights (:meth:`Cell.pack`), the recurrence over all
time steps given the input projection of every step (:meth:`Cell.forward`), and the maths of
one BPTT step (:meth:`Cell._backward_pass`; the loop over the steps, :meth:`Cell.backward`, is
the same for all). The driver, :class:`~pyplay.nn.recurrent.Recurrent`, does everything
around it once for all cells (layers, directions, lengths, dropout, the state layout).

Inside a cell sequences are time-major ``(T, B, ...)`` so that ``h_{t-1}`` of all sequences is one
contiguous block. :class:`RecurrentCache` is what the layer's forward keeps for its backward;
:class:`Gradients` and :class:`RecordedGradients` are what its backward returns.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, NamedTuple, TypeVar

import numpy as np

from pyplay._checks import check_array, check_shape
from pyplay.nn._ops import matmul
from pyplay.nn.sequences import Ends, PaddedBatch

__all__ = [
    "BackwardPass",
    "Cell",
    "CellGrads",
    "DirectionCache",
    "Gradients",
    "Projection",
    "RecordedGradients",
    "RecurrentCache",
    "batch_first_record",
    "check_flag",
    "check_state",
]


def check_flag(name: str, value: Any) -> bool:
    """``value`` as a bool, refusing anything but True / False."""
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_state(
    state: Any, name: str, shape: tuple[int, int, int], dtype: np.dtype, has_cell: bool
) -> tuple[np.ndarray, np.ndarray | None]:
    """A recurrent stack's state (or state gradient) -> h (L*D, B, H) and c (or None); zeros
    when ``state`` is None."""
    layout = "(num_layers*D, B, H)"

    def array(label: str, value: Any) -> np.ndarray:
        a = check_array(label, value, ndim=3, dtype=dtype, layout=layout)
        check_shape(label, a, shape, layout)
        return a

    if state is None:
        return np.zeros(shape, dtype=dtype), (np.zeros(shape, dtype=dtype) if has_cell else None)
    if has_cell:
        if not isinstance(state, tuple | list) or len(state) != 2:
            raise TypeError(
                f"{name} must be a tuple (h, c) of two arrays {layout} = {shape}, "
                f"got {type(state).__name__}"
            )
        return array(f"{name}[0]", state[0]), array(f"{name}[1]", state[1])
    if isinstance(state, tuple | list):
        raise TypeError(
            f"{name} must be one array h {layout} = {shape} (no cell state for this layer), "
            f"got a {type(state).__name__}"
        )
    return array(name, state), None


def batch_first_record(
    raw: dict[str, np.ndarray], batch: PaddedBatch, d: int
) -> dict[str, np.ndarray]:
    """A cell's record, (T, B, H) arrays in direction ``d``'s reading order -> (B, T, H) arrays
    in the input's order, zero at padded steps."""
    result = {}
    for name, value in raw.items():  # (T, B, H) in the direction's reading order
        v = batch.zero_padding(value)
        if d == 1:
            v = batch.reverse(v)
        result[name] = np.ascontiguousarray(v.transpose(1, 0, 2))  # (B, T, H)
    return result


@dataclass(frozen=True)
class Projection:
    """Input-projection weights in a cell's own layout (rows possibly permuted and scaled).

    The driver computes ``XP = X W_fwd^T + b_fwd`` (T, B, G) for the cell's forward, and
    ``dX = dXP W`` from the cell's gradient ``dXP`` of the unscaled pre-activations.
    """

    W_fwd: np.ndarray  # (G, F)
    b_fwd: np.ndarray  # (G,)
    W: np.ndarray  # (G, F)


@dataclass(frozen=True)
class CellGrads:
    """What a cell's BPTT returns, in the cell's own layout (see :meth:`Cell.to_params`)."""

    dXP: np.ndarray  # (T, B, G) dL/d(input projection of each step)
    dW_hh: np.ndarray  # (G, H)
    db_hh: np.ndarray | None  # (G,); None when it equals db_ih (both biases in one sum)
    extra: dict[str, np.ndarray]  # cell-specific parameters (e.g. peepholes), final names
    dh0: np.ndarray  # (B, H)
    dc0: np.ndarray | None  # (B, H) for cells with a memory cell


class BackwardPass(NamedTuple):
    """A cell's part of one BPTT pass (:meth:`Cell._backward_pass`): what :meth:`Cell.backward`
    fills step by step and how it turns into the cell's gradients."""

    dHH: np.ndarray  # (T, B, ...) the factors of each step, becoming dL/d(W_hh h_{t-1} + b_hh)
    step: Callable[[int, np.ndarray, np.ndarray], None]  # (t, dh (B, H), dh_rec (B, H) out)
    finish: Callable[[np.ndarray, np.ndarray], CellGrads]  # (dW_hh (G, H), dh_0 (B, H))


class Cell(abc.ABC):
    """The strategy interface a cell implements for :class:`~pyplay.nn.recurrent.Recurrent`,
    and the BPTT loop all cells share (:meth:`backward`)."""

    n_gates: int  # G = n_gates * H rows in weight_ih / weight_hh
    has_cell: bool = False  # True when the state is (h, c)
    recorded: tuple[str, ...]  # the names of :meth:`record`'s arrays, in its order
    gradients: tuple[str, ...] = ("full",)  # what :meth:`backward` computes: "full" and own

    def extra_shapes(self, H: int) -> dict[str, tuple[int, ...]]:
        """Shapes of parameters beyond torch's four (per layer and direction); none unless the
        cell has some."""
        return {}

    @abc.abstractmethod
    def pack(self, p: dict[str, np.ndarray], B: int) -> tuple[Projection, Any]:
        """Weights of one layer-direction (torch names, biases always present) -> the cell's
        layout: the input projection and whatever the recurrence needs."""

    @abc.abstractmethod
    def forward(
        self, XP: np.ndarray, weights: Any, h0: np.ndarray, c0: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray | None, Any]:
        """The recurrence over ``XP`` (T, B, G), which it may overwrite. Returns ``hs``
        (T+1, B, H) with ``hs[0] = h0``, the cells ``cs`` (T+1, B, H) or None, and a cache."""

    def backward(
        self,
        dH: np.ndarray,
        dc_T: np.ndarray | None,
        ends: Ends,
        cache: Any,
        gradient: str = "full",
    ) -> CellGrads:
        """BPTT, step by step from ``t = T - 1`` down to 0. ``dH`` (T, B, H) holds the gradient
        reaching each ``h_t`` from outside (zero at padded steps, ``dL/dh_n`` already added at
        each last valid step); the recurrent part is added in place, so on return ``dH`` is the
        total ``dL/dh_t``. ``dc_T`` (B, H) enters at the steps given by ``ends``. ``gradient``:
        one of :attr:`gradients`, "full" the true gradient (the LSTM also has "cec", its
        truncated one, where no gradient flows back through ``h_{t-1}``).

        The loop over the steps and the recurrent weights' gradient, the sum over the steps
        of ``delta_t^T h_{t-1}``, are shared; the maths of each step is the cell's
        (:meth:`_backward_pass`)."""
        T, B, H = dH.shape
        full = gradient == "full"
        bp = self._backward_pass(cache, dH, dc_T, ends, full)
        dh_rec = np.zeros((B, H), dtype=dH.dtype)  # dL/dh_{t-1} from step t
        for t in reversed(range(T)):
            dh = dH[t]  # (B, H) becomes the total dL/dh_t
            if full and t < T - 1:
                dh += dh_rec
            bp.step(t, dh, dh_rec)
        flat = bp.dHH.reshape(T * B, -1)  # (T*B, G)
        dW_hh = matmul(flat.T, cache.hs[:-1].reshape(T * B, H))  # (G, H)
        return bp.finish(dW_hh, dh_rec)

    @abc.abstractmethod
    def _backward_pass(
        self, cache: Any, dH: np.ndarray, dc_T: np.ndarray | None, ends: Ends, full: bool
    ) -> BackwardPass:
        """The factors of all steps, one step's backward (it writes ``dh_rec``, the gradient
        step ``t`` sends to ``h_{t-1}``, unless ``full`` is False) and the final gradients."""

    @abc.abstractmethod
    def to_params(self, dW_ih: np.ndarray, db_ih: np.ndarray, g: CellGrads) -> dict[str, Any]:
        """Gradients in the cell's layout -> torch layout and names (without suffix)."""

    @abc.abstractmethod
    def record(self, cache: Any) -> dict[str, np.ndarray]:
        """Recorded internals, each (T, B, H) in the kernel's reading order, keyed and
        ordered as :attr:`recorded`."""


# ------------------------------------------------------------ what the layer keeps and returns
S = TypeVar("S")  # the state: h (L*D, B, H), or (h, c) for a cell with a memory cell


class Gradients(NamedTuple, Generic[S]):
    """What :meth:`~pyplay.nn.recurrent.Recurrent.backward` returns:
    ``dx, dstate, grads = layer.backward(...)``."""

    dx: np.ndarray  # (B, T, input_size)
    dstate: S  # dh_0, or (dh_0, dc_0), each (num_layers*D, B, H)
    grads: dict[str, np.ndarray]  # keyed and ordered as params


class RecordedGradients(NamedTuple, Generic[S]):
    """:class:`Gradients` and the gradient record, from ``backward(..., record=True)``."""

    dx: np.ndarray  # (B, T, input_size)
    dstate: S  # dh_0, or (dh_0, dc_0), each (num_layers*D, B, H)
    grads: dict[str, np.ndarray]  # keyed and ordered as params
    grad_record: dict[str, np.ndarray]  # per layer-direction key, (B, T) norms of dL/dh_t


@dataclass(frozen=True)
class DirectionCache:
    """One layer-direction's part of :class:`RecurrentCache`."""

    X: Any  # (T, B, F_l) the input in this direction's reading order, or a TokenInput
    proj: Projection
    cache: Any


@dataclass(frozen=True)
class RecurrentCache:
    """What :meth:`~pyplay.nn.recurrent.Recurrent.backward` needs; ``record`` holds the
    recorded internals (``forward(record=True)``), else None."""

    owner: object  # the layer that made it: backward checks it by identity, nothing more
    batch: PaddedBatch
    layers: list[list[DirectionCache]]  # [layer][direction]
    drops: list[np.ndarray | None]  # [layer] dropout multiplier of its output (T, B, D*H)
    record: dict[str, dict[str, np.ndarray]] | None
