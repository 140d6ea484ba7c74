"""Input checks, initialisation, the controller's state (:class:`ControllerState`), its LSTM
gradients and the output layer shared by :class:`~pyplay.models.memory.MemoryNet` and
:class:`~pyplay.models.memory.AttendRNN` (:class:`ControllerModel`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from pyplay._checks import check_array, check_lengths
from pyplay.decode.step import RowsState
from pyplay.limits import check_parameters
from pyplay.models.contract import Backward, PerStepBase
from pyplay.models.memory.heads import LSTMStep, lstm_step_backward
from pyplay.nn import init

__all__ = [
    "ControllerModel",
    "ControllerState",
    "check_dy",
    "check_inputs",
    "check_lengths_arg",
    "init_params",
    "lstm_backward_all",
    "lstm_weight_grads",
]


@dataclass(frozen=True)
class ControllerState(RowsState):
    """The LSTM controller's state ``h``, ``c`` (B, H): the first fields of the states of
    :class:`~pyplay.models.memory.MemoryNet` and :class:`~pyplay.models.memory.AttendRNN`."""

    h: np.ndarray
    c: np.ndarray

    def check_shapes(self, B: int, H: int, **more: tuple[int, ...]) -> None:
        """ValueError naming the field when ``h`` or ``c`` is not (B, H), or a field named in
        ``more`` does not have the shape given there."""
        for name, shape in {"h": (B, H), "c": (B, H), **more}.items():
            got = getattr(self, name).shape
            if got != shape:
                raise ValueError(f"state.{name} must have shape {shape}, got {got}")


def check_inputs(model: Any, inputs: Any) -> np.ndarray:
    """Token ids (B, T) as one-hot vectors (B, T, V), or real inputs (B, T, F), in the model's
    dtype; wrong ranks, sizes and out-of-range ids are refused with the argument's name."""
    if model.input_kind == "tokens":
        ids = check_array("inputs", inputs, ndim=2, kind="i", layout="(B, T) token ids")
        if ids.size and (ids.min() < 0 or ids.max() >= model.input_size):
            raise ValueError(
                f"inputs must hold token ids in 0..{model.input_size - 1}, got min "
                f"{int(ids.min())} and max {int(ids.max())}"
            )
        x = np.zeros((*ids.shape, model.input_size), dtype=model.dtype)  # (B, T, V)
        np.put_along_axis(x, ids[..., None], 1.0, axis=2)
    else:
        x = check_array("inputs", inputs, ndim=3, dtype=model.dtype, layout="(B, T, F)")
        if x.shape[2] != model.input_size:
            raise ValueError(
                f"inputs must have shape (B, T, input_size={model.input_size}), got {x.shape}"
            )
    if x.shape[0] < 1 or x.shape[1] < 1:
        raise ValueError(f"inputs must hold at least one sequence of one step, got {x.shape}")
    return x


def check_dy(model: Any, dy: Any, cache: Any) -> np.ndarray:
    """``dy`` as d(loss)/d(outputs) of the forward pass ``cache`` came from: (B, T, O) in the
    model's dtype (ValueError naming the expected shape otherwise)."""
    dY = np.asarray(dy, dtype=model.dtype)
    B, T, _ = cache.x.shape
    if dY.shape != (B, T, model.output_size):
        raise ValueError(
            f"dy must have shape (B, T, output_size) = {(B, T, model.output_size)}, got {dY.shape}"
        )
    return dY


def check_lengths_arg(lengths: Any, B: int, T: int) -> None:
    """Validate ``lengths`` (B,) when given (the models are causal: it changes nothing)."""
    if lengths is not None:
        check_lengths(lengths, B, T)


def init_params(
    shapes: dict[str, tuple[int, ...]], dtype: np.dtype, gen: np.random.Generator
) -> dict[str, np.ndarray]:
    """U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for every weight and its bias (fan_in: the weight's
    columns, as torch's Linear and LSTM), and the LSTM's forget-gate bias set to 1."""
    check_parameters(f"a model with arrays {list(shapes)}", sum(map(math.prod, shapes.values())))
    params: dict[str, np.ndarray] = {}
    fan_in = 1
    for name, shape in shapes.items():
        if name.endswith("weight_ih") or name.endswith(".weight"):
            fan_in = shape[1]
        if name.endswith("weight_hh"):
            fan_in = shape[1]
        bound = 1.0 / np.sqrt(fan_in)
        params[name] = init.uniform(gen, -bound, bound, shape, dtype, f"{name} {shape}")
    if "controller.bias" in params:
        H = params["controller.bias"].shape[0] // 4
        params["controller.bias"][H : 2 * H] = 1.0  # forget gate open at the start
    return params


