r"""Attending to previous states in the lecture's form (TEK5040, "Attending to previous states
II"): the attended state *replaces* the previous state.

.. math::

    \alpha_i^t &= f(Q(s^{t-1}, x^t), K(s^i)), \qquad p^t = \mathrm{softmax}(\alpha^t), \qquad
    \tilde s^{t-1} = \textstyle\sum_{i=1}^{t-1} p_i^t s^i \\
    s^t &= h(x^t, \tilde s^{t-1}, y^{t-1}), \qquad y^t = W_o h^t + b_o

Choices: the state of the LSTM is :math:`s = (h, c)`, and one set of weights :math:`p^t`
blends both, :math:`\tilde h = \sum_i p_i h^i`, :math:`\tilde c = \sum_i p_i c^i`; the query
is :math:`Q(s^{t-1}, x^t) = W_q h^{t-1} + U_q x^t + b_q`, the key :math:`K(s^i) = h^i`, the
match :math:`f(q, k) = q \cdot k / \sqrt H`; :math:`y^{t-1}` is the previous output
(:math:`y^0 = 0`) and :math:`h` is the LSTM step. With no earlier state yet (the first step of
a sequence) :math:`\tilde s^0 = s^0 = 0`. Since :math:`s^{t-1}` is itself one of the states
attended over, :math:`p^t` on the last state gives back a plain LSTM.

Parameters (``form="state"`` of :class:`~pyplay.models.memory.AttendRNN`):
``controller.weight_ih`` (4H, F + O), ``controller.weight_hh`` (4H, H), ``controller.bias``,
``query.weight`` (H, H), ``query.bias`` (H,), ``query_x.weight`` (H, F), ``head.weight`` (O, H),
``head.bias``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pyplay.losses import softmax
from pyplay.models.memory._common import lstm_backward_all, lstm_weight_grads
from pyplay.models.memory.controller import feedback_backward, output_step, previous_output
from pyplay.models.memory.heads import lstm_step

__all__ = ["FORMS", "state_backward", "state_forward"]

FORMS = ("input", "state")  # the read is an extra input (today's), or replaces s^{t-1}


def state_forward(
    model: Any, x: np.ndarray, h: np.ndarray, c: np.ndarray, state: Any
) -> tuple[np.ndarray, tuple[np.ndarray, ...], dict[str, Any]]:
    """The lecture's form over ``x`` (B, T, F) from (h, c) (B, H) and the incoming ``state``
    (an AttendState or None): outputs (B, T, O), the state's arrays (h, c, history, cells, y)
    and the cache's fields."""
    B, T, _ = x.shape
    H, O, p = model.hidden_size, model.output_size, model.params
    past = np.zeros((B, 0, H), model.dtype) if state is None else state.history  # (B, S0, H)
    past_c = np.zeros_like(past) if state is None else state.cells  # (B, S0, H)
    if past_c is None or past_c.shape != past.shape:
        got = None if past_c is None else past_c.shape
        raise ValueError(f"state.cells must have shape {past.shape} (form='state'), got {got}")
    yp = previous_output(None if state is None else state.y, B, O, model.dtype)  # (B, O)
    S0 = past.shape[1]
    history = np.concatenate([past, np.empty((B, T, H), model.dtype)], axis=1)  # (B, S0+T, H)
    cells = np.concatenate([past_c, np.empty((B, T, H), model.dtype)], axis=1)  # (B, S0+T, H)
    attention = np.zeros((B, T, S0 + T), dtype=model.dtype)  # (B, T, S0+T) p^t
    queries = np.zeros((B, T, H), dtype=model.dtype)  # (B, T, H) q^t
    prev = np.empty((B, T, H), dtype=model.dtype)  # (B, T, H) h^{t-1} the query reads
    outputs = np.empty((B, T, O), dtype=model.dtype)  # (B, T, O)
    none = np.zeros((B, 0), dtype=model.dtype)  # (B, 0) no read reaches the output
    scale = model.dtype.type(1.0 / np.sqrt(H))
    steps = []
    for t in range(T):
        n = S0 + t  # states s^1 .. s^{t-1} to attend over
        prev[:, t], h_in, c_in = h, h, c
        if n:
            q = h @ p["query.weight"].T + x[:, t] @ p["query_x.weight"].T + p["query.bias"]
            alpha = softmax(np.einsum("bsh,bh->bs", history[:, :n], q) * scale)  # (B, n)
            h_in = np.einsum("bs,bsh->bh", alpha, history[:, :n])  # (B, H) h~^{t-1}
            c_in = np.einsum("bs,bsh->bh", alpha, cells[:, :n])  # (B, H) c~^{t-1}
            attention[:, t, :n], queries[:, t] = alpha, q
        u = np.concatenate([x[:, t], yp], axis=1)  # (B, F + O)
        h, c, step = lstm_step(
            u,
            h_in,
            c_in,
            p["controller.weight_ih"],
            p["controller.weight_hh"],
            p["controller.bias"],
        )  # (B, H)
        history[:, n], cells[:, n] = h, c
        outputs[:, t] = yp = output_step(h, none, p)  # (B, O)
        steps.append(step)
    fields = {
        "steps": tuple(steps), "hidden": history[:, S0:], "reads": np.zeros((B, T, 0), model.dtype),
        "history": history, "queries": queries, "attention": attention, "start": S0,
        "cells": cells, "prev": prev,
    }  # fmt: skip
    return outputs, (h, c, history, cells, yp), fields


