r"""A recurrent net with an external memory read and written by content, or by content then
location (a small NTM/DNC), with hand-written backpropagation through time.

Each step t, with :math:`x_t` the input, :math:`r_{t-1}` the R read vectors of the previous step
concatenated, :math:`M_{t-1}` the memory (N cells of width W):

.. math::

    h_t, c_t &= \mathrm{LSTM}([x_t; r_{t-1}], h_{t-1}, c_{t-1}) \\
    (k^e, \hat\beta^e, v^e)_{e=1..H_w} &= W_w h_t + b_w, \qquad
    (k^r, \hat\beta^r)_{r=1..R} = W_r h_t + b_r \\
    w_w^e &= \mathrm{softmax}_j(\beta^e \cos(k^e, M^{e-1}_j)), \qquad
    M^e_j = (1 - w^e_{w,j}) M^{e-1}_j + w^e_{w,j} v^e \;\text{(overwrite)}
    \;\text{or}\; M^{e-1}_j + w^e_{w,j} v^e \;\text{(residual)} \\
    w_r^r &= \mathrm{softmax}_j(\beta^r \cos(k^r, M_{t,j})), \qquad
    r^r_t = \textstyle\sum_j w^r_{r,j} M_{t,j} \\
    y_t &= W_o [h_t; r_t] + b_o

with :math:`M^0 = M_{t-1}`, :math:`M_t = M^{H_w}` (the write heads apply in order, each
addressing the memory the previous one left), :math:`\beta = 1 + \mathrm{softplus}(\hat\beta)`
and cosine similarity (:mod:`pyplay.models.memory.heads`). Writes come before reads, so a
step can read what it has just written (as in the DNC). The write vector :math:`v` is the
issue's *w*; the write weights :math:`w_w` are its *p*.

Choices: the controller is an LSTM (PyTorch gate order, forget bias 1) over
:math:`[x_t; r_{t-1}]`; token inputs enter as one-hot vectors (the controller's input columns act
as the embedding); :math:`h_0 = c_0 = 0`, :math:`r_0 = 0`; the initial memory :math:`M_0` is a
learned parameter ``memory.init`` (N, W), drawn N(0, 1/W) so the cells differ from the start
(identical cells would get identical weights and stay identical forever); the raw key
strengths start at ``BETA_BIAS`` = 5 (:math:`\beta \approx 6`), so addressing is sharp from the
first step; location's gate, shift and sharpening biases start at 0.

With ``addressing="location"`` every head's content weights above are only the first of the
NTM's stages (:mod:`pyplay.models.memory.location`): each head also emits a gate, shift logits
and a sharpening exponent, and its weights come from interpolating with its own weights of the
previous step (all heads start on cell 0), a circular shift and sharpening; a head's address
vector grows from W + 1 to A = W + 6 numbers.

Parameters: ``controller.weight_ih`` (4H, F + RW), ``controller.weight_hh`` (4H, H),
``controller.bias`` (4H,), ``write.weight`` (H_w (A + W), H), ``write.bias``, ``read.weight``
(R A, H), ``read.bias``, ``head.weight`` (O, H + RW), ``head.bias``, ``memory.init``, with
A = W + 1 (content) or W + 6 (location); with ``key_function="linear"`` also
``write_key.weight`` and ``read_key.weight`` (W, W).
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
    init_params,
    lstm_backward_all,
    lstm_weight_grads,
)
from pyplay.models.memory.heads import (
    KEY_FUNCTIONS,
    UPDATES,
    LSTMStep,
    lstm_step,
    write,
    write_backward,
)
from pyplay.models.memory.location import (
    ADDRESSINGS,
    HeadAddress,
    address_size,
    head_address,
    head_address_backward,
)
from pyplay.nn import init

__all__ = ["BETA_BIAS", "MemoryCache", "MemoryNet", "MemoryState"]

BETA_BIAS = 5.0  # initial raw key strength of every head


@dataclass(frozen=True)
class MemoryState:
    """The recurrent state after a step: controller (h, c) (B, H), reads r (B, RW), memory M
    (B, N, W) and every head's last weights ``w`` (B, H_w + R, N), write heads first (what
    location addressing moves on from; None: all on cell 0). Pass it back to ``forward`` to
    continue a sequence."""

    h: np.ndarray
    c: np.ndarray
    r: np.ndarray
    M: np.ndarray
    w: np.ndarray | None = None

    def reorder(self, index: Any) -> MemoryState:
        """Keep the batch rows ``index`` (beam search)."""
        w = None if self.w is None else self.w[index]
        return MemoryState(self.h[index], self.c[index], self.r[index], self.M[index], w)


@dataclass(frozen=True)
class MemoryCache:
    """What :meth:`MemoryNet.backward` needs, and what the lesson shows.

    ``read_weights`` (B, T, R, N), ``write_weights`` (B, T, H_w, N), ``memory`` (B, T+1, N, W)
    (``memory[:, t]`` is :math:`M_t`, index 0 the initial memory), ``hidden`` (B, T, H).
    """

    x: np.ndarray  # (B, T, F) inputs as the controller reads them
    steps: tuple[LSTMStep, ...]
    reads: np.ndarray  # (B, T, RW) r_t
    writes: tuple[tuple[tuple[np.ndarray, HeadAddress, np.ndarray], ...], ...]  # [t][e] M, a, v
    read_addr: tuple[tuple[HeadAddress, ...], ...]  # [t][r]
    memory: np.ndarray  # (B, T+1, N, W)
    hidden: np.ndarray  # (B, T, H)
    read_weights: np.ndarray  # (B, T, R, N)
    write_weights: np.ndarray  # (B, T, H_w, N)
    initial: bool  # the state started from the parameters (M_0 = memory.init)


class MemoryNet(ControllerModel):
    """LSTM controller + content-addressed memory with R read and H_w write heads.

    Parameters
    ----------
    input_size : int
        Vocabulary size (token inputs, read as one-hot) or feature count (real inputs).
    output_size : int
        Classes (logits) or real outputs per step.
    hidden_size : int
        Controller LSTM width H.
    memory_size : int
        Number of cells N.
    memory_width : int
        Width W of a cell.
    read_heads, write_heads : int
        R >= 1 and H_w >= 1.
    update : {"overwrite", "residual"}
        The write rule (module docstring).
    addressing : {"content", "location"}
        How every head finds its cells: by content only, or by content then interpolation
        with its last weights, a shift and sharpening (:mod:`~pyplay.models.memory.location`).
    key_function : {"identity", "linear"}
        The lecture's key function K: a cell's key is M_j itself, or K^(w) M_j and K^(r) M_j
        for the write and the read heads (``write_key.weight``, ``read_key.weight`` (W, W),
        starting as the identity).
    input_kind : {"tokens", "real"}
    dtype : numpy.float32 or numpy.float64
    rng : numpy.random.Generator or int seed
    """

    _cache_type = MemoryCache

    def __init__(
        self,
        input_size: int,
        output_size: int,
        hidden_size: int = 32,
        memory_size: int = 16,
        memory_width: int = 16,
        read_heads: int = 1,
        write_heads: int = 1,
        update: str = "overwrite",
        addressing: str = "content",
        key_function: str = "identity",
        input_kind: str = "tokens",
        dtype: Any = np.float32,
        rng: np.random.Generator | int | None = 0,
    ) -> None:
        self._set_io(input_size, output_size, input_kind, dtype)
        H = self.hidden_size = check_int("hidden_size", hidden_size, min_value=1)
        N = self.memory_size = check_int("memory_size", memory_size, min_value=1)
        W = self.memory_width = check_int("memory_width", memory_width, min_value=1)
        R = self.read_heads = check_int("read_heads", read_heads, min_value=1, max_value=64)
        E = self.write_heads = check_int("write_heads", write_heads, min_value=1, max_value=64)
        self.update = check_choice("update", update, UPDATES)
        self.addressing = check_choice("addressing", addressing, ADDRESSINGS)
        self.key_function = check_choice("key_function", key_function, KEY_FUNCTIONS)
        A = address_size(W, self.addressing)
        gen = as_generator(rng)
        self.params = init_params(
            {
                "controller.weight_ih": (4 * H, self.input_size + R * W),
                "controller.weight_hh": (4 * H, H),
                "controller.bias": (4 * H,),
                "write.weight": (E * (A + W), H),
                "write.bias": (E * (A + W),),
                "read.weight": (R * A, H),
                "read.bias": (R * A,),
                "head.weight": (self.output_size, H + R * W),
                "head.bias": (self.output_size,),
            },
            self.dtype,
            gen,
        )
        # strengths start sharp, beta = 1 + softplus(5) ~ 6: diffuse weights blur every cell
        self.params["write.bias"].reshape(E, A + W)[:, W] = BETA_BIAS
        self.params["read.bias"].reshape(R, A)[:, W] = BETA_BIAS
        # location's gate, shifts and sharpening start neutral: g = 1/2, sigma uniform
        self.params["write.bias"].reshape(E, A + W)[:, W + 1 : A] = 0.0
        self.params["read.bias"].reshape(R, A)[:, W + 1 :] = 0.0
        self.params["memory.init"] = init.normal(
            gen, (N, W), self.dtype, "MemoryNet memory.init", divisor=np.sqrt(W)
        )
        if self.key_function == "linear":  # K^(w), K^(r) start as the identity
            for name in ("write_key.weight", "read_key.weight"):
                self.params[name] = np.eye(W, dtype=self.dtype)

    @classmethod
    def estimate_parameters(cls, config: Mapping[str, Any]) -> int:
        """An upper estimate of the parameter count ``config`` describes (without building)."""
        H, N = config_int(config, "hidden_size", 32), config_int(config, "memory_size", 16)
        W, R = config_int(config, "memory_width", 16), config_int(config, "read_heads", 1)
        Ew, n_in = config_int(config, "write_heads", 1), config_int(config, "input_size", 1)
        out = config_int(config, "output_size", 1)
        A = address_size(W, "location")  # the larger of the two
        controller = 4 * H * (n_in + R * W + H + 1)
        heads = (Ew * (A + W) + R * A) * (H + 1)
        return controller + heads + out * (H + R * W + 1) + N * W + 2 * W * W

    def initial_state(self, batch: int) -> MemoryState:
        """h = c = 0, r = 0, M = ``memory.init`` and every head on cell 0, for every row."""
        H, RW = self.hidden_size, self.read_heads * self.memory_width
        z = np.zeros((batch, H), dtype=self.dtype)
        M0 = np.broadcast_to(self.params["memory.init"], (batch, *self.params["memory.init"].shape))
        r = np.zeros((batch, RW), self.dtype)
        return MemoryState(z, z.copy(), r, M0.copy(), _first_cell(self, batch))

    # ------------------------------------------------------------------ maths
    def _steps(
        self, x: np.ndarray, state: MemoryState | None
    ) -> tuple[np.ndarray, MemoryState, MemoryCache]:
        """:meth:`forward` over ``x`` (B, T, F): outputs (B, T, output_size), the state after
        step T, and the cache (it holds the read and write weights and the memory)."""
        B, T, _ = x.shape
        p = self.params
        W, R, E = self.memory_width, self.read_heads, self.write_heads
        A, how = address_size(W, self.addressing), self.addressing
        initial = state is None
        s = self.initial_state(B) if state is None else _check_state(self, state, B)
        h, c, r, M = s.h, s.c, s.r, s.M
        wp = _first_cell(self, B) if s.w is None else s.w  # (B, E + R, N) p^{t-1}
        memory = np.empty((B, T + 1, *M.shape[1:]), dtype=self.dtype)  # (B, T+1, N, W)
        memory[:, 0] = M
        hidden = np.empty((B, T, self.hidden_size), dtype=self.dtype)  # (B, T, H)
        reads = np.empty((B, T, R * W), dtype=self.dtype)  # (B, T, RW)
        steps, writes, read_addr = [], [], []
        for t in range(T):
            u = np.concatenate([x[:, t], r], axis=1)  # (B, F + RW)
            h, c, step = lstm_step(
                u, h, c, p["controller.weight_ih"], p["controller.weight_hh"], p["controller.bias"]
            )  # (B, H)
            zw = (h @ p["write.weight"].T + p["write.bias"]).reshape(B, E, A + W)  # (B, E, A+W)
            heads_t = []
            for e in range(E):
                a = head_address(self._keys(M, "write"), zw[:, e, :A], wp[:, e], how)
                v = zw[:, e, A:]  # (B, W)
                heads_t.append((M, a, v))
                M = write(M, a.w, v, self.update)  # (B, N, W)
            zr = (h @ p["read.weight"].T + p["read.bias"]).reshape(B, R, A)  # (B, R, A)
            Mk = self._keys(M, "read")  # (B, N, W) k_j = K^(r)(M_j)
            addr_t = tuple(head_address(Mk, zr[:, k], wp[:, E + k], how) for k in range(R))
            wp = np.stack([hw[1].w for hw in heads_t] + [a.w for a in addr_t], axis=1)
            r = np.concatenate([np.einsum("bn,bnw->bw", a.w, M) for a in addr_t], axis=1)  # (B, RW)
            memory[:, t + 1], hidden[:, t], reads[:, t] = M, h, r
            steps.append(step)
            writes.append(tuple(heads_t))
            read_addr.append(addr_t)
        y = (
            np.concatenate([hidden, reads], axis=2) @ p["head.weight"].T + p["head.bias"]
        )  # (B, T, O)
        cache = MemoryCache(
            x, tuple(steps), reads, tuple(writes), tuple(read_addr), memory, hidden,
            np.stack([np.stack([a.w for a in ra], axis=1) for ra in read_addr], axis=1),
            np.stack([np.stack([hw[1].w for hw in wr], axis=1) for wr in writes], axis=1),
            initial,
        )  # fmt: skip
        return y, MemoryState(h, c, r, M, wp), cache

    def gradients(
        self, dy: Any, cache: MemoryCache, dstate: Any = None
    ) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """Backpropagation through time through the controller and the memory: the parameter
        gradients and dL/dx (B, T, F) (for token inputs, the gradient of the one-hot vectors).

        Reverse step t: the output gives dL/dh_t and dL/dr_t; each read head sends its part of
        dL/dr_t to its weights (dL/dw_j = dL/dr . M_j) and to the memory (w_j dL/dr), the weights
        through the softmax and the cosine to the key, the strength and the memory; the write
        heads, in reverse order, send dL/dM' through the update rule to M, w and v; the keys,
        strengths and write vectors go back through their linear maps to h_t; the LSTM step
        sends dL/d[x_t; r_{t-1}] to the input and to the previous reads. With location
        addressing a head's weights also reach its weights at step t + 1 (interpolation):
        ``dwp`` carries dL/dp^t back from there."""
        g, dhr = self._output_backward(dy, cache, dstate)  # dhr: (B, T, H + RW)
        p = self.params
        B, T, F = cache.x.shape
        H, W, R, E = self.hidden_size, self.memory_width, self.read_heads, self.write_heads
        A = address_size(W, self.addressing)
        dwp = np.zeros((B, E + R, self.memory_size), dtype=self.dtype)  # dL/dp^t from t + 1
        dA = np.empty((T, B, 4 * H), dtype=self.dtype)  # controller pre-activation gradients
        dh = np.zeros((B, H), dtype=self.dtype)
        dc = np.zeros((B, H), dtype=self.dtype)
        dM = np.zeros((B, self.memory_size, W), dtype=self.dtype)
        dr = np.zeros((B, R * W), dtype=self.dtype)  # dL/dr_t from step t + 1
        dx = np.empty((B, T, F), dtype=self.dtype)
        for t in reversed(range(T)):
            dh = dh + dhr[:, t, :H]  # (B, H)
            dr = dr + dhr[:, t, H:]  # (B, RW)
            hk = cache.hidden[:, t]  # (B, H)
            M = cache.memory[:, t + 1]  # (B, N, W) the memory the reads saw, M_t
            dzr = np.empty((B, R, A), dtype=self.dtype)
            dw_prev = np.zeros_like(dwp)  # (B, E + R, N) dL/dp^{t-1}
            for k, a in enumerate(cache.read_addr[t]):
                drk = dr[:, k * W : (k + 1) * W]  # (B, W)
                dM += a.w[:, :, None] * drk[:, None, :]
                dw = np.einsum("bnw,bw->bn", M, drk) + dwp[:, E + k]  # (B, N)
                dMa, dzr[:, k], dwk = head_address_backward(dw, self._keys(M, "read"), a)
                dM += self._keys_backward(dMa, M, "read", g)
                if dwk is not None:
                    dw_prev[:, E + k] = dwk
            g["read.weight"] += dzr.reshape(B, -1).T @ hk
            g["read.bias"] += dzr.reshape(B, -1).sum(axis=0)
            dh = dh + dzr.reshape(B, -1) @ p["read.weight"]  # (B, H)
            dzw = np.empty((B, E, A + W), dtype=self.dtype)
            for e in reversed(range(E)):
                M_prev, a, v = cache.writes[t][e]
                dM, dw, dzw[:, e, A:] = write_backward(dM, M_prev, a.w, v, self.update)
                Mk = self._keys(M_prev, "write")  # (B, N, W)
                dMa, dzw[:, e, :A], dwk = head_address_backward(dw + dwp[:, e], Mk, a)
                dM = dM + self._keys_backward(dMa, M_prev, "write", g)  # (B, N, W) dL/dM^{e-1}
                if dwk is not None:
                    dw_prev[:, e] = dwk
            dwp = dw_prev
            g["write.weight"] += dzw.reshape(B, -1).T @ hk
            g["write.bias"] += dzw.reshape(B, -1).sum(axis=0)
            dh = dh + dzw.reshape(B, -1) @ p["write.weight"]  # (B, H)
            du, dh, dc, dA[t] = lstm_backward_all(dh, dc, cache.steps[t], p)
            dx[:, t], dr = du[:, :F], du[:, F:]  # (B, F), (B, RW)
        lstm_weight_grads(g, dA, cache.steps)
        if cache.initial:
            g["memory.init"] = dM.sum(axis=0)  # (N, W)
        return {k: g[k] for k in p}, dx

    def _keys(self, M: np.ndarray, which: str) -> np.ndarray:
        """The key of every cell, k_j = K(M_j) (B, N, W): M_j itself, or K^(w) M_j / K^(r) M_j."""
        if self.key_function == "identity":
            return M
        return M @ self.params[f"{which}_key.weight"].T  # (B, N, W)

    def _keys_backward(
        self, dK: np.ndarray, M: np.ndarray, which: str, g: dict[str, np.ndarray]
    ) -> np.ndarray:
        """:meth:`_keys` backwards: adds dL/dK^(which) to ``g`` and returns dL/dM (B, N, W)."""
        if self.key_function == "identity":
            return dK
        g[f"{which}_key.weight"] += np.einsum("bnv,bnw->vw", dK, M)  # (W, W)
        return dK @ self.params[f"{which}_key.weight"]  # (B, N, W)


def _check_state(model: MemoryNet, state: Any, B: int) -> MemoryState:
    if not isinstance(state, MemoryState):
        raise TypeError(f"state must be a MemoryState, got {type(state).__name__}")
    N, W, H = model.memory_size, model.memory_width, model.hidden_size
    expected = {"h": (B, H), "c": (B, H), "r": (B, model.read_heads * W), "M": (B, N, W)}
    for name, shape in expected.items():
        got = getattr(state, name).shape
        if got != shape:
            raise ValueError(f"state.{name} must have shape {shape}, got {got}")
    heads = (B, model.write_heads + model.read_heads, N)
    if state.w is not None and state.w.shape != heads:
        raise ValueError(f"state.w must have shape {heads} or be None, got {state.w.shape}")
    return state


def _first_cell(model: MemoryNet, B: int) -> np.ndarray:
    """Every head's weights all on cell 0 (B, H_w + R, N): where location addressing starts."""
    w = np.zeros((B, model.write_heads + model.read_heads, model.memory_size), model.dtype)
    w[:, :, 0] = 1.0
    return w