def lstm_backward_all(
    dh: np.ndarray, dc: np.ndarray, step: LSTMStep, p: dict[str, np.ndarray]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One controller step backwards: dL/du (B, F'), dL/dh_{t-1} and dL/dc_{t-1} (B, H) and the
    pre-activation gradients (B, 4H), from dL/dh_t (total) and the dL/dc_t from step t + 1."""
    da, dc_prev = lstm_step_backward(dh, dc, step)  # (B, 4H), (B, H)
    return da @ p["controller.weight_ih"], da @ p["controller.weight_hh"], dc_prev, da


def lstm_weight_grads(g: dict[str, np.ndarray], dA: np.ndarray, steps: Sequence[LSTMStep]) -> None:
    """Controller weight gradients from every step's pre-activation gradients ``dA`` (T, B, 4H)
    at once: sums over steps and rows of da^T u and da^T h_{t-1}."""
    U = np.stack([s.u for s in steps])  # (T, B, F')
    Hp = np.stack([s.h_prev for s in steps])  # (T, B, H)
    g["controller.weight_ih"] = np.einsum("tbg,tbf->gf", dA, U)  # (4H, F')
    g["controller.weight_hh"] = np.einsum("tbg,tbh->gh", dA, Hp)  # (4H, H)
    g["controller.bias"] = dA.sum(axis=(0, 1))  # (4H,)


class ControllerModel(PerStepBase):
    """A per-step model with an LSTM controller whose output layer reads the controller state
    and what it read, :math:`y_t = W [h_t; r_t] + b` (``head.weight``, ``head.bias``): the
    forward pass's entry (:meth:`forward`, checks, over the subclass's ``_steps``), the
    backward pass's entry (:meth:`backward` over the subclass's ``gradients``) and the output
    layer's gradients (:meth:`_output_backward`)."""

    _cache_type: ClassVar[type[Any]]  # what the subclass's forward returns as its cache
    params: dict[str, np.ndarray]
    dtype: np.dtype

    def forward(
        self,
        inputs: Any,
        state: Any = None,
        lengths: Any = None,
        *,
        record: bool = False,
        training: bool = True,
    ) -> tuple[np.ndarray, Any, Any]:
        """Outputs (B, T, output_size), the state after step T, and the cache (the subclass's
        :meth:`_steps` over the checked inputs, :func:`check_inputs`).

        ``lengths`` (B,) is checked but changes nothing: the nets are causal, so outputs at
        valid steps do not depend on padding after them (the returned state has read the
        padding). ``record`` and ``training`` are accepted for the protocol of the sequence
        models; the cache always holds what the views draw.
        """
        x = check_inputs(self, inputs)  # (B, T, F)
        check_lengths_arg(lengths, x.shape[0], x.shape[1])
        return self._steps(x, state)

    def _steps(self, x: np.ndarray, state: Any) -> tuple[np.ndarray, Any, Any]:
        """The forward pass over one-hot or real inputs ``x`` (B, T, F) from ``state`` (None:
        the initial state): outputs, the state after step T, the cache."""
        raise NotImplementedError

    def gradients(
        self, dy: Any, cache: Any, dstate: Any = None
    ) -> tuple[dict[str, np.ndarray], np.ndarray]:
        raise NotImplementedError

    def backward(self, dy: Any, cache: Any, dstate: Any = None) -> Backward:
        """Gradients of every parameter (keys of :attr:`params`) from d(loss)/d(outputs), and
        dL/dx (B, T, F) as ``dinputs`` (:meth:`gradients`)."""
        grads, dx = self.gradients(dy, cache, dstate)
        return Backward(grads, dinputs=dx)

    def _output_backward(
        self, dy: Any, cache: Any, dstate: Any
    ) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """Check the arguments of :meth:`gradients`; then the output layer backwards: every
        parameter's gradient zeroed but the head's, dW = sum_t dy_t [h_t; r_t]^T and
        db = sum_t dy_t, and dL/d[h_t; r_t] = W^T dy_t (B, T, H + reads)."""
        name = type(self).__name__
        if not isinstance(cache, self._cache_type):
            raise TypeError(f"cache must come from {name}.forward, got {type(cache).__name__}")
        if dstate is not None:
            raise ValueError("dstate must be None: gradients into the final state are not kept")
        dY = check_dy(self, dy, cache)  # (B, T, O)
        p = self.params
        hr = np.concatenate([cache.hidden, cache.reads], axis=2)  # (B, T, H + reads)
        g = {k: np.zeros_like(v) for k, v in p.items()}
        g["head.weight"] = np.einsum("bto,btk->ok", dY, hr)  # (O, H + reads)
        g["head.bias"] = dY.sum(axis=(0, 1))  # (O,)
        return g, dY @ p["head.weight"]  # (B, T, H + reads)
