r"""A recurrent net that attends to its own previous states: its memory is its past.

Each step t reads, by content, from the states it has already produced, and feeds what it read
into the step (Cheng et al. 2016, "LSTM-networks"; the self-attentive recurrent variant):

.. math::

    q_t &= W_q h_{t-1} + b_q, \qquad
    \alpha_{t,s} = \mathrm{softmax}_{s < t}\!\left(\frac{q_t \cdot h_s}{\sqrt H}\right), \qquad
    r_t = \sum_{s < t} \alpha_{t,s} h_s \\
    h_t, c_t &= \mathrm{LSTM}([x_t; r_t], h_{t-1}, c_{t-1}), \qquad
    y_t = W_o [h_t; r_t] + b_o

with :math:`s` running over the previous steps :math:`1..t-1` (scaled dot-product scores), and
:math:`r_1 = 0` (nothing to read yet), :math:`h_0 = c_0 = 0`. Token inputs enter one-hot.

Parameters: ``controller.weight_ih`` (4H, F + H), ``controller.weight_hh`` (4H, H),
``controller.bias`` (4H,), ``query.weight`` (H, H), ``query.bias`` (H,), ``head.weight``
(O, 2H), ``head.bias`` (O,).

This is ``form="input"`` (the default): the read is an extra input. ``form="state"`` is the
lecture's, where the attended state replaces the previous state,
:math:`s^t = h(x^t, \tilde s^{t-1}, y^{t-1})` (:mod:`pyplay.models.memory.attend_state`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay._checks import as_generator, check_choice, check_int
from pyplay.models.contract import config_int
from pyplay.models.memory._common import (
    ControllerModel,
    ControllerState,
    init_params,
    lstm_backward_all,
    lstm_weight_grads,
)
from pyplay.models.memory.attend_state import FORMS, state_backward, state_forward
from pyplay.models.memory.heads import LSTMStep, lstm_step

__all__ = ["AttendCache", "AttendRNN", "AttendState"]


@dataclass(frozen=True)
class AttendState(ControllerState):
    """The controller state (h, c) (B, H) and every state produced so far (B, S, H); with
    ``form="state"`` also every cell state so far ``cells`` (B, S, H) and the last output ``y``
    (B, O)."""

    history: np.ndarray
    cells: np.ndarray | None = None
    y: np.ndarray | None = None


@dataclass(frozen=True)
class AttendCache:
    """What :meth:`AttendRNN.backward` needs; ``attention`` (B, T, S0 + T) holds the weights of
    step t over the earlier states (zero from step t on), ``hidden`` (B, T, H)."""

    x: np.ndarray  # (B, T, F)
    steps: tuple[LSTMStep, ...]
    hidden: np.ndarray  # (B, T, H)
    reads: np.ndarray  # (B, T, H) r_t
    history: np.ndarray  # (B, S0 + T, H) the states read from, the state's first
    queries: np.ndarray  # (B, T, H) q_t
    attention: np.ndarray  # (B, T, S0 + T)
    start: int  # S0, states given by the incoming state
    cells: np.ndarray | None = None  # (B, S0 + T, H) c^i (form="state")
    prev: np.ndarray | None = None  # (B, T, H) h^{t-1} each query read (form="state")


class AttendRNN(ControllerModel):
    """LSTM whose every step reads, by content, from its previous hidden states.

    Parameters
    ----------
    input_size, output_size, hidden_size : int
    form : {"input", "state"}
        What the read does: it is an extra input of the step (module docstring), or, the
        lecture's form, it replaces the previous state (:mod:`~.attend_state`).
    input_kind : {"tokens", "real"}
    dtype : numpy.float32 or numpy.float64
    rng : numpy.random.Generator or int seed
    """

    _cache_type = AttendCache

    def __init__(
        self,
        input_size: int,
        output_size: int,
        hidden_size: int = 32,
        form: str = "input",
        input_kind: str = "tokens",
        dtype: Any = np.float32,
        rng: np.random.Generator | int | None = 0,
    ) -> None:
        self._set_io(input_size, output_size, input_kind, dtype)
        H = self.hidden_size = check_int("hidden_size", hidden_size, min_value=1)
        self.form = check_choice("form", form, FORMS)
        F, O = self.input_size, self.output_size
        shapes: dict[str, tuple[int, ...]]
        if self.form == "state":  # the lecture's: u = [x; y^{t-1}], q = W_q h + U_q x + b_q
            shapes = {"controller.weight_ih": (4 * H, F + O), "query_x.weight": (H, F)}
        else:
            shapes = {"controller.weight_ih": (4 * H, F + H)}
        shapes |= {
            "controller.weight_hh": (4 * H, H),
            "controller.bias": (4 * H,),
            "query.weight": (H, H),
            "query.bias": (H,),
            "head.weight": (O, (1 if self.form == "state" else 2) * H),
            "head.bias": (O,),
        }
        self.params = init_params(shapes, self.dtype, as_generator(rng))

    @classmethod
    def estimate_parameters(cls, config: Mapping[str, Any]) -> int:
        """An upper estimate of the parameter count ``config`` describes (without building)."""
        H, n_in = config_int(config, "hidden_size", 32), config_int(config, "input_size", 1)
        out = config_int(config, "output_size", 1)
        extra = 4 * H * out + H * n_in  # form="state": y^{t-1} in, U_q (an upper estimate)
        return 4 * H * (n_in + 2 * H + 1) + H * (H + 1) + out * (2 * H + 1) + extra

    def _steps(
        self, x: np.ndarray, state: AttendState | None
    ) -> tuple[np.ndarray, AttendState, AttendCache]:
        """:meth:`forward` over ``x`` (B, T, F): outputs (B, T, output_size), the state after
        step T (its history included) and the cache."""
        B, T, _ = x.shape
        H, p = self.hidden_size, self.params
        if state is None:
            h = np.zeros((B, H), dtype=self.dtype)
            c, past = h.copy(), np.zeros((B, 0, H), dtype=self.dtype)
        else:
            h, c, past = _check_state(self, state, B)
        if self.form == "state":
            y, (h, c, *rest), fields = state_forward(self, x, h, c, state)
            return y, AttendState(h, c, *rest), AttendCache(x=x, **fields)
        S0 = past.shape[1]
        history = np.concatenate([past, np.empty((B, T, H), self.dtype)], axis=1)  # (B, S0+T, H)
        attention = np.zeros((B, T, S0 + T), dtype=self.dtype)  # (B, T, S0+T)
        reads = np.zeros((B, T, H), dtype=self.dtype)  # (B, T, H)
        queries = np.zeros((B, T, H), dtype=self.dtype)  # (B, T, H)
        scale = self.dtype.type(1.0 / np.sqrt(H))
        steps = []
        for t in range(T):
            n = S0 + t  # states to read from
            if n:
                q = h @ p["query.weight"].T + p["query.bias"]  # (B, H)
                e = np.einsum("bsh,bh->bs", history[:, :n], q) * scale  # (B, n)
                e = np.exp(e - e.max(axis=1, keepdims=True))
                alpha = e / e.sum(axis=1, keepdims=True)  # (B, n)
                reads[:, t] = np.einsum("bs,bsh->bh", alpha, history[:, :n])  # (B, H)
                attention[:, t, :n], queries[:, t] = alpha, q
            u = np.concatenate([x[:, t], reads[:, t]], axis=1)  # (B, F + H)
            h, c, step = lstm_step(
                u, h, c, p["controller.weight_ih"], p["controller.weight_hh"], p["controller.bias"]
            )  # (B, H)
            history[:, n] = h
            steps.append(step)
        hidden = history[:, S0:]  # (B, T, H)
        y = (
            np.concatenate([hidden, reads], axis=2) @ p["head.weight"].T + p["head.bias"]
        )  # (B, T, O)
        cache = AttendCache(x, tuple(steps), hidden, reads, history, queries, attention, S0)
        return y, AttendState(h, c, history), cache

    def gradients(
        self, dy: Any, cache: AttendCache, dstate: Any = None
    ) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """BPTT: the parameter gradients and dL/dx (B, T, F).

        dL/dh_t gathers the output at t, the LSTM step t + 1, the query of step t + 1 and every
        later step that read h_t (as a score and as a value); all come from steps after t, so
        one reverse pass completes them in time. Read r_t: dalpha_s = dL/dr . h_s, the softmax
        gives de, then dq = sum_s de_s h_s / sqrt(H) and dh_s += alpha_s dL/dr + de_s q / sqrt(H).
        """
        g, dhr = self._output_backward(dy, cache, dstate)  # dhr: (B, T, 2H)
        if self.form == "state":
            dx_state = state_backward(self, g, dhr, cache)  # fills g
            return {k: g[k] for k in self.params}, dx_state
        B, T, F = cache.x.shape
        H, p, S0 = self.hidden_size, self.params, cache.start
        scale = self.dtype.type(1.0 / np.sqrt(H))
        dHist = np.zeros_like(cache.history)  # (B, S0+T, H) from the reads of later steps
        dA = np.empty((T, B, 4 * H), dtype=self.dtype)
        dh = np.zeros((B, H), dtype=self.dtype)  # from step t + 1 (recurrence and query)
        dc = np.zeros((B, H), dtype=self.dtype)
        dx = np.empty((B, T, F), dtype=self.dtype)
        for t in reversed(range(T)):
            dh = dh + dhr[:, t, :H] + dHist[:, S0 + t]  # (B, H) total dL/dh_t
            du, dh, dc, dA[t] = lstm_backward_all(dh, dc, cache.steps[t], p)
            dx[:, t] = du[:, :F]
            n = S0 + t
            if not n:
                continue
            dr = dhr[:, t, H:] + du[:, F:]  # (B, H)
            past, alpha, q = cache.history[:, :n], cache.attention[:, t, :n], cache.queries[:, t]
            dalpha = np.einsum("bsh,bh->bs", past, dr)  # (B, n)
            de = alpha * (dalpha - (alpha * dalpha).sum(axis=1, keepdims=True)) * scale  # (B, n)
            dHist[:, :n] += alpha[:, :, None] * dr[:, None, :] + de[:, :, None] * q[:, None, :]
            dq = np.einsum("bs,bsh->bh", de, past)  # (B, H)
            g["query.weight"] += dq.T @ cache.steps[t].h_prev
            g["query.bias"] += dq.sum(axis=0)
            dh = dh + dq @ p["query.weight"]  # (B, H) dL/dh_{t-1} through the query
        lstm_weight_grads(g, dA, cache.steps)
        return {k: g[k] for k in p}, dx


def _check_state(model: AttendRNN, state: Any, B: int) -> tuple[np.ndarray, ...]:
    if not isinstance(state, AttendState):
        raise TypeError(f"state must be an AttendState, got {type(state).__name__}")
    H = model.hidden_size
    state.check_shapes(B, H, history=(B, state.history.shape[1], H))
    return state.h, state.c, state.history
