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
step can read what it has just written (as in the DNC). :math:`v` is the lecture's *w*.

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

Parameters: ``controller.weight_ih`` (4H, F + RW; F + O + RW with feedback),
``controller.weight_hh`` (4H, H), ``controller.bias`` (4H,), ``write.weight`` (H_w (A + W), H),
``write.bias``, ``read.weight`` (R A, H), ``read.bias``, ``head.weight`` (O, H + RW),
``head.bias``, ``memory.init``, with A = W + 1 (content) or W + 6 (location); with
``key_function="linear"`` also ``write_key.weight`` and ``read_key.weight`` (W, W). Options:
``feedback``, the lecture's
:math:`s^t = h(x^t, s^{t-1}, y^{t-1}, r^{t-1})` (:mod:`~pyplay.models.memory.controller`), and
``hard``, heads that draw one cell (:mod:`~pyplay.models.memory.hard`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from pyplay._checks import as_generator, check_choice, check_int
from pyplay.models.contract import Backward, config_int
from pyplay.models.memory._common import (
    ControllerModel,
    check_inputs,
    check_lengths_arg,
    init_params,
    lstm_backward_all,
    lstm_weight_grads,
)
from pyplay.models.memory.controller import (
    FEEDBACKS,
    feedback_backward,
    feedback_size,
    output_step,
    previous_output,
)
from pyplay.models.memory.hard import HARD, choices, head_weights, onehot
from pyplay.models.memory.heads import (
    KEY_FUNCTIONS,
    UPDATES,
    cell_keys,
    cell_keys_backward,
    lstm_step,
    write,
    write_backward,
)
from pyplay.models.memory.location import (
    ADDRESSINGS,
    address_size,
    head_address,
    head_address_backward,
)
from pyplay.models.memory.memstate import MemoryCache, MemoryState, check_state, first_cell
from pyplay.models.score_function import advantage, probability_grad
from pyplay.nn import init

__all__ = ["BETA_BIAS", "MemoryCache", "MemoryNet", "MemoryState"]

BETA_BIAS = 5.0  # initial raw key strength of every head


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
    hard : {"none", "read", "write", "both"}
        Which heads take one drawn cell (:mod:`~pyplay.models.memory.hard`): the lecture's hard
        addressing and hard updates. Their gradient needs each row's loss: :meth:`backward`'s
        ``losses`` and ``baseline`` (given by :class:`pyplay.objectives.SequenceObjective`).
    feedback : {"none", "output"}
        The controller reads [x_t; r_{t-1}], or also the previous output y_{t-1}, the lecture's
        form (:mod:`~pyplay.models.memory.controller`).
    input_kind : {"tokens", "real"}
    dtype : numpy.float32 or numpy.float64
    rng : numpy.random.Generator or int seed
        The weights, then (a Generator spawned from it) the hard heads' draws.
    """

    _cache_type = MemoryCache
    generator: np.random.Generator | None

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
        hard: str = "none",
        feedback: str = "none",
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
        self.hard = check_choice("hard", hard, HARD)
        self.feedback = check_choice("feedback", feedback, FEEDBACKS)
        Fy = feedback_size(self.feedback, self.output_size)
        A = address_size(W, self.addressing)
        gen = as_generator(rng)
        self.params = init_params(
            {
                "controller.weight_ih": (4 * H, self.input_size + Fy + R * W),
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
        self.generator = gen.spawn(1)[0] if self.hard != "none" else None

    @classmethod
    def estimate_parameters(cls, config: Mapping[str, Any]) -> int:
        """An upper estimate of the parameter count ``config`` describes (without building)."""
        H, N = config_int(config, "hidden_size", 32), config_int(config, "memory_size", 16)
        W, R = config_int(config, "memory_width", 16), config_int(config, "read_heads", 1)
        Ew, out = config_int(config, "write_heads", 1), config_int(config, "output_size", 1)
        n_in = config_int(config, "input_size", 1)
        A = address_size(W, "location")  # the larger of the two
        controller = 4 * H * (n_in + out + R * W + H + 1)  # out: the fed-back y^{t-1}
        heads = (Ew * (A + W) + R * A) * (H + 1)
        return controller + heads + out * (H + R * W + 1) + N * W + 2 * W * W

    def initial_state(self, batch: int) -> MemoryState:
        """h = c = 0, r = 0, M = ``memory.init`` and every head on cell 0, for every row."""
        H, RW = self.hidden_size, self.read_heads * self.memory_width
        z = np.zeros((batch, H), dtype=self.dtype)
        M0 = np.broadcast_to(self.params["memory.init"], (batch, *self.params["memory.init"].shape))
        r = np.zeros((batch, RW), self.dtype)
        return MemoryState(z, z.copy(), r, M0.copy(), first_cell(self, batch))

    def forward(
        self,
        inputs: Any,
        state: MemoryState | None = None,
        lengths: Any = None,
        *,
        record: bool = False,
        training: bool = True,
        read_index: Any = None,
        write_index: Any = None,
    ) -> tuple[np.ndarray, MemoryState, MemoryCache]:
        """Outputs (B, T, output_size), the state after step T, and the cache.

        ``lengths`` (B,) is checked but changes nothing: the net is causal, so outputs at valid
        steps do not depend on padding after them (the returned state has read the padding).
        ``record`` and ``training`` are accepted for the protocol of the sequence models; the
        cache always holds the read and write weights and the memory. Hard heads draw their
        cells (``training``), take the most likely ones (not ``training``), or the given
        ``read_index`` (B, T, R) and ``write_index`` (B, T, H_w) (to enumerate the draws).
        """
        x = check_inputs(self, inputs)  # (B, T, F)
        B, T, _ = x.shape
        check_lengths_arg(lengths, B, T)
        p = self.params
        W, R, E = self.memory_width, self.read_heads, self.write_heads
        A, how, initial = address_size(W, self.addressing), self.addressing, state is None
        s = self.initial_state(B) if state is None else check_state(self, state, B)
        h, c, r, M = s.h, s.c, s.r, s.M
        wp = first_cell(self, B) if s.w is None else s.w  # (B, E + R, N) p^{t-1}
        N, O, fb = self.memory_size, self.output_size, self.feedback == "output"
        yp = previous_output(s.y, B, O, self.dtype)  # (B, O) y^{t-1}
        outputs = np.empty((B, T, O), dtype=self.dtype)  # (B, T, O) built step by step
        ri, read_index = choices("read", read_index, self.hard, (B, T, R), N)  # given, taken
        wi, write_index = choices("write", write_index, self.hard, (B, T, E), N)
        memory = np.empty((B, T + 1, *M.shape[1:]), dtype=self.dtype)  # (B, T+1, N, W)
        memory[:, 0] = M
        hidden = np.empty((B, T, self.hidden_size), dtype=self.dtype)  # (B, T, H)
        reads = np.empty((B, T, R * W), dtype=self.dtype)  # (B, T, RW)
        steps, writes, read_addr = [], [], []
        for t in range(T):
            u = np.concatenate([x[:, t], yp, r] if fb else [x[:, t], r], axis=1)  # (B, F' + RW)
            h, c, step = lstm_step(
                u, h, c, p["controller.weight_ih"], p["controller.weight_hh"], p["controller.bias"]
            )  # (B, H)
            zw = (h @ p["write.weight"].T + p["write.bias"]).reshape(B, E, A + W)  # (B, E, A+W)
            heads_t = []
            for e in range(E):
                Mk = cell_keys(M, p, self.key_function, "write")  # (B, N, W) K^(w)(M_j)
                a = head_address(Mk, zw[:, e, :A], wp[:, e], how)
                v = zw[:, e, A:]  # (B, W)
                heads_t.append((M, a, v))
                pw = head_weights(a.w, write_index, wi, (t, e), training, self.generator)
                M = write(M, pw, v, self.update)  # (B, N, W)
            zr = (h @ p["read.weight"].T + p["read.bias"]).reshape(B, R, A)  # (B, R, A)
            Mk = cell_keys(M, p, self.key_function, "read")  # (B, N, W) k_j = K^(r)(M_j)
            addr_t = tuple(head_address(Mk, zr[:, k], wp[:, E + k], how) for k in range(R))
            wp = np.stack([hw[1].w for hw in heads_t] + [a.w for a in addr_t], axis=1)
            used = [
                head_weights(a.w, read_index, ri, (t, k), training, self.generator)
                for k, a in enumerate(addr_t)
            ]  # (B, N) each: where the heads read, p or e_j
            r = np.concatenate([np.einsum("bn,bnw->bw", w, M) for w in used], axis=1)  # (B, RW)
            memory[:, t + 1], hidden[:, t], reads[:, t] = M, h, r
            if fb:
                outputs[:, t] = yp = output_step(h, r, p)  # (B, O)
            steps.append(step)
            writes.append(tuple(heads_t))
            read_addr.append(addr_t)
        if not fb:
            outputs = np.concatenate([hidden, reads], axis=2) @ p["head.weight"].T + p["head.bias"]
        cache = MemoryCache(
            x, tuple(steps), reads, tuple(writes), tuple(read_addr), memory, hidden,
            np.stack([np.stack([a.w for a in ra], axis=1) for ra in read_addr], axis=1),
            np.stack([np.stack([hw[1].w for hw in wr], axis=1) for wr in writes], axis=1),
            initial, read_index, write_index,
        )  # fmt: skip
        return outputs, MemoryState(h, c, r, M, wp, yp if fb else None), cache

    def backward(
        self, dy: Any, cache: Any, dstate: Any = None, *, losses: Any = None, baseline: float = 0.0
    ) -> Backward:
        """Gradients of every parameter and dL/dx as ``dinputs`` (:meth:`gradients`)."""
        grads, dx = self.gradients(dy, cache, dstate, losses=losses, baseline=baseline)
        return Backward(grads, dinputs=dx)

    def gradients(
        self,
        dy: Any,
        cache: MemoryCache,
        dstate: Any = None,
        *,
        losses: Any = None,
        baseline: float = 0.0,
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
        ``dwp`` carries dL/dp^t back from there. A hard head's drawn cell j sends
        (L_b - b)/B d log p_j / dp (:func:`~pyplay.models.score_function.probability_grad`,
        ``losses`` (B,) each row's loss, the batch loss their mean, ``baseline`` b) to its
        weights in place of the gradient through the blend; with feedback, ``dyfb`` carries
        dL/dy_t back from the input of step t + 1."""
        g, dhr = self._output_backward(dy, cache, dstate)  # dhr: (B, T, H + RW)
        p = self.params
        B, T, F = cache.x.shape
        H, W, R, E = self.hidden_size, self.memory_width, self.read_heads, self.write_heads
        A, N, O = address_size(W, self.addressing), self.memory_size, self.output_size
        hard = cache.read_index is not None or cache.write_index is not None
        adv = advantage(losses, baseline, B, self.dtype) if hard else np.zeros(B)  # (B,)
        fb, rows = self.feedback == "output", np.arange(B)
        dyfb = np.zeros((B, O), dtype=self.dtype)  # dL/dy_t from the input of step t + 1
        dwp = np.zeros((B, E + R, self.memory_size), dtype=self.dtype)  # dL/dp^t from t + 1
        dA = np.empty((T, B, 4 * H), dtype=self.dtype)  # controller pre-activation gradients
        dh = np.zeros((B, H), dtype=self.dtype)
        dc = np.zeros((B, H), dtype=self.dtype)
        dM = np.zeros((B, self.memory_size, W), dtype=self.dtype)
        dr = np.zeros((B, R * W), dtype=self.dtype)  # dL/dr_t from step t + 1
        dx = np.empty((B, T, F), dtype=self.dtype)
        for t in reversed(range(T)):
            dhr_t = dhr[:, t]  # (B, H + RW)
            if fb:
                dhr_t = dhr_t + feedback_backward(g, p, dyfb, cache.hidden[:, t], cache.reads[:, t])
            dh = dh + dhr_t[:, :H]  # (B, H)
            dr = dr + dhr_t[:, H:]  # (B, RW)
            hk = cache.hidden[:, t]  # (B, H)
            M = cache.memory[:, t + 1]  # (B, N, W) the memory the reads saw, M_t
            dzr = np.empty((B, R, A), dtype=self.dtype)
            dw_prev = np.zeros_like(dwp)  # (B, E + R, N) dL/dp^{t-1}
            for k, a in enumerate(cache.read_addr[t]):
                drk = dr[:, k * W : (k + 1) * W]  # (B, W)
                if cache.read_index is None:
                    dM += a.w[:, :, None] * drk[:, None, :]
                    dw = np.einsum("bnw,bw->bn", M, drk) + dwp[:, E + k]  # (B, N)
                else:  # r = M_j: the cell gets dL/dr, the weights the score term
                    j = cache.read_index[:, t, k]  # (B,)
                    dM[rows, j] += drk
                    dw = probability_grad(a.w, j, adv) + dwp[:, E + k]  # (B, N)
                dMa, dzr[:, k], dwk = head_address_backward(
                    dw, cell_keys(M, p, self.key_function, "read"), a
                )
                dM += cell_keys_backward(dMa, M, p, self.key_function, "read", g)
                if dwk is not None:
                    dw_prev[:, E + k] = dwk
            g["read.weight"] += dzr.reshape(B, -1).T @ hk
            g["read.bias"] += dzr.reshape(B, -1).sum(axis=0)
            dh = dh + dzr.reshape(B, -1) @ p["read.weight"]  # (B, H)
            dzw = np.empty((B, E, A + W), dtype=self.dtype)
            for e in reversed(range(E)):
                M_prev, a, v = cache.writes[t][e]
                if cache.write_index is None:
                    dM, dw, dzw[:, e, A:] = write_backward(dM, M_prev, a.w, v, self.update)
                else:  # written with e_j: the weights get the score term
                    j = cache.write_index[:, t, e]  # (B,)
                    e_j = onehot(j, N, self.dtype)  # (B, N)
                    dM, _, dzw[:, e, A:] = write_backward(dM, M_prev, e_j, v, self.update)
                    dw = probability_grad(a.w, j, adv)  # (B, N)
                Mk = cell_keys(M_prev, p, self.key_function, "write")  # (B, N, W)
                dMa, dzw[:, e, :A], dwk = head_address_backward(dw + dwp[:, e], Mk, a)
                dM = dM + cell_keys_backward(
                    dMa, M_prev, p, self.key_function, "write", g
                )  # (B, N, W) dL/dM^{e-1}
                if dwk is not None:
                    dw_prev[:, e] = dwk
            dwp = dw_prev
            g["write.weight"] += dzw.reshape(B, -1).T @ hk
            g["write.bias"] += dzw.reshape(B, -1).sum(axis=0)
            dh = dh + dzw.reshape(B, -1) @ p["write.weight"]  # (B, H)
            du, dh, dc, dA[t] = lstm_backward_all(dh, dc, cache.steps[t], p)
            dx[:, t], dr = du[:, :F], du[:, F + (O if fb else 0) :]  # (B, F), (B, RW)
            dyfb = du[:, F : F + O] if fb else dyfb  # (B, O) dL/dy_{t-1}
        lstm_weight_grads(g, dA, cache.steps)
        if cache.initial:
            g["memory.init"] = dM.sum(axis=0)  # (N, W)
        return {k: g[k] for k in p}, dx
