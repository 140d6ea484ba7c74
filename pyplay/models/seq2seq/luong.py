"""Global attention of a decoder over the encoder's states (Luong et al. 2015), batched over
all decoder steps.

For decoder states :math:`s_t` (B, U, H), encoder states :math:`h_j` (B, S, K) and a mask of
the real (not padded) source positions:

.. math::

    e_{tj} = \\mathrm{score}(s_t, h_j), \\quad
    \\alpha_{tj} = \\frac{m_j \\exp e_{tj}}{\\sum_k m_k \\exp e_{tk}}, \\quad
    c_t = \\sum_j \\alpha_{tj} h_j, \\quad
    \\tilde s_t = \\tanh(W_c [c_t; s_t]).

The score is one of the modules of :mod:`pyplay.nn.attention` (``SCORES``): ``"dot"``
:math:`s^\\top h` and ``"scaled_dot"`` (both need K = H; the scaled one divides by
:math:`\\sqrt{H}`, or with ``scale_by="source_length"`` by the square root of each source's
length, as Schmidt's Table 1 writes it), ``"general"`` :math:`s^\\top W_a h`,
``"additive"`` (concatenation, Bahdanau) :math:`v^\\top \\tanh(W_q s + W_k h + b)`,
``"cosine"`` (content-based) and ``"location"`` (:math:`\\mathrm{softmax}(W_a s)` over
positions, up to ``max_len`` source steps). Without input feeding every step's attention
depends only on :math:`s_t`, so the decoder's recurrence runs first and attention runs over all
steps at once. Padded positions get weight exactly 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay._checks import as_generator, check_choice, check_dtype, check_int
from pyplay.nn import init
from pyplay.nn.attention import (
    AdditiveAttention,
    AttentionCache,
    CosineAttention,
    DotAttention,
    GeneralAttention,
    LocationAttention,
    ScaledDotAttention,
)

__all__ = ["SCORES", "LuongAttention", "make_scorer"]

SCORES = ("general", "dot", "scaled_dot", "additive", "cosine", "location")


def make_scorer(
    score: str,
    query_size: int,
    key_size: int,
    attn_size: int | None = None,
    max_len: int = 64,
    dtype: Any = np.float32,
    rng: np.random.Generator | int | None = 0,
    scale_by: str = "key_size",
) -> Any:
    """The scorer module named ``score`` (one of ``SCORES``) for ``query_size``-wide queries
    over ``key_size``-wide keys; ``attn_size`` (default ``query_size``) is the additive score's
    hidden width, ``max_len`` the location score's number of positions, ``scale_by`` what the
    scaled dot product divides by (``"key_size"``: :math:`\\sqrt{D}`; ``"source_length"``:
    :math:`\\sqrt{n_{source}}`; any other score takes only the default)."""
    H = check_int("query_size", query_size, min_value=1)
    K = check_int("key_size", key_size, min_value=1)
    score = check_choice("score", score, SCORES)
    scale_by = check_choice("scale_by", scale_by, ScaledDotAttention.SCALES)
    if score != "scaled_dot" and scale_by != "key_size":
        raise ValueError(
            f"scale_by chooses the scaled dot product's divisor: with score={score!r} leave it "
            f"'key_size', got scale_by={scale_by!r}"
        )
    if score in ("dot", "scaled_dot") and H != K:
        raise ValueError(
            f"score={score!r} needs key_size equal to query_size ({H}), got {K} "
            "(a bidirectional encoder doubles it: use 'general' or 'additive')"
        )
    gen = as_generator(rng)
    A = check_int("attn_size", H if attn_size is None else attn_size, min_value=1)
    if score == "dot":
        return DotAttention(dtype=dtype)
    if score == "scaled_dot":
        return ScaledDotAttention(dtype=dtype, scale_by=scale_by)
    if score == "cosine":
        return CosineAttention(dtype=dtype)
    if score == "general":
        return GeneralAttention(H, K, dtype=dtype, rng=gen)
    if score == "additive":
        return AdditiveAttention(H, K, A, dtype=dtype, rng=gen)
    return LocationAttention(H, max_len, dtype=dtype, rng=gen)


@dataclass(frozen=True)
class LuongCache:
    attn: AttentionCache
    cs: np.ndarray  # (B, U, K + H) [c_t; s_t]
    out: np.ndarray  # (B, U, H) tanh output


class LuongAttention:
    """Attention of ``query_size``-wide decoder states over ``key_size``-wide encoder states.

    Parameters: ``weight_c`` (H, K + H), and the scorer's own under ``score.`` (e.g.
    ``score.weight`` for "general"); ``scale_by`` as in :func:`make_scorer`.
    """

    def __init__(
        self,
        query_size: int,
        key_size: int,
        score: str = "general",
        attn_size: int | None = None,
        max_len: int = 64,
        dtype: Any = np.float32,
        rng: np.random.Generator | int | None = 0,
        scale_by: str = "key_size",
    ) -> None:
        H = check_int("query_size", query_size, min_value=1)
        K = check_int("key_size", key_size, min_value=1)
        self.score = check_choice("score", score, SCORES)
        self.dtype = check_dtype("dtype", dtype)
        gen = as_generator(rng)
        self.scorer = make_scorer(self.score, H, K, attn_size, max_len, self.dtype, gen, scale_by)
        k = 1.0 / np.sqrt(K + H)
        self.params: dict[str, np.ndarray] = {
            "weight_c": init.uniform(
                gen, -k, k, (H, K + H), self.dtype, "LuongAttention weight_c (H, K + H)"
            )
        }
        self.params.update({f"score.{n}": v for n, v in self.scorer.params.items()})

    def forward(
        self, S_dec: np.ndarray, H_enc: np.ndarray, mask: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, LuongCache]:
        """``(out (B, U, H), weights (B, U, S), cache)``; ``mask`` (B, S) is True at real
        source positions (at least one per row)."""
        c, a, attn = self.scorer.forward(S_dec, H_enc, H_enc, mask=mask)  # (B, U, K)
        cs = np.concatenate([c, S_dec], axis=2)  # (B, U, K + H)
        out = np.tanh(cs @ self.params["weight_c"].T)  # (B, U, H)
        return out, a, LuongCache(attn, cs, out)

    def backward(
        self, dout: np.ndarray, cache: LuongCache
    ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """``(dS_dec (B, U, H), dH_enc (B, S, K), grads)`` given d(loss)/d(out)."""
        K = cache.attn.key.shape[2]
        dpre = dout * (1.0 - cache.out * cache.out)  # (B, U, H) through tanh
        grads = {"weight_c": np.einsum("buh,buk->hk", dpre, cache.cs)}  # (H, K + H)
        dcs = dpre @ self.params["weight_c"]  # (B, U, K + H)
        dQ, dK, dV, g = self.scorer.backward(dcs[:, :, :K], cache.attn)
        grads.update({f"score.{n}": v for n, v in g.items()})
        dS = dcs[:, :, K:] + dQ  # (B, U, H)
        return dS, dK + dV, {k: grads[k].astype(self.dtype, copy=False) for k in self.params}
