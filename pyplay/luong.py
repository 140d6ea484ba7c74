"""Global attention of a decoder over the encoder's states (Luong et al. 2015), batched over
all decoder steps.

For decoder states :math:`s_t` (B, U, H), encoder states :math:`h_j` (B, S, K) and a mask of
the real (not padded) source positions:

.. math::

    e_{tj} = \\mathrm{score}(s_t, h_j), \\quad
    \\alpha_{tj} = \\frac{m_j \\exp e_{tj}}{\\sum_k m_k \\exp e_{tk}}, \\quad
    c_t = \\sum_j \\alpha_{tj} h_j, \\quad
    \\tilde s_t = \\tanh(W_c [c_t; s_t]),

with the scores ``"dot"`` :math:`s^\\top h` (needs K = H), ``"general"``
:math:`s^\\top W_a h`, and ``"additive"`` (concatenation, Bahdanau) :math:`v^\\top \\tanh(W_q s
+ W_k h + b)`. Without input feeding every step's attention depends only on :math:`s_t`, so the
decoder's recurrence runs first and attention runs over all steps at once. Padded positions get
weight exactly 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay._checks import as_generator, check_choice, check_dtype, check_int

__all__ = ["SCORES", "LuongAttention"]

SCORES = ("dot", "general", "additive")


@dataclass(frozen=True)
class AttentionCache:
    S_dec: np.ndarray  # (B, U, H)
    H_enc: np.ndarray  # (B, S, K)
    a: np.ndarray  # (B, U, S) weights
    cs: np.ndarray  # (B, U, K + H) [c_t; s_t]
    out: np.ndarray  # (B, U, H) tanh output
    extra: tuple[np.ndarray, ...]  # score internals


class LuongAttention:
    """Attention of ``query_size``-wide decoder states over ``key_size``-wide encoder states.

    Parameters: ``weight_c`` (H, K + H); ``"general"`` adds ``weight_a`` (H, K);
    ``"additive"`` adds ``weight_query`` (A, H), ``weight_key`` (A, K), ``bias`` (A,), ``v`` (A,).
    """

    def __init__(
        self,
        query_size: int,
        key_size: int,
        score: str = "general",
        attn_size: int | None = None,
        dtype: Any = np.float32,
        rng: np.random.Generator | int | None = 0,
    ) -> None:
        H = check_int("query_size", query_size, min_value=1)
        K = check_int("key_size", key_size, min_value=1)
        self.score = check_choice("score", score, SCORES)
        if self.score == "dot" and H != K:
            raise ValueError(
                f"score='dot' needs key_size equal to query_size ({H}), got {K} "
                "(a bidirectional encoder doubles it: use 'general' or 'additive')"
            )
        A = check_int("attn_size", H if attn_size is None else attn_size, min_value=1)
        self.dtype = check_dtype("dtype", dtype)
        gen = as_generator(rng)

        def uniform(shape: tuple[int, ...], fan_in: int) -> np.ndarray:
            k = 1.0 / np.sqrt(fan_in)
            return gen.uniform(-k, k, shape).astype(self.dtype)

        self.params: dict[str, np.ndarray] = {"weight_c": uniform((H, K + H), K + H)}
        if self.score == "general":
            self.params["weight_a"] = uniform((H, K), K)
        elif self.score == "additive":
            self.params["weight_query"] = uniform((A, H), H)
            self.params["weight_key"] = uniform((A, K), K)
            self.params["bias"] = uniform((A,), H)
            self.params["v"] = uniform((A,), A)

    def _scores(self, S_dec: np.ndarray, H_enc: np.ndarray) -> tuple[np.ndarray, tuple]:
        p = self.params
        if self.score == "dot":
            return np.einsum("buh,bsh->bus", S_dec, H_enc), ()  # (B, U, S)
        if self.score == "general":
            G = H_enc @ p["weight_a"].T  # (B, S, H)
            return np.einsum("buh,bsh->bus", S_dec, G), (G,)
        Q = S_dec @ p["weight_query"].T + p["bias"]  # (B, U, A)
        Kp = H_enc @ p["weight_key"].T  # (B, S, A)
        T = np.tanh(Q[:, :, None, :] + Kp[:, None, :, :])  # (B, U, S, A)
        return T @ p["v"], (T,)  # (B, U, S)

    def forward(
        self, S_dec: np.ndarray, H_enc: np.ndarray, mask: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, AttentionCache]:
        """``(out (B, U, H), weights (B, U, S), cache)``; ``mask`` (B, S) is True at real
        source positions (at least one per row)."""
        e, extra = self._scores(S_dec, H_enc)  # (B, U, S)
        m = mask[:, None, :]  # (B, 1, S)
        e = np.where(m, e, -np.inf)
        a = np.exp(e - e.max(axis=2, keepdims=True))  # exp(-inf) = 0 at padding
        a /= a.sum(axis=2, keepdims=True)  # (B, U, S)
        c = a @ H_enc  # (B, U, K)
        cs = np.concatenate([c, S_dec], axis=2)  # (B, U, K + H)
        out = np.tanh(cs @ self.params["weight_c"].T)  # (B, U, H)
        return out, a, AttentionCache(S_dec, H_enc, a, cs, out, extra)

    def backward(
        self, dout: np.ndarray, cache: AttentionCache
    ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """``(dS_dec (B, U, H), dH_enc (B, S, K), grads)`` given d(loss)/d(out)."""
        p, a, S_dec, H_enc = self.params, cache.a, cache.S_dec, cache.H_enc
        K = H_enc.shape[2]
        dpre = dout * (1.0 - cache.out * cache.out)  # (B, U, H) through tanh
        grads = {"weight_c": np.einsum("buh,buk->hk", dpre, cache.cs)}  # (H, K + H)
        dcs = dpre @ p["weight_c"]  # (B, U, K + H)
        dc, dS = dcs[:, :, :K], dcs[:, :, K:].copy()  # (B, U, K), (B, U, H)
        dH = np.swapaxes(a, 1, 2) @ dc  # (B, S, K) through c = a H
        da = dc @ np.swapaxes(H_enc, 1, 2)  # (B, U, S)
        de = a * (da - (da * a).sum(axis=2, keepdims=True))  # softmax backward; 0 at padding
        if self.score == "dot":
            dS += de @ H_enc
            dH += np.swapaxes(de, 1, 2) @ S_dec
        elif self.score == "general":
            (G,) = cache.extra
            dS += de @ G
            dG = np.swapaxes(de, 1, 2) @ S_dec  # (B, S, H)
            grads["weight_a"] = np.einsum("bsh,bsk->hk", dG, H_enc)  # (H, K)
            dH += dG @ p["weight_a"]
        else:
            (T,) = cache.extra
            grads["v"] = np.einsum("bus,busa->a", de, T)  # (A,)
            dpre2 = de[..., None] * p["v"] * (1.0 - T * T)  # (B, U, S, A)
            dQ = dpre2.sum(axis=2)  # (B, U, A)
            dKp = dpre2.sum(axis=1)  # (B, S, A)
            grads["weight_query"] = np.einsum("bua,buh->ah", dQ, S_dec)  # (A, H)
            grads["bias"] = dQ.sum(axis=(0, 1))  # (A,)
            grads["weight_key"] = np.einsum("bsa,bsk->ak", dKp, H_enc)  # (A, K)
            dS += dQ @ p["weight_query"]
            dH += dKp @ p["weight_key"]
        return dS, dH, {k: grads[k].astype(self.dtype, copy=False) for k in self.params}
