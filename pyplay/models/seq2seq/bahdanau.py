r"""A decoder that attends before each recurrent step (Bahdanau et al. 2015), with its own BPTT.

The query of step :math:`t` is the decoder's previous top-layer state :math:`s_{t-1}`
(:math:`s_0` the initial state, from the encoder); the context enters the recurrent step as an
input beside the previous token's embedding:

.. math::

    e_{tj} = \mathrm{score}(s_{t-1}, h_j), \quad
    \alpha_{tj} = \frac{m_j \exp e_{tj}}{\sum_k m_k \exp e_{tk}}, \quad
    c_t = \sum_j \alpha_{tj} h_j, \\
    s_t = f([E y_{t-1}; c_t], s_{t-1}), \qquad
    p(y_t \mid y_{<t}, x) = \mathrm{softmax}(W_o s_t + b_o),

with :math:`m_j` the mask of real source positions (padded ones get weight exactly 0). This is
the form d2l.ai teaches (``Seq2SeqAttentionDecoder``); Bahdanau's deep output layer
:math:`g(y_{t-1}, s_t, c_t)` is left out, the head reads :math:`s_t` alone. Unlike Luong's
attention (:mod:`pyplay.models.seq2seq.luong`), step :math:`t`'s context depends on step
:math:`t-1`'s state, so the recurrence cannot run ahead of the attention: the forward pass
alternates attend and step, and the backward pass walks the steps in reverse, adding each
context's gradient with respect to its query, :math:`\partial L / \partial s_{t-1}`, to the
previous step's output gradient.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["BahdanauCache", "BahdanauDecoder"]


@dataclass(frozen=True)
class BahdanauCache:
    """Per decoder step: the scorer's cache and the recurrent step's cache."""

    attn: list[Any]
    rnn: list[Any]
    embedding_dim: int


class BahdanauDecoder:
    """Runs a recurrent stack (``rnn``, input size ``embedding_dim + key_size``) one step at a
    time, each step's input the token embedding and the context that ``scorer`` (a module of
    :mod:`pyplay.nn.attention`, query size ``hidden_size``) computes from the previous state.

    The stack and the scorer keep their parameters; this class only wires them (it owns none).
    """

    def __init__(self, rnn: Any, scorer: Any) -> None:
        self.rnn = rnn
        self.scorer = scorer

    @staticmethod
    def _top(state: Any) -> np.ndarray:
        h = state[0] if isinstance(state, tuple) else state  # (L, B, H)
        return h[-1][:, None, :]  # (B, 1, H) the top layer's state, as a query

    def step(
        self, x_t: np.ndarray, state: Any, enc_out: np.ndarray, mask: np.ndarray
    ) -> tuple[np.ndarray, Any, np.ndarray, tuple[Any, Any]]:
        """One step for embeddings ``x_t`` (B, 1, E): ``(s_t (B, 1, H), state, weights (B, S),
        (scorer cache, recurrent cache))``."""
        c, a, attn_cache = self.scorer.forward(self._top(state), enc_out, enc_out, mask=mask)
        x = np.concatenate([x_t, c], axis=2)  # (B, 1, E + K)
        s, state, rnn_cache = self.rnn.forward(x, state=state)  # (B, 1, H)
        return s, state, a[:, 0], (attn_cache, rnn_cache)

    def forward(
        self, x: np.ndarray, state0: Any, enc_out: np.ndarray, mask: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, BahdanauCache]:
        """Teacher-forced decoder states ``s`` (B, U, H) for embeddings ``x`` (B, U, E), the
        attention weights (B, U, S) and the cache. Steps after a target's end are computed and
        never read (the decoder is causal), so target lengths are not needed."""
        U, E = x.shape[1:]
        state, outs, weights = state0, [], []
        attn_caches, rnn_caches = [], []
        for t in range(U):
            s, state, a, (attn_cache, rnn_cache) = self.step(x[:, t : t + 1], state, enc_out, mask)
            outs.append(s)
            weights.append(a)
            attn_caches.append(attn_cache)
            rnn_caches.append(rnn_cache)
        s_all = np.concatenate(outs, axis=1)  # (B, U, H)
        return s_all, np.stack(weights, axis=1), BahdanauCache(attn_caches, rnn_caches, E)

    def backward(
        self, ds: np.ndarray, cache: BahdanauCache
    ) -> tuple[np.ndarray, Any, np.ndarray, dict[str, np.ndarray], dict[str, np.ndarray]]:
        """BPTT through the alternating steps from d(loss)/d(s) (B, U, H):
        ``(dx (B, U, E), dstate0, denc_out (B, S, K), rnn grads, scorer grads)``."""
        E, U = cache.embedding_dim, ds.shape[1]
        dx = np.empty((*ds.shape[:2], E), dtype=ds.dtype)  # (B, U, E)
        denc_out: np.ndarray | None = None
        rnn_grads: dict[str, np.ndarray] = {}
        score_grads: dict[str, np.ndarray] = {}
        dstate: Any = None  # d(loss)/d(state after step t)
        dquery = np.zeros_like(ds[:, :1])  # (B, 1, H) from step t+1's attention
        for t in reversed(range(U)):
            ds_t = ds[:, t : t + 1] + dquery  # (B, 1, H) s_t is also step t+1's query
            dx_t, dstate, g = self.rnn.backward(ds_t, dstate, cache.rnn[t])  # (B, 1, E + K)
            dx[:, t] = dx_t[:, 0, :E]
            dq, dk, dv, gs = self.scorer.backward(dx_t[:, :, E:], cache.attn[t])  # (B, 1, H)
            dkv = dk + dv  # (B, S, K) keys and values are both the encoder states
            denc_out = dkv if denc_out is None else denc_out + dkv
            _accumulate(rnn_grads, g)
            _accumulate(score_grads, gs)
            dquery = dq
        # s_0's query gradient belongs to the initial state's top layer
        dh0, dc0 = dstate if isinstance(dstate, tuple) else (dstate, None)  # (L, B, H)
        dh0 = dh0.copy()
        dh0[-1] += dquery[:, 0]
        dstate0 = (dh0, dc0) if dc0 is not None else dh0
        assert denc_out is not None  # U >= 1
        return dx, dstate0, denc_out, rnn_grads, score_grads


def _accumulate(total: dict[str, np.ndarray], grads: dict[str, np.ndarray]) -> None:
    for name, g in grads.items():
        if name in total:
            total[name] += g
        else:
            total[name] = g.copy()
