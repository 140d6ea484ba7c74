r"""Luong's attention (query :math:`a^2(t)`, the decoder's *current* output) over a tapped
delay line of encoder states, in Hagan's notation; the book's own attention, queried with
:math:`a^2(t-1)`, is :mod:`pyplay.dynamic.book_attention`.

The encoder's layer-1 outputs :math:`a^1(1), \dots, a^1(S)` (each :math:`S^1` wide) go through a
horizontally stacked tapped delay line with :math:`D = S` taps (:class:`~pyplay.dynamic.tdl.
TDL_hstack`); read at :math:`t = S` it holds the whole source, newest first. Its taps side by
side are the **memory matrix**

.. math::

    A = [a^1(S)\; a^1(S-1)\; \cdots\; a^1(1)] \quad (S^1 \times S),

so column :math:`j` of :math:`A` is :math:`a^1_j = a^1(S - j + 1)`. The decoder's layer-2
output :math:`a^2(t)` (:math:`S^2` wide) is the query. The net input of the attention, one
score per column, in the book's three forms:

================  ====================================================================
``"dot"``         :math:`n(t) = A^T a^2(t)` (:math:`S^1 = S^2`)
``"general"``     :math:`n(t) = A^T W a^2(t)`, :math:`W` (:math:`S^1 \times S^2`)
``"concat"``      :math:`n_j(t) = v^T \mathrm{tansig}(W [a^1_j; a^2(t)] + b)`,
                  :math:`W` (:math:`S^a \times (S^1 + S^2)`), :math:`b, v` (:math:`S^a`)
================  ====================================================================

then :math:`\alpha(t) = \mathrm{softmax}(n(t))` and the context :math:`c(t) = A\, \alpha(t)`.

The same computation in pyplay's library modules (:mod:`pyplay.nn.attention`, used by
:class:`~pyplay.models.seq2seq.luong.LuongAttention`), which score
``e[u, j] = score(s_u, h_j)`` with the encoder states in source order :math:`h_j = a^1(j)`:

- ``DotAttention``: :math:`e = s^T h`, the same numbers as ``"dot"``;
- ``GeneralAttention``: :math:`e = s^T W_a h`, ``weight`` :math:`W_a` (:math:`S^2 \times S^1`),
  so :math:`W = W_a^T`;
- ``AdditiveAttention`` (Bahdanau's form, which ``pyplay.nn.attention.SCORERS`` also files under
  Luong's name ``"concat"``): :math:`e = v^T \tanh(W_q s + W_k h + b)`. Luong's concat score
  :math:`v_a^T \tanh(W_a [h; s])` is the same product with :math:`W_a = [W_k\; W_q]` split by
  columns; pyplay adds the bias :math:`b`, which is Luong's form when :math:`b = 0` (a bias is
  the book's usual :math:`b`, equivalently a constant input 1). Here :math:`W = [W_k\; W_q]`.

The weights :math:`\alpha(t)` come out newest first; :func:`source_order` turns them into the
library's order (column ``j`` = source position ``j``). A padded row of length :math:`L < S` reads
the line at :math:`t = L`: its last :math:`S - L` taps are the TDL's initial conditions (zeros),
masked out of the softmax (weight exactly 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay._checks import (
    as_generator,
    check_array,
    check_choice,
    check_dtype,
    check_int,
    check_lengths,
    check_shape,
)
from pyplay.dynamic.tdl import TDL_hstack
from pyplay.nn import init
from pyplay.nn.attention import AdditiveAttention, DotAttention, GeneralAttention
from pyplay.nn.sdpa import masked_softmax

__all__ = ["BOOK_SCORES", "LuongTDLAttention", "LuongTDLAttentionCache", "source_order"]

BOOK_SCORES = ("dot", "general", "concat")  # the book's names
LIBRARY_SCORE = {
    "dot": "dot",
    "general": "general",
    "concat": "additive",
}  # pyplay.models.seq2seq.luong's


def source_order(alpha: Any, lengths: Any = None) -> np.ndarray:
    """Weights ``alpha`` (B, U, S) over the columns of :math:`A` (newest first) in source order:
    ``out[b, u, j]`` is the weight of :math:`a^1(j + 1)`; zeros past each row's length."""
    alpha = check_array("alpha", alpha, ndim=3, layout="(B, U, S)")
    B, _, S = alpha.shape
    L = np.full(B, S) if lengths is None else check_lengths(lengths, B, S)  # (B,)
    out = np.zeros_like(alpha)  # (B, U, S)
    for b in range(B):
        out[b, :, : L[b]] = alpha[b, :, L[b] - 1 :: -1]  # (U, L) newest first -> oldest first
    return out


