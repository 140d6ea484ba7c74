r"""Plain reference steps of the LSTM and the GRU: one time step, in the maths' own names.

The fast kernels (:class:`~pyplay.nn.lstm.LSTMCell`, :class:`~pyplay.nn.gru.GRUCell`) reorder
the gate rows, fold activation scales into the weights, compute every step's factors at once
and write in place. The functions here do none of that: one step, PyTorch's layout and gate
order (LSTM ``i, f, g, o``; GRU ``r, z, n``), one line per equation. They are what the kernels
are tested against (``tests/nn/test_recurrent_reference.py``, float64), the way nanoGPT keeps its
plain attention beside the fused one; read them first.

Shapes: ``x`` (B, F), ``h``, ``c`` (B, H), ``weight_ih`` (G, F), ``weight_hh`` (G, H),
``bias_ih``, ``bias_hh`` (G,), ``G = 4H`` (LSTM) or ``3H`` (GRU); ``W_ii`` is the ``i`` block of
``weight_ih``, and so on. Gradients come back under torch's parameter names.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

__all__ = [
    "PEEPHOLES",
    "StepGrads",
    "gru_step",
    "gru_step_backward",
    "lstm_step",
    "lstm_step_backward",
]

PEEPHOLES = ("weight_ci", "weight_cf", "weight_co")


def _sigmoid(a: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-a))


def _gate_blocks(a: np.ndarray, forget_gate: bool) -> tuple[Any, Any, Any, Any]:
    """The row blocks of ``a`` as ``(i, g, o, f)``, ``f`` None without a forget gate."""
    if forget_gate:
        i, f, g, o = np.split(a, 4)  # torch's order i, f, g, o
        return i, g, o, f
    i, g, o = np.split(a, 3)  # the 1997 cell: i, g, o
    return i, g, o, None


class StepGrads(NamedTuple):
    """Gradients of one step: inputs, previous state and parameters (torch's names)."""

    dx: np.ndarray  # (B, F)
    dh: np.ndarray  # (B, H) dL/dh_{t-1}
    dc: np.ndarray | None  # (B, H) dL/dc_{t-1}, LSTM only
    grads: dict[str, np.ndarray]  # weight_ih, weight_hh, bias_ih, bias_hh [, peepholes]


# ----------------------------------------------------------------------------- LSTM
def lstm_step(
    x: np.ndarray,
    h: np.ndarray,
    c: np.ndarray,
    weight_ih: np.ndarray,
    weight_hh: np.ndarray,
    bias_ih: np.ndarray,
    bias_hh: np.ndarray,
    peepholes: tuple[np.ndarray, np.ndarray | None, np.ndarray] | None = None,
    forget_gate: bool = True,
) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    r"""One LSTM step, gates in torch's order ``i, f, g, o`` (``i, g, o`` without ``f``).

    .. math::

        \begin{aligned}
        i_t &= \sigma(W_{ii} x_t + b_{ii} + W_{hi} h_{t-1} + b_{hi} \;[+\, w_{ci} \odot c_{t-1}])\\
        f_t &= \sigma(W_{if} x_t + b_{if} + W_{hf} h_{t-1} + b_{hf} \;[+\, w_{cf} \odot c_{t-1}])\\
        g_t &= \tanh(W_{ig} x_t + b_{ig} + W_{hg} h_{t-1} + b_{hg}) \\
        c_t &= f_t \odot c_{t-1} + i_t \odot g_t \\
        o_t &= \sigma(W_{io} x_t + b_{io} + W_{ho} h_{t-1} + b_{ho} \;[+\, w_{co} \odot c_t]) \\
        h_t &= o_t \odot \tanh(c_t)
        \end{aligned}

    Without a forget gate (Hochreiter & Schmidhuber 1997; ``LSTM(forget_gate=False)``) there
    is no :math:`f_t` and :math:`c_t = c_{t-1} + i_t \odot g_t`: :math:`f_t = 1`.

    Parameters
    ----------
    x : array (B, F)
    h, c : arrays (B, H)
        :math:`h_{t-1}`, :math:`c_{t-1}`.
    weight_ih, weight_hh, bias_ih, bias_hh : arrays (4H, F), (4H, H), (4H,), (4H,)
        ``3H`` rows (gates ``i, g, o``) without a forget gate.
    peepholes : (w_ci, w_cf, w_co), arrays (H,), optional
        The bracketed diagonal peepholes (``LSTM(peephole=True)``); ``w_cf`` None without a
        forget gate.
    forget_gate : bool
        False: the 1997 cell, :math:`f_t = 1`.

    Returns
    -------
    h_t, c_t : arrays (B, H)
    cache : dict
        The step's inputs and gates, for :func:`lstm_step_backward`.
    """
    W_i, W_g, W_o, W_f = _gate_blocks(weight_ih, forget_gate)  # (H, F) each, W_f None if no f
    V_i, V_g, V_o, V_f = _gate_blocks(weight_hh, forget_gate)  # (H, H) each
    b_i, b_g, b_o, b_f = _gate_blocks(bias_ih + bias_hh, forget_gate)  # (H,) each
    w_ci, w_cf, w_co = (0.0, 0.0, 0.0) if peepholes is None else peepholes
    i = _sigmoid(x @ W_i.T + h @ V_i.T + b_i + w_ci * c)  # (B, H)
    if forget_gate:
        f = _sigmoid(x @ W_f.T + h @ V_f.T + b_f + w_cf * c)  # (B, H)
    else:
        f = np.ones_like(c)  # the 1997 cell: c_t = c_{t-1} + i g
    g = np.tanh(x @ W_g.T + h @ V_g.T + b_g)  # (B, H)
    c_t = f * c + i * g
    o = _sigmoid(x @ W_o.T + h @ V_o.T + b_o + w_co * c_t)  # (B, H)
    h_t = o * np.tanh(c_t)
    cache = {
        "x": x, "h": h, "c": c, "i": i, "f": f, "g": g, "o": o, "c_t": c_t,
        "weight_ih": weight_ih, "weight_hh": weight_hh, "peepholes": peepholes,
        "forget_gate": forget_gate,
    }  # fmt: skip
    return h_t, c_t, cache


def lstm_step_backward(dh_t: np.ndarray, dc_t: np.ndarray, cache: dict[str, Any]) -> StepGrads:
    r"""The gradients of one LSTM step from :math:`\delta h_t` and :math:`\delta c_t` (B, H).

    With :math:`\delta a_\ast` the gradient of a gate's pre-activation and
    :math:`\delta c_t` the gradient reaching :math:`c_t` from the next step:

    .. math::

        \begin{aligned}
        \delta a_o &= \delta h_t \odot \tanh(c_t) \odot o_t (1 - o_t) \\
        \bar\delta c_t &= \delta c_t + \delta h_t \odot o_t (1 - \tanh^2 c_t)
            \;[+\, \delta a_o \odot w_{co}] \\
        \delta a_i &= \bar\delta c_t \odot g_t \odot i_t (1 - i_t), \quad
        \delta a_f = \bar\delta c_t \odot c_{t-1} \odot f_t (1 - f_t), \quad
        \delta a_g = \bar\delta c_t \odot i_t (1 - g_t^2) \\
        \delta c_{t-1} &= \bar\delta c_t \odot f_t
            \;[+\, \delta a_i \odot w_{ci} + \delta a_f \odot w_{cf}] \\
        \delta a &= [\delta a_i, \delta a_f, \delta a_g, \delta a_o], \quad
        \delta x_t = \delta a\, W_{ih}, \quad \delta h_{t-1} = \delta a\, W_{hh}, \\
        \delta W_{ih} &= \delta a^\top x_t, \quad \delta W_{hh} = \delta a^\top h_{t-1}, \quad
        \delta b_{ih} = \delta b_{hh} = \textstyle\sum_b \delta a
        \end{aligned}

    and for the peepholes :math:`\delta w_{ci} = \sum_b \delta a_i \odot c_{t-1}`,
    :math:`\delta w_{cf} = \sum_b \delta a_f \odot c_{t-1}`,
    :math:`\delta w_{co} = \sum_b \delta a_o \odot c_t`. Without a forget gate
    :math:`f_t = 1` and :math:`\delta a_f` is left out of :math:`\delta a`.
    """
    x, h, c, c_t = cache["x"], cache["h"], cache["c"], cache["c_t"]
    i, f, g, o, peepholes = cache["i"], cache["f"], cache["g"], cache["o"], cache["peepholes"]
    w_ci, w_cf, w_co = (0.0, 0.0, 0.0) if peepholes is None else peepholes
    forget_gate = cache["forget_gate"]
    w_cf = 0.0 if w_cf is None else w_cf
    tanh_c = np.tanh(c_t)
    da_o = dh_t * tanh_c * o * (1.0 - o)
    dc_bar = dc_t + dh_t * o * (1.0 - tanh_c**2) + da_o * w_co
    da_i = dc_bar * g * i * (1.0 - i)
    da_f = dc_bar * c * f * (1.0 - f)
    da_g = dc_bar * i * (1.0 - g**2)
    if not forget_gate:
        da_f = np.zeros_like(dc_bar)  # no gate: f = 1, nothing to learn, nothing flows
    dc = dc_bar * f + da_i * w_ci + da_f * w_cf
    blocks = [da_i, da_f, da_g, da_o] if forget_gate else [da_i, da_g, da_o]
    da = np.concatenate(blocks, axis=1)  # (B, 4H), or (B, 3H) without a forget gate
    db = da.sum(axis=0)  # (4H,)
    grads = {"weight_ih": da.T @ x, "weight_hh": da.T @ h, "bias_ih": db, "bias_hh": db.copy()}
    if peepholes is not None:
        for name, value in zip(PEEPHOLES, (da_i * c, da_f * c, da_o * c_t), strict=True):
            if forget_gate or name != "weight_cf":
                grads[name] = value.sum(axis=0)  # (H,)
    return StepGrads(da @ cache["weight_ih"], da @ cache["weight_hh"], dc, grads)


# ----------------------------------------------------------------------------- GRU
def gru_step(
    x: np.ndarray,
    h: np.ndarray,
    weight_ih: np.ndarray,
    weight_hh: np.ndarray,
    bias_ih: np.ndarray,
    bias_hh: np.ndarray,
    reset_after: bool = True,
) -> tuple[np.ndarray, dict[str, Any]]:
    r"""One GRU step, PyTorch's variant (the reset gate multiplies :math:`W_{hn} h + b_{hn}`).

    .. math::

        \begin{aligned}
        r_t &= \sigma(W_{ir} x_t + b_{ir} + W_{hr} h_{t-1} + b_{hr}) \\
        z_t &= \sigma(W_{iz} x_t + b_{iz} + W_{hz} h_{t-1} + b_{hz}) \\
        n_t &= \tanh\big(W_{in} x_t + b_{in} + r_t \odot (W_{hn} h_{t-1} + b_{hn})\big) \\
        h_t &= (1 - z_t) \odot n_t + z_t \odot h_{t-1}
        \end{aligned}

    With ``reset_after=False`` the reset gate acts *before* :math:`W_{hn}` (Cho et al. 2014's
    first form, Keras's ``reset_after=False``, the lecture's GRU):
    :math:`n_t = \tanh(W_{in} x_t + b_{in} + W_{hn} (r_t \odot h_{t-1}) + b_{hn})`.

    Parameters
    ----------
    x : array (B, F)
    h : array (B, H)
        :math:`h_{t-1}`.
    weight_ih, weight_hh, bias_ih, bias_hh : arrays (3H, F), (3H, H), (3H,), (3H,)

    Returns
    -------
    h_t : array (B, H)
    cache : dict
        The step's inputs and gates, for :func:`gru_step_backward`.
    """
    W_ir, W_iz, W_in = np.split(weight_ih, 3)  # (H, F) each
    W_hr, W_hz, W_hn = np.split(weight_hh, 3)  # (H, H) each
    b_ir, b_iz, b_in = np.split(bias_ih, 3)  # (H,) each
    b_hr, b_hz, b_hn = np.split(bias_hh, 3)  # (H,) each
    r = _sigmoid(x @ W_ir.T + b_ir + h @ W_hr.T + b_hr)  # (B, H)
    z = _sigmoid(x @ W_iz.T + b_iz + h @ W_hz.T + b_hz)  # (B, H)
    if reset_after:
        u = h @ W_hn.T + b_hn  # (B, H) the reset gate's operand
        n = np.tanh(x @ W_in.T + b_in + r * u)  # (B, H)
    else:
        u = r * h  # (B, H) the reset delayed state W_hn reads
        n = np.tanh(x @ W_in.T + b_in + u @ W_hn.T + b_hn)  # (B, H)
    h_t = (1.0 - z) * n + z * h
    cache = {
        "x": x, "h": h, "r": r, "z": z, "n": n, "u": u, "reset_after": reset_after,
        "weight_ih": weight_ih, "weight_hh": weight_hh,
    }  # fmt: skip
    return h_t, cache


def gru_step_backward(dh_t: np.ndarray, cache: dict[str, Any]) -> StepGrads:
    r"""The gradients of one GRU step from :math:`\delta h_t` (B, H).

    With :math:`u_t = W_{hn} h_{t-1} + b_{hn}` and :math:`\delta a_\ast` the gradient of a
    pre-activation:

    .. math::

        \begin{aligned}
        \delta a_n &= \delta h_t \odot (1 - z_t) (1 - n_t^2), \qquad
        \delta a_z = \delta h_t \odot (h_{t-1} - n_t)\, z_t (1 - z_t) \\
        \delta a_r &= \delta a_n \odot u_t\, r_t (1 - r_t), \qquad
        \delta u_t = \delta a_n \odot r_t \\
        \delta x_t &= [\delta a_r, \delta a_z, \delta a_n]\, W_{ih}, \qquad
        \delta h_{t-1} = \delta h_t \odot z_t + [\delta a_r, \delta a_z, \delta u_t]\, W_{hh}
        \end{aligned}

    and :math:`\delta W_{ih} = [\delta a_r, \delta a_z, \delta a_n]^\top x_t`,
    :math:`\delta W_{hh} = [\delta a_r, \delta a_z, \delta u_t]^\top h_{t-1}`, the biases the
    sums of the same rows over the batch.

    With ``reset_after=False`` (:math:`u_t = r_t \odot h_{t-1}`, read by :math:`W_{hn}`):
    :math:`\delta u_t = \delta a_n W_{hn}`, :math:`\delta a_r = \delta u_t \odot h_{t-1}\,
    r_t (1 - r_t)`, :math:`\delta W_{hn} = \delta a_n^\top u_t`, :math:`\delta b_{hn} =
    \sum \delta a_n`, and :math:`\delta h_{t-1} = \delta h_t \odot z_t + \delta u_t \odot r_t
    + [\delta a_r, \delta a_z] [W_{hr}; W_{hz}]`.
    """
    x, h, r, z, n, u = (cache[k] for k in ("x", "h", "r", "z", "n", "u"))
    da_n = dh_t * (1.0 - z) * (1.0 - n**2)
    da_z = dh_t * (h - n) * z * (1.0 - z)
    if not cache["reset_after"]:
        W_h = cache["weight_hh"]  # (3H, H)
        H = W_h.shape[1]
        du = da_n @ W_h[2 * H :]  # (B, H)
        da_r = du * h * r * (1.0 - r)
        da_i = np.concatenate([da_r, da_z, da_n], axis=1)  # (B, 3H) both sides
        grads = {
            "weight_ih": da_i.T @ x,
            "weight_hh": np.concatenate([da_i[:, : 2 * H].T @ h, da_n.T @ u]),
            "bias_ih": da_i.sum(axis=0),
            "bias_hh": da_i.sum(axis=0),
        }
        dh = dh_t * z + du * r + da_i[:, : 2 * H] @ W_h[: 2 * H]
        return StepGrads(da_i @ cache["weight_ih"], dh, None, grads)
    da_r = da_n * u * r * (1.0 - r)
    du = da_n * r
    da_i = np.concatenate([da_r, da_z, da_n], axis=1)  # (B, 3H) input side
    da_h = np.concatenate([da_r, da_z, du], axis=1)  # (B, 3H) recurrent side
    grads = {
        "weight_ih": da_i.T @ x,
        "weight_hh": da_h.T @ h,
        "bias_ih": da_i.sum(axis=0),
        "bias_hh": da_h.sum(axis=0),
    }
    dh = dh_t * z + da_h @ cache["weight_hh"]
    return StepGrads(da_i @ cache["weight_ih"], dh, None, grads)