def state_backward(model: Any, g: dict[str, np.ndarray], dhr: np.ndarray, cache: Any) -> np.ndarray:
    """BPTT of the lecture's form: adds every parameter's gradient to ``g`` (the output layer's
    for the given outputs already there) and returns dL/dx (B, T, F).

    Reverse step t: dL/dh^t gathers the output at t, its uses as an attended state and as a key
    by later steps, and the query of step t + 1; dL/dc^t its uses as an attended cell. The LSTM
    step gives dL/dh~ and dL/dc~, which go to every earlier state with its weight p_i, and
    through dp_i = h^i . dL/dh~ + c^i . dL/dc~ and the softmax to the scores, then to the keys
    h^i, the query and through it to h^{t-1} and x^t; dL/dy^{t-1} from the step's input goes
    back into the output layer at t - 1."""
    B, T, F = cache.x.shape
    H, O, p, S0 = model.hidden_size, model.output_size, model.params, cache.start
    scale = model.dtype.type(1.0 / np.sqrt(H))
    dHist = np.zeros_like(cache.history)  # (B, S0+T, H) dL/dh^i from later steps
    dCells = np.zeros_like(cache.cells)  # (B, S0+T, H) dL/dc^i from later steps
    dA = np.empty((T, B, 4 * H), dtype=model.dtype)
    dyfb = np.zeros((B, O), dtype=model.dtype)  # dL/dy^t from the input of step t + 1
    dx = np.empty((B, T, F), dtype=model.dtype)
    none = np.zeros((B, 0), dtype=model.dtype)
    for t in reversed(range(T)):
        dhr_t = dhr[:, t] + feedback_backward(g, p, dyfb, cache.hidden[:, t], none)  # (B, H)
        dh, dc = dhr_t + dHist[:, S0 + t], dCells[:, S0 + t]  # (B, H) total dL/dh^t, dL/dc^t
        du, dh_in, dc_in, dA[t] = lstm_backward_all(dh, dc, cache.steps[t], p)
        dx[:, t], dyfb = du[:, :F], du[:, F:]  # (B, F), (B, O)
        n = S0 + t
        if not n:
            continue
        alpha, q = cache.attention[:, t, :n], cache.queries[:, t]  # (B, n), (B, H)
        past, past_c = cache.history[:, :n], cache.cells[:, :n]  # (B, n, H)
        dHist[:, :n] += alpha[:, :, None] * dh_in[:, None, :]
        dCells[:, :n] += alpha[:, :, None] * dc_in[:, None, :]
        dalpha = np.einsum("bsh,bh->bs", past, dh_in) + np.einsum("bsh,bh->bs", past_c, dc_in)
        de = alpha * (dalpha - (alpha * dalpha).sum(axis=1, keepdims=True)) * scale  # (B, n)
        dHist[:, :n] += de[:, :, None] * q[:, None, :]
        dq = np.einsum("bs,bsh->bh", de, past)  # (B, H)
        g["query.weight"] += dq.T @ cache.prev[:, t]
        g["query.bias"] += dq.sum(axis=0)
        g["query_x.weight"] += dq.T @ cache.x[:, t]
        dx[:, t] += dq @ p["query_x.weight"]
        if t:  # h^{t-1} came from this sequence (else from the incoming state)
            dHist[:, n - 1] += dq @ p["query.weight"]
    lstm_weight_grads(g, dA, cache.steps)
    return dx