@dataclass(frozen=True)
class LuongTDLAttentionCache:
    """What :meth:`LuongTDLAttention.backward` needs from the forward pass."""

    a2: np.ndarray  # (B, U, S2) the queries a^2(t)
    A: np.ndarray  # (B, S1, S) the memory matrices
    alpha: np.ndarray  # (B, U, S) weights, newest column first
    lengths: np.ndarray  # (B,) source lengths
    Z: np.ndarray | None  # (B, U, S, Sa) tansig output of "concat"


class LuongTDLAttention:
    r"""Scores, softmax and context of one decoder over a TDL of encoder states.

    Parameters
    ----------
    score : {"dot", "general", "concat"}
        The book's form of the net input :math:`n(t)` (module docstring).
    S1, S2 : int
        Widths of :math:`a^1` (encoder) and :math:`a^2` (decoder); equal for "dot".
    Sa : int, optional
        Hidden width of "concat" (default ``S2``).
    dtype : float32 or float64
    rng : numpy Generator or seed
        Draws :math:`W, b, v` as ``torch.nn.Linear`` does (uniform, :math:`\pm 1/\sqrt{fan_{in}}`).

    Attributes
    ----------
    params : dict
        ``"W"`` for "general"; ``"W"``, ``"b"``, ``"v"`` for "concat"; empty for "dot".
    """

    def __init__(
        self,
        score: str,
        S1: int,
        S2: int,
        Sa: int | None = None,
        dtype: Any = np.float64,
        rng: np.random.Generator | int | None = 0,
    ) -> None:
        self.score = check_choice("score", score, BOOK_SCORES)
        self.S1 = check_int("S1", S1, min_value=1)
        self.S2 = check_int("S2", S2, min_value=1)
        self.Sa = check_int("Sa", self.S2 if Sa is None else Sa, min_value=1)
        self.dtype = check_dtype("dtype", dtype)
        if self.score == "dot" and self.S1 != self.S2:
            raise ValueError(f"score='dot' needs S1 equal to S2 ({self.S2}), got S1={self.S1}")
        gen = as_generator(rng)

        def uniform(shape: tuple[int, ...], fan_in: int) -> np.ndarray:
            k = 1.0 / np.sqrt(fan_in)
            return init.uniform(gen, -k, k, shape, self.dtype, f"attention weight {shape}")

        self.params: dict[str, np.ndarray] = {}
        if self.score == "general":
            self.params["W"] = uniform((self.S1, self.S2), self.S1)
        elif self.score == "concat":
            self.params["W"] = uniform((self.Sa, self.S1 + self.S2), self.S1 + self.S2)
            self.params["b"] = uniform((self.Sa,), self.S2)
            self.params["v"] = uniform((self.Sa,), self.Sa)

    @classmethod
    def from_scorer(cls, scorer: Any, S1: int, S2: int) -> LuongTDLAttention:
        """The book's form of a library scorer (its parameters copied in the book's layout).

        ``scorer`` is a :class:`~pyplay.nn.attention.DotAttention`, ``GeneralAttention`` or
        ``AdditiveAttention`` (e.g. ``LuongAttention.scorer``); :math:`W = W_a^T` for
        "general", :math:`W = [W_k\\; W_q]` for "concat" (a scorer without a bias gets
        :math:`b = 0`).
        """
        if isinstance(scorer, GeneralAttention):
            out = cls("general", S1, S2, dtype=scorer.dtype)
            out.params["W"] = scorer.params["weight"].T.copy()  # (S1, S2)
        elif isinstance(scorer, AdditiveAttention):
            p = scorer.params
            out = cls("concat", S1, S2, scorer.attn_size, dtype=scorer.dtype)
            out.params["W"] = np.concatenate([p["weight_key"], p["weight_query"]], axis=1)
            out.params["b"] = p["bias"].copy() if "bias" in p else np.zeros_like(p["v"])
            out.params["v"] = p["v"].copy()
        elif type(scorer) is DotAttention:
            out = cls("dot", S1, S2, dtype=scorer.dtype)
        else:
            raise TypeError(
                "scorer must be a DotAttention, GeneralAttention or AdditiveAttention (the "
                f"book's dot, general and concat scores), got {type(scorer).__name__}"
            )
        return out

    # ------------------------------------------------------------------ forward
    def memory(self, a1: Any, lengths: Any = None) -> np.ndarray:
        """The memory matrices :math:`A = [a^1(L)\\; \\cdots\\; a^1(1)\\; 0 \\cdots]` (B, S1, S)
        of ``a1`` (B, S, S1), read from ``TDL_hstack(S1, D=S)`` at each row's last step."""
        a1 = check_array("a1", a1, ndim=3, dtype=self.dtype, layout="(B, S, S1)")
        check_shape("a1", a1, (None, None, self.S1), "(B, S, S1)")
        B, S, _ = a1.shape
        L = np.full(B, S) if lengths is None else check_lengths(lengths, B, S)  # (B,)
        z = TDL_hstack(self.S1, S).forward(a1)  # (B, S, S1, S): [a1(t) a1(t-1) ...]
        return z[np.arange(B), L - 1]  # (B, S1, S) the line at t = L, columns a^1_j

    def forward(
        self, a2: Any, a1: Any, lengths: Any = None
    ) -> tuple[np.ndarray, np.ndarray, LuongTDLAttentionCache]:
        r"""Contexts ``c`` (B, U, S1), weights ``alpha`` (B, U, S) (column ``j`` weighs
        :math:`a^1_j`, newest first) and the cache, for queries ``a2`` (B, U, S2) over the
        encoder outputs ``a1`` (B, S, S1); ``lengths`` (B,) of the sources (default all S).

        Row ``u`` of each result is the column :math:`n(t)`, :math:`\alpha(t)`, :math:`c(t)`
        for :math:`t = u + 1`.
        """
        a2 = check_array("a2", a2, ndim=3, dtype=self.dtype, layout="(B, U, S2)")
        check_shape("a2", a2, (None, None, self.S2), "(B, U, S2)")
        A = self.memory(a1, lengths)  # (B, S1, S)
        B, _, S = A.shape
        L = np.full(B, S) if lengths is None else check_lengths(lengths, B, S)  # (B,)
        if a2.shape[0] != B:
            raise ValueError(f"a2 must have batch size B={B} like a1, got shape {a2.shape}")
        n, Z = self._net_input(a2, A)  # (B, U, S)
        keep = (np.arange(S)[None, :] < L[:, None])[:, None, :]  # (B, 1, S)
        alpha = masked_softmax(n, keep)  # (B, U, S) alpha(t) = softmax(n(t))
        c = alpha @ A.transpose(0, 2, 1)  # (B, U, S1) c(t) = A alpha(t)
        return c, alpha, LuongTDLAttentionCache(a2, A, alpha, L, Z)

    def net_input(self, a2: Any, a1: Any, lengths: Any = None) -> np.ndarray:
        """The scores :math:`n(t)` (B, U, S) before the softmax (padded columns included)."""
        a2 = check_array("a2", a2, ndim=3, dtype=self.dtype, layout="(B, U, S2)")
        check_shape("a2", a2, (None, None, self.S2), "(B, U, S2)")
        return self._net_input(a2, self.memory(a1, lengths))[0]  # (B, U, S)

    def _net_input(self, a2: np.ndarray, A: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        if self.score == "dot":
            return a2 @ A, None  # (B, U, S): n(t)^T = a2(t)^T A
        W = self.params["W"]
        if self.score == "general":
            return (a2 @ W.T) @ A, None  # (B, U, S): n(t)^T = (W a2(t))^T A
        W1, W2 = W[:, : self.S1], W[:, self.S1 :]  # (Sa, S1), (Sa, S2)
        N1 = (W1 @ A).transpose(0, 2, 1)  # (B, S, Sa) W^1 a^1_j
        N2 = a2 @ W2.T + self.params["b"]  # (B, U, Sa) W^2 a^2(t) + b
        Z = np.tanh(N1[:, None, :, :] + N2[:, :, None, :])  # (B, U, S, Sa) tansig
        return Z @ self.params["v"], Z  # (B, U, S) n_j(t) = v^T Z

    # ------------------------------------------------------------------ backward
    def backward(
        self, dc: Any, cache: LuongTDLAttentionCache, dalpha: Any = None
    ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        r"""``(da2 (B, U, S2), da1 (B, S, S1), grads)`` from d(loss)/d(c) (B, U, S1) and,
        optionally, d(loss)/d(alpha) (B, U, S).

        .. math::

            \delta A = \delta c\, \alpha^T, \quad
            \delta\alpha = A^T \delta c, \quad
            \delta n = \alpha \odot (\delta\alpha - \alpha^T \delta\alpha),

        then through the score (for "general": :math:`\delta W = A\, \delta n\, a^{2T}`,
        :math:`\delta a^2 = W^T A\, \delta n`, :math:`\delta A \mathrel{+}= W a^2 \delta n^T`)
        and the delay line's adjoint :meth:`TDL_hstack.backward` from :math:`A` to :math:`a^1`.
        """
        a2, A, alpha = cache.a2, cache.A, cache.alpha
        B, U, _ = a2.shape
        S = A.shape[2]
        dc = check_array("dc", dc, ndim=3, dtype=self.dtype, layout="(B, U, S1)")
        check_shape("dc", dc, (B, U, self.S1), "(B, U, S1)")
        dA = dc.transpose(0, 2, 1) @ alpha  # (B, S1, S)
        da = dc @ A  # (B, U, S)
        if dalpha is not None:
            dal = check_array("dalpha", dalpha, ndim=3, dtype=self.dtype, layout="(B, U, S)")
            check_shape("dalpha", dal, alpha.shape, "(B, U, S)")
            da = da + dal
        dn = alpha * (da - (da * alpha).sum(axis=2, keepdims=True))  # (B, U, S)
        grads: dict[str, np.ndarray] = {}
        if self.score == "dot":
            da2 = dn @ A.transpose(0, 2, 1)  # (B, U, S2)
            dA += a2.transpose(0, 2, 1) @ dn  # (B, S1, S)
        elif self.score == "general":
            W = self.params["W"]  # (S1, S2)
            P = a2 @ W.T  # (B, U, S1) W a2(t)
            dP = dn @ A.transpose(0, 2, 1)  # (B, U, S1)
            dA += P.transpose(0, 2, 1) @ dn  # (B, S1, S)
            grads["W"] = np.einsum("bus,buh->sh", dP, a2)  # (S1, S2)
            da2 = dP @ W  # (B, U, S2)
        else:
            assert cache.Z is not None
            p, Z = self.params, cache.Z
            W1, W2 = p["W"][:, : self.S1], p["W"][:, self.S1 :]  # (Sa, S1), (Sa, S2)
            grads["v"] = np.einsum("bus,busa->a", dn, Z)  # (Sa,)
            G = dn[..., None] * (1.0 - Z * Z) * p["v"]  # (B, U, S, Sa) d(net input of tansig)
            dN2, dN1 = G.sum(axis=2), G.sum(axis=1)  # (B, U, Sa), (B, S, Sa)
            grads["W"] = np.concatenate(
                [np.einsum("bsa,bks->ak", dN1, A), np.einsum("bua,buh->ah", dN2, a2)], axis=1
            )  # (Sa, S1 + S2)
            grads["b"] = dN2.sum(axis=(0, 1))  # (Sa,)
            da2 = dN2 @ W2  # (B, U, S2)
            dA += (dN1 @ W1).transpose(0, 2, 1)  # (B, S1, S)
        dz = np.zeros((B, S, self.S1, S), dtype=dA.dtype)  # (B, S, S1, S)
        dz[np.arange(B), cache.lengths - 1] = dA
        da1, _ = TDL_hstack(self.S1, S).backward(dz)  # (B, S, S1); initial conditions dropped
        return da2, da1, {k: grads[k] for k in self.params}
