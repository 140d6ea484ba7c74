"""Pointer network (Vinyals et al. 2015): the output at every step is a position of the input.

An encoder reads the source embeddings :math:`x_j` into states :math:`h_j`; a decoder starts
from the encoder's final state and reads, at step :math:`t`, the embedding of the element it
pointed at before (a learned start vector ``go`` at :math:`t = 1`). Its state :math:`d_t`
scores every real source position with additive attention, and the softmax of the scores *is*
the output distribution:

.. math::

    u_{tj} = v^\\top \\tanh(W_1 h_j + W_2 d_t + b), \\qquad
    p(y_t = j) = \\frac{m_j \\exp u_{tj}}{\\sum_k m_k \\exp u_{tk}},

with :math:`m_j` = 1 at real, 0 at padded positions. Trained with cross-entropy on the target
positions (teacher forcing: the decoder reads the true previous choice). Greedy decoding never
points twice at the same position (the outputs are a permutation, as for sorting), and, given
an end position per row, stops after pointing at it (a convex hull's vertices, then the end).

The source is token ids (B, S) embedded by a table (``vocab_size``), or, with ``input_size``
F, real vectors (B, S, F) such as points in the plane, embedded by an affine layer
:math:`x_j = W_{in} s_j + b_{in}` (Vinyals et al. feed the coordinates this way).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay._checks import as_generator, check_array, check_choice, check_dtype, check_int
from pyplay.models.contract import Backward, ModelBase, check_model_size, config_int, recurrent
from pyplay.nn import GRU, LSTM, RNN, Embedding, Linear, init

__all__ = ["PointerNetwork"]

CELLS = {"rnn": RNN, "lstm": LSTM, "gru": GRU}


@dataclass(frozen=True)
class PointerCache:
    src: np.ndarray
    ptr_in: np.ndarray
    emb: Any
    enc: Any
    dec: Any
    H_enc: np.ndarray
    D: np.ndarray
    T: np.ndarray
    p: np.ndarray


class PointerNetwork(ModelBase):
    """Points at source positions; sizes as in :class:`~pyplay.models.seq2seq.EncoderDecoder`.

    ``vocab_size`` V for token sources (B, S), or ``vocab_size=None`` and ``input_size`` F
    for real sources (B, S, F). Parameters are ``embedding.weight`` (V, E) (token sources)
    or ``input.weight`` (E, F) and ``input.bias`` (E,) (real sources), ``go`` (E,),
    ``encoder.*``, ``decoder.*``,
    ``attention.weight_key`` (A, H) = :math:`W_1`, ``attention.weight_query`` (A, H) =
    :math:`W_2`, ``attention.bias`` (A,), ``attention.v`` (A,).
    """

    objective = "pointer"

    def __init__(
        self,
        vocab_size: int | None,
        embedding_dim: int = 16,
        hidden_size: int = 64,
        cell: str = "lstm",
        attn_size: int | None = None,
        dtype: Any = np.float32,
        rng: np.random.Generator | int | None = 0,
        input_size: int | None = None,
    ) -> None:
        if (vocab_size is None) == (input_size is None):
            raise ValueError(
                "give vocab_size (token sources) or input_size (real sources), exactly one; "
                f"got vocab_size={vocab_size!r}, input_size={input_size!r}"
            )
        V = None if vocab_size is None else check_int("vocab_size", vocab_size, min_value=1)
        F = None if input_size is None else check_int("input_size", input_size, min_value=1)
        self.input_size = F
        E = check_int("embedding_dim", embedding_dim, min_value=1)
        H = check_int("hidden_size", hidden_size, min_value=1)
        A = check_int("attn_size", H if attn_size is None else attn_size, min_value=1)
        self.cell = check_choice("cell", cell, tuple(CELLS))
        self.vocab_size, self.embedding_dim, self.hidden_size, self.attn_size = V, E, H, A
        self.dtype = check_dtype("dtype", dtype)
        check_model_size(type(self), locals())  # before anything is built
        gen = as_generator(rng)
        self.emb: Embedding | Linear
        if V is not None:
            self.emb, self._emb_name = Embedding(V, E, dtype=self.dtype, rng=gen), "embedding"
        else:
            assert F is not None  # one of the two, checked above
            self.emb, self._emb_name = Linear(F, E, dtype=self.dtype, rng=gen), "input"
        self.enc = CELLS[self.cell](E, H, dtype=self.dtype, rng=gen)
        self.dec = CELLS[self.cell](E, H, dtype=self.dtype, rng=gen)
        k = 1.0 / np.sqrt(H)
        self.params: dict[str, np.ndarray] = {
            f"{self._emb_name}.{name}": value for name, value in self.emb.params.items()
        }
        self.params["go"] = init.uniform(
            gen, -1, 1, E, self.dtype, "PointerNetwork go (embedding_dim,)"
        )
        for name, value in self.enc.params.items():
            self.params[f"encoder.{name}"] = value
        for name, value in self.dec.params.items():
            self.params[f"decoder.{name}"] = value
        for name, shape in (("weight_key", (A, H)), ("weight_query", (A, H)), ("bias", (A,))):
            what = f"PointerNetwork attention.{name} {shape}"
            self.params[f"attention.{name}"] = init.uniform(gen, -k, k, shape, self.dtype, what)
        what = "PointerNetwork attention.v (attn_size,)"
        a = 1 / np.sqrt(A)
        self.params["attention.v"] = init.uniform(gen, -a, a, A, self.dtype, what)

    @classmethod
    def estimate_parameters(cls, config: Mapping[str, Any]) -> int:
        """An upper estimate of the parameter count ``config`` describes (without building)."""
        E, H = config_int(config, "embedding_dim", 16), config_int(config, "hidden_size", 64)
        if config.get("vocab_size") is None:
            V = config_int(config, "input_size", 1) + 1  # input.weight and input.bias
        else:
            V = config_int(config, "vocab_size", 1)
        A = config_int(config, "attn_size", H)
        return (V + 1) * E + 2 * recurrent(config.get("cell"), E, H, 1, 1) + 2 * A * (H + 1)

    def _scores(self, H_enc: np.ndarray, D: np.ndarray, mask: np.ndarray) -> tuple[Any, Any]:
        p = self.params
        Kp = H_enc @ p["attention.weight_key"].T  # (B, S, A)
        Q = D @ p["attention.weight_query"].T + p["attention.bias"]  # (B, U, A)
        T = np.tanh(Kp[:, None, :, :] + Q[:, :, None, :])  # (B, U, S, A)
        u = T @ p["attention.v"]  # (B, U, S)
        u = np.where(mask[:, None, :], u, -np.inf)
        e = np.exp(u - u.max(axis=2, keepdims=True))  # 0 at padding
        return T, e / e.sum(axis=2, keepdims=True)  # (B, U, S)

    def _decoder_inputs(self, x: np.ndarray, ptr_in: np.ndarray) -> np.ndarray:
        B = x.shape[0]
        idx = np.clip(ptr_in, 0, None)  # (B, U)
        picked = x[np.arange(B)[:, None], idx]  # (B, U, E)
        return np.where((ptr_in < 0)[..., None], self.params["go"], picked)

    def _source(self, src: Any) -> np.ndarray:
        """``src`` checked: token ids (B, S), or real vectors (B, S, F) with ``input_size``."""
        if self.input_size is None:
            return check_array("src", src, ndim=2, kind="i", layout="(B, S)")
        src = check_array("src", src, ndim=3, dtype=self.dtype, layout="(B, S, F)")
        if src.shape[2] != self.input_size:
            raise ValueError(
                f"src must have input_size={self.input_size} features in its last axis, "
                f"got shape {src.shape}"
            )
        return src

    def forward(self, src: Any, src_lengths: Any, ptr_in: Any) -> tuple[np.ndarray, Any]:
        """Pointer distributions (B, U, S) for decoder inputs ``ptr_in`` (B, U): the position
        pointed at the step before, -1 at the first step."""
        src = self._source(src)
        ptr_in = check_array("ptr_in", ptr_in, ndim=2, kind="i", layout="(B, U)")
        lengths = np.asarray(src_lengths)
        if ptr_in.max(initial=-1) >= src.shape[1] or ptr_in.min(initial=-1) < -1:
            raise ValueError(f"ptr_in must hold positions in -1..{src.shape[1] - 1}")
        x, emb_cache = self.emb.forward(src)  # (B, S, E)
        H_enc, state, enc_cache = self.enc.forward(x, lengths=lengths)  # (B, S, H)
        D, _, dec_cache = self.dec.forward(self._decoder_inputs(x, ptr_in), state=state)
        mask = np.arange(src.shape[1])[None, :] < lengths[:, None]  # (B, S)
        T, probs = self._scores(H_enc, D, mask)
        return probs, PointerCache(src, ptr_in, emb_cache, enc_cache, dec_cache, H_enc, D, T, probs)

    def loss(self, probs: np.ndarray, targets: Any, mask: Any) -> tuple[float, np.ndarray]:
        """Mean cross-entropy of target positions (B, U) where ``mask`` (B, U) is True, and
        its gradient with respect to the scores u (B, U, S)."""
        t = check_array("targets", targets, ndim=2, kind="i", layout="(B, U)")
        m = np.asarray(mask, dtype=bool)
        n = max(int(m.sum()), 1)
        picked = np.take_along_axis(probs, np.clip(t, 0, None)[..., None], axis=2)[..., 0]
        loss = -np.log(np.where(m, picked, 1.0)).sum() / n
        du = probs.copy()
        np.put_along_axis(du, np.clip(t, 0, None)[..., None], (picked - 1.0)[..., None], axis=2)
        return float(loss), (du * m[..., None] / n).astype(self.dtype)

    def backward(self, du: np.ndarray, cache: PointerCache) -> Backward:
        """Gradients of every parameter given d(loss)/d(scores) (B, U, S)."""
        p, T = self.params, cache.T
        g: dict[str, np.ndarray] = {"attention.v": np.einsum("bus,busa->a", du, T)}
        dpre = du[..., None] * p["attention.v"] * (1.0 - T * T)  # (B, U, S, A)
        dKp, dQ = dpre.sum(axis=1), dpre.sum(axis=2)  # (B, S, A), (B, U, A)
        g["attention.weight_key"] = np.einsum("bsa,bsh->ah", dKp, cache.H_enc)
        g["attention.weight_query"] = np.einsum("bua,buh->ah", dQ, cache.D)
        g["attention.bias"] = dQ.sum(axis=(0, 1))
        dx_dec, dstate, gd = self.dec.backward(dQ @ p["attention.weight_query"], None, cache.dec)
        g.update({f"decoder.{k}": v for k, v in gd.items()})
        first = cache.ptr_in < 0  # (B, U)
        g["go"] = dx_dec[first].sum(axis=0)
        B, S = cache.src.shape[:2]
        dx = np.zeros((B, S, dx_dec.shape[2]), dtype=self.dtype)  # (B, S, E)
        rows = np.broadcast_to(np.arange(B)[:, None], cache.ptr_in.shape)
        np.add.at(dx, (rows[~first], cache.ptr_in[~first]), dx_dec[~first])
        dx_enc, _, ge = self.enc.backward(dKp @ p["attention.weight_key"], dstate, cache.enc)
        g.update({f"encoder.{k}": v for k, v in ge.items()})
        _, gemb = self.emb.backward(dx + dx_enc, cache.emb)
        g.update({f"{self._emb_name}.{k}": v for k, v in gemb.items()})
        return Backward({k: g[k].astype(self.dtype, copy=False) for k in self.params})

    def greedy(self, src: Any, src_lengths: Any, end: Any = None) -> list[list[int]]:
        """Each row's positions in the order pointed at, never one twice: every real position
        exactly once, or, given ``end`` (B,) positions, up to and including the first pointer
        at the row's end position."""
        src = self._source(src)
        lengths = np.asarray(src_lengths)
        B, S = src.shape[:2]
        running = np.ones(B, dtype=bool)  # (B,) not ended yet
        if end is not None:
            end = check_array("end", end, ndim=1, kind="i", layout="(B,)")
            if end.shape != (B,) or (end < 0).any() or (end >= lengths).any():
                raise ValueError(f"end must hold one real position per row (B={B}), got {end}")
        x, _ = self.emb.forward(src)  # (B, S, E)
        H_enc, state, _ = self.enc.forward(x, lengths=lengths)
        free = np.arange(S)[None, :] < lengths[:, None]  # (B, S) not pointed at yet
        prev = np.full((B, 1), -1)
        out: list[list[int]] = [[] for _ in range(B)]
        for t in range(int(lengths.max())):
            D, state, _ = self.dec.forward(self._decoder_inputs(x, prev), state=state)
            _, probs = self._scores(H_enc, D, free | ~free.any(axis=1, keepdims=True))
            choice = np.where(free, probs[:, 0], -1.0).argmax(axis=1)  # (B,)
            for b in range(B):
                if t < lengths[b] and running[b]:
                    out[b].append(int(choice[b]))
            if end is not None:
                running &= choice != end
                if not running.any():
                    break
            free[np.arange(B), choice] = False
            prev = choice[:, None]
        return out
