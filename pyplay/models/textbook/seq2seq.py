r"""Hagan's sequence-to-sequence network exactly as the chapter writes it (eq. 6.5-6.18).

Words are one-hot vectors, so a weight times a word is a column of that weight (the book has no
separate embedding layer). Layer 1, the encoder, over the source :math:`p(1..T)`, eq. 6.5:

.. math::

    a^1(t) = \mathrm{tansig}(IW^{1,1} p(t) + LW^{1,1} a^1(t-1) + b^1), \quad a^1(0) = 0.

Layer 2, the decoder, runs on at :math:`t = T+1, T+2, \dots` from :math:`a^2(T) = a^1(T)`
("the decoder initializes its state with the final state of the encoder"); layer 3 is the
output. Eq. 6.6-6.7 with the context :math:`c(t)`:

.. math::

    a^2(t) = \mathrm{tansig}(LW^{2,3} a^3(t-1) + LW^{2,c}\, c(t) + LW^{2,2} a^2(t-1) + b^2),
    \quad n^3(t) = LW^{3,2} a^2(t) + b^3,

where ``form`` "context" has :math:`c = a^1(T)` through :math:`LW^{2,1}` (eq. 6.6, Figure
6.4), "dot" and "general" the context :math:`a^5(t)` of eq. 6.11 through :math:`LW^{2,5}`
(Figure 6.6), "concat" the context :math:`a^6(t)` of eq. 6.18 through :math:`LW^{2,6}`; the
attention (:mod:`pyplay.models.textbook.attention`) scores the TDL of encoder states
:math:`A^1(T)` (``D`` columns, set by the caller) with the decoder's *previous* output
:math:`a^2(t-1)`. There is no extra layer after the decoder.

Choices where the book leaves one open (also listed by :data:`BOOK_CHOICES`):

- eq. 6.6 prints the bias :math:`b^1` and eq. 6.7 :math:`LW^{3,2} a^1`: read as :math:`b^2` and
  :math:`LW^{3,2} a^2(t)` (the decoder's own bias, the output reads the decoder);
- the output layer is linear (:math:`n^3`) with a softmax for the word probabilities
  :math:`a^3(t) = \mathrm{softmax}(n^3(t))` (the cross-entropy's); the output fed back,
  :math:`a^3(t-1)`, is the one-hot vector of the word emitted at :math:`t-1` (while training the
  target's word, teacher forcing), :math:`a^3(T)` the one-hot of BOS;
- "general": :math:`W_a = L_a L_a^T + \epsilon I` (positive definite, as the book asks);
- taps of :math:`A^1(T)` before :math:`t = 1` (when :math:`D > T`) are masked out of the
  softmax; when :math:`D < T` the first :math:`T - D` states are not attended (as eq. 6.8 says);
- "concat": :math:`S^4 = S^1`; both layers have the same size, :math:`S^1 = S^2` = ``hidden_size``.

Parameters are named as the book: ``"IW1,1"`` (S1, V_src), ``"LW1,1"``, ``"b1"``, ``"LW2,3"``
(S2, V_tgt), ``"LW2,1"``/``"LW2,5"``/``"LW2,6"``, ``"LW2,2"``, ``"b2"``, the attention's
(``"L_a"``; ``"LW4,2"``, ``"b4"``, ``"LW5,4"``, ``"b5"``), ``"LW3,2"`` (V_tgt, S2), ``"b3"``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay._checks import as_generator, check_array, check_choice, check_int, check_lengths
from pyplay.decode.greedy import greedy_decode
from pyplay.limits import MAX_DELAY, MAX_STEPS
from pyplay.losses import log_softmax
from pyplay.models.contract import Backward, Seq2SeqBase, check_model_size, config_int
from pyplay.models.textbook.attention import (
    ATTENTION_FORMS,
    attend,
    attend_backward,
    attention_params,
    delay_line,
    delay_line_backward,
)
from pyplay.nn import init
from pyplay.tasks.pairs import BOS, EOS

__all__ = ["BOOK_CHOICES", "CONTEXT_LAYER", "TEXTBOOK_FORMS", "BookState", "TextbookSeq2Seq"]

TEXTBOOK_FORMS = ("context", *ATTENTION_FORMS)
CONTEXT_LAYER = {"context": 1, "dot": 5, "general": 5, "concat": 6}  # c(t) = a^l, via LW^{2,l}
BOOK_CHOICES = (
    "eq. 6.6 prints b¹ and eq. 6.7 LW³˒² a¹: read as b² and LW³˒² a²(t)",
    "a³(t) = softmax(n³(t)); the a³(t−1) fed back is the one-hot of the word emitted at t−1 "
    "(of the target word while training); a³(T) is the one-hot of BOS",
    "general: W_a = L_a L_aᵀ + εI, positive definite as the book asks",
    "taps of A¹(T) before t = 1 (D > T) are masked out of the softmax",
    "S¹ = S² (= S⁴ for concat) = hidden size",
)


@dataclass(frozen=True)
class BookState:
    """Decoding state of N rows: :math:`a^2(t-1)` (N, S2), :math:`a^1(T)` (N, S1), the memory
    :math:`A^1(T)` (N, S1, D) with its real columns ``keep`` (N, D), and the source lengths."""

    a2: np.ndarray
    aT: np.ndarray
    A: np.ndarray
    keep: np.ndarray
    lengths: np.ndarray


@dataclass(frozen=True)
class BookCache:
    """What :meth:`TextbookSeq2Seq.backward` needs from the forward pass."""

    src: np.ndarray  # (B, S) ids
    lengths: np.ndarray  # (B,)
    a1: np.ndarray  # (B, S, S1)
    tgt: np.ndarray  # (B, U) a^3(t-1) as ids
    a2: np.ndarray  # (B, U + 1, S2): a^2(T), a^2(T+1), ...
    ctx: np.ndarray  # (B, U, S1)
    attn: list[Any]


class TextbookSeq2Seq(Seq2SeqBase):
    """The book's seq2seq (module docstring), trained by :class:`pyplay.train.Trainer`.

    Parameters
    ----------
    src_vocab_size, tgt_vocab_size : int
        Vocabulary sizes (PAD, BOS, EOS included): the lengths of the one-hot vectors.
    form : {"context", "dot", "general", "concat"}
    hidden_size : int
        :math:`S^1 = S^2` (and :math:`S^4`).
    D : int
        Columns of the delay line :math:`A^1(T)` (its :math:`D - 1` delays); unused by
        "context".
    dtype, rng : as everywhere in pyplay (float64 by default: the trace compares exactly).
    """

    def __init__(
        self,
        src_vocab_size: int,
        tgt_vocab_size: int,
        form: str = "general",
        hidden_size: int = 32,
        D: int = 8,
        dtype: Any = np.float64,
        rng: np.random.Generator | int | None = 0,
    ) -> None:
        self._set_vocabs(src_vocab_size, tgt_vocab_size, dtype)
        self.form = check_choice("form", form, TEXTBOOK_FORMS)
        self.hidden_size = H = check_int("hidden_size", hidden_size, min_value=1)
        self.D = check_int("D", D, min_value=1, max_value=MAX_DELAY)
        check_model_size(type(self), locals())
        gen = as_generator(rng)

        def uniform(shape: tuple[int, ...], fan_in: int) -> np.ndarray:
            k = 1.0 / np.sqrt(fan_in)
            return init.uniform(gen, -k, k, shape, self.dtype, f"weight {shape}")

        Vs, Vt, c = self.src_vocab_size, self.tgt_vocab_size, CONTEXT_LAYER[self.form]
        p = {"IW1,1": uniform((H, Vs), H), "LW1,1": uniform((H, H), H), "b1": uniform((H,), H)}
        p |= {"LW2,3": uniform((H, Vt), H), f"LW2,{c}": uniform((H, H), H)}
        p |= {"LW2,2": uniform((H, H), H), "b2": uniform((H,), H)}
        p |= attention_params(self.form, H, H, uniform, self.dtype)
        p |= {"LW3,2": uniform((Vt, H), H), "b3": uniform((Vt,), H)}
        self.params: dict[str, np.ndarray] = p

    @property
    def context_key(self) -> str:
        """The name of the context's weight, ``"LW2,1"``, ``"LW2,5"`` or ``"LW2,6"``."""
        return f"LW2,{CONTEXT_LAYER[self.form]}"

    @classmethod
    def estimate_parameters(cls, config: Mapping[str, Any]) -> int:
        """An upper estimate of the parameter count ``config`` describes (without building)."""
        H = config_int(config, "hidden_size", 32)
        Vs, Vt = config_int(config, "src_vocab_size", 4), config_int(config, "tgt_vocab_size", 4)
        return (H + 1) * (Vs + 2 * Vt + 5 * H + 4)  # concat's attention, the largest

    # ------------------------------------------------------------------ encoder, one step
    def encode(self, src: Any, src_lengths: Any) -> tuple[np.ndarray, BookState]:
        """Encoder outputs ``a1`` (B, S, S1) and the decoding state at :math:`t = T`."""
        src = check_array("src", src, ndim=2, kind="i", layout="(B, S)")
        B, S = src.shape
        if src.size and (src.min() < 0 or src.max() >= self.src_vocab_size):
            raise ValueError(f"src must hold ids 0..{self.src_vocab_size - 1}, got {src.max()}")
        L = check_lengths(src_lengths, B, S)  # (B,)
        p = self.params
        x = p["IW1,1"].T[src]  # (B, S, S1) IW^{1,1} p(t), a column per one-hot word
        a1 = np.empty((B, S, self.hidden_size), dtype=self.dtype)  # (B, S, S1)
        prev = np.zeros((B, self.hidden_size), dtype=self.dtype)  # a^1(0)
        for t in range(S):
            prev = np.tanh(x[:, t] + prev @ p["LW1,1"].T + p["b1"])  # (B, S1) eq. 6.5
            a1[:, t] = prev
        A, keep = delay_line(a1, L, self.D)  # (B, S1, D) eq. 6.8, (B, D) taps at t >= 1
        aT = a1[np.arange(B), L - 1]  # (B, S1) a^1(T)
        return a1, BookState(aT.copy(), aT, A, keep, L)

    def _step(
        self, y_prev: np.ndarray, state: BookState, weights: np.ndarray | None = None
    ) -> tuple[Any, ...]:
        """One decoder step: ``(a2 (N, S2), n3 (N, V), ctx (N, S1), alpha, n, attn cache)``;
        ``weights`` (N, D) pins the attention weights (:func:`attend`)."""
        p = self.params
        if self.form == "context":
            ctx, alpha, n, cache = state.aT, None, None, None  # (N, S1) a^1(T)
        else:
            ctx, alpha, n, cache = attend(self.form, p, state.A, state.keep, state.a2, weights)
        n2 = p["LW2,3"].T[y_prev] + ctx @ p[self.context_key].T + state.a2 @ p["LW2,2"].T
        a2 = np.tanh(n2 + p["b2"])  # (N, S2) eq. 6.6
        n3 = a2 @ p["LW3,2"].T + p["b3"]  # (N, V) eq. 6.7
        return a2, n3, ctx, alpha, n, cache

    def source_order(self, alpha: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """Tap weights ``alpha`` (B, U, D) (newest first) as weights of the source positions
        (B, U, S): ``out[b, u, j]`` weighs :math:`a^1(j + 1)`; 0 where no tap reads it."""
        B, U, _ = alpha.shape
        S = int(lengths.max())
        out = np.zeros((B, U, S), dtype=alpha.dtype)  # (B, U, S)
        for b in range(B):
            k = min(self.D, int(lengths[b]))
            out[b, :, lengths[b] - k : lengths[b]] = alpha[b, :, k - 1 :: -1]
        return out

    # ------------------------------------------------------------------ training
    def forward(
        self,
        src: Any,
        src_lengths: Any,
        tgt_in: Any,
        tgt_lengths: Any = None,
        attention_weights: Any = None,
    ) -> tuple[np.ndarray, np.ndarray | None, BookCache]:
        """Teacher-forced logits :math:`n^3` (B, U, V) for ``tgt_in`` (BOS y_1 ... y_n), the
        attention weights in source order (B, U, S) (None for "context") and the cache.
        ``tgt_lengths`` is not needed (the decoder is causal). ``attention_weights``
        (B, U, D), over the columns of :math:`A^1(T)` newest first, pins the weights of every
        decoder step instead of the softmax's (:func:`attend`; an attention form only);
        :meth:`backward` then sends nothing into the scores."""
        a1, state = self.encode(src, src_lengths)
        tgt = self._check_tgt_in(tgt_in, a1.shape[0])  # (B, U)
        pinned = self._check_pinned(attention_weights, tgt.shape)  # (B, U, D) or None
        a2s, logits, ctxs, alphas, caches = [state.a2], [], [], [], []
        for u in range(tgt.shape[1]):
            w = None if pinned is None else pinned[:, u]  # (B, D)
            a2, n3, ctx, alpha, _, cache = self._step(tgt[:, u], state, w)
            state = BookState(a2, state.aT, state.A, state.keep, state.lengths)
            a2s.append(a2)
            logits.append(n3)
            ctxs.append(ctx)
            alphas.append(alpha)
            caches.append(cache)
        weights = None
        if self.form != "context":
            weights = self.source_order(np.stack(alphas, axis=1), state.lengths)  # (B, U, S)
        src_arr = np.asarray(src)
        out = BookCache(
            src_arr, state.lengths, a1, tgt, np.stack(a2s, 1), np.stack(ctxs, 1), caches
        )
        return np.stack(logits, axis=1), weights, out  # (B, U, V)

    def _check_pinned(self, weights: Any, shape: tuple[int, ...]) -> np.ndarray | None:
        """``attention_weights`` of :meth:`forward` as (B, U, D) floats, or None."""
        if weights is None:
            return None
        if self.form == "context":
            raise ValueError(
                "attention_weights needs an attention form (dot, general, concat), the model's "
                "form is 'context'"
            )
        w = check_array("attention_weights", weights, ndim=3, dtype=self.dtype, layout="(B, U, D)")
        if w.shape != (*shape, self.D):
            raise ValueError(
                f"attention_weights must have shape (B, U, D) = {(*shape, self.D)}, got {w.shape}"
            )
        return w

    def backward(self, dlogits: Any, cache: BookCache) -> Backward:
        """BPTT through the decoder, the attention, the delay line and the encoder: the
        gradient of every parameter given d(loss)/d(logits) (B, U, V)."""
        p, c = self.params, self.context_key
        g = {k: np.zeros_like(v) for k, v in p.items()}
        dn3 = check_array("dlogits", dlogits, ndim=3, layout="(B, U, V)")
        B, U, _ = dn3.shape
        a2 = cache.a2  # (B, U + 1, S2)
        g["LW3,2"] += np.einsum("buv,buh->vh", dn3, a2[:, 1:])
        g["b3"] += dn3.sum(axis=(0, 1))
        da2 = dn3 @ p["LW3,2"]  # (B, U, S2) from the output layer
        S = cache.a1.shape[1]
        dA = np.zeros((B, self.hidden_size, self.D), dtype=self.dtype)  # (B, S1, D)
        daT = np.zeros((B, self.hidden_size), dtype=self.dtype)  # (B, S1)
        carry = np.zeros_like(daT)  # dL/da^2(t) from step t + 1
        for u in reversed(range(U)):
            dn2 = (da2[:, u] + carry) * (1.0 - a2[:, u + 1] ** 2)  # (B, S2)
            np.add.at(g["LW2,3"].T, cache.tgt[:, u], dn2)  # columns of the fed-back words
            g[c] += dn2.T @ cache.ctx[:, u]
            g["LW2,2"] += dn2.T @ a2[:, u]
            g["b2"] += dn2.sum(axis=0)
            dctx = dn2 @ p[c]  # (B, S1)
            carry = dn2 @ p["LW2,2"]  # (B, S2) to a^2(t-1)
            if self.form == "context":
                daT += dctx
            else:
                dA_u, dq, ga = attend_backward(self.form, p, dctx, cache.attn[u])
                dA += dA_u
                carry = carry + dq  # the query is a^2(t-1)
                for k, v in ga.items():
                    g[k] += v
        daT += carry  # a^2(T) = a^1(T)
        L, rows = cache.lengths, np.arange(B)
        da1 = delay_line_backward(dA, L, S)  # (B, S, S1)
        da1[rows, L - 1] += daT
        a1, prev_d = cache.a1, np.zeros_like(daT)
        for t in reversed(range(S)):
            dn1 = (da1[:, t] + prev_d) * (1.0 - a1[:, t] ** 2)  # (B, S1)
            np.add.at(g["IW1,1"].T, cache.src[:, t], dn1)
            if t > 0:
                g["LW1,1"] += dn1.T @ a1[:, t - 1]
            g["b1"] += dn1.sum(axis=0)
            prev_d = dn1 @ p["LW1,1"]  # (B, S1) to a^1(t-1)
        return Backward(g)

    # ------------------------------------------------------------------ decoding
    def start(self, src: Any, src_lengths: Any) -> BookState:
        """The decoding state at :math:`t = T` for :meth:`step`."""
        return self.encode(src, src_lengths)[1]

    def step(
        self, tokens: Any, state: BookState, weights: list[np.ndarray] | None = None
    ) -> tuple[np.ndarray, BookState]:
        """One decoder step for N rows: ``tokens`` :math:`a^3(t-1)` (N,) -> log-probabilities
        (N, V) and the next state; the attention weights in source order (N, S) are appended
        to ``weights`` if given."""
        tokens = check_array("tokens", tokens, ndim=1, kind="i", layout="(N,)")
        a2, n3, _, alpha, _, _ = self._step(tokens, state)
        if weights is not None and alpha is not None:
            weights.append(self.source_order(alpha[:, None, :], state.lengths)[:, 0])
        return log_softmax(n3, axis=1), BookState(a2, state.aT, state.A, state.keep, state.lengths)

    @staticmethod
    def reorder(state: BookState, index: np.ndarray) -> BookState:
        """The state rows of the hypotheses ``index`` (N',), for beam search."""
        i = np.asarray(index)
        return BookState(state.a2[i], state.aT[i], state.A[i], state.keep[i], state.lengths[i])

    def greedy(self, src: Any, src_lengths: Any, max_length: int = 50) -> list[list[int]]:
        """Greedy decoding of a batch: the target ids of each row up to (without) EOS."""
        max_length = check_int("max_length", max_length, min_value=1, max_value=MAX_STEPS)
        state = self.start(src, src_lengths)
        B = state.a2.shape[0]
        results = greedy_decode(self.step, state, BOS, EOS, max_length, batch_size=B)
        return [[t for t in r.tokens if t != EOS] for r in results]
