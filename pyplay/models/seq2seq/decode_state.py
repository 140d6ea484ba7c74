"""Decoding a recurrent encoder-decoder: N hypotheses decoded side by side.

:class:`StepDecoding` gives :class:`~pyplay.models.seq2seq.encoder_decoder.EncoderDecoder` its
decoding methods: ``start`` makes a :class:`DecodeState` from a batch of sources, each ``step``
returns the next and a beam search keeps the rows of the hypotheses it goes on with
(:meth:`DecodeState.rows`, the model's ``reorder``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay._checks import check_array, check_rows
from pyplay.losses import log_softmax

__all__ = ["DecodeState", "StepDecoding"]


@dataclass(frozen=True)
class DecodeState:
    """Decoder state of N hypotheses: the recurrent state (L, N, H) (or (h, c)), the constant
    context (N, H) of wiring "context", and the encoder outputs (N, S, D*H) with their mask
    (N, S) for attention."""

    rnn: Any
    context: np.ndarray | None
    enc_out: np.ndarray | None
    mask: np.ndarray | None

    def rows(self, index: Any) -> DecodeState:
        """The state of the hypotheses ``index`` (N',), in that order (repeats allowed)."""
        h = self.rnn[0] if isinstance(self.rnn, tuple) else self.rnn  # (L, N, H)
        index = check_rows("index", index, h.shape[1])
        if isinstance(self.rnn, tuple):
            rnn = tuple(h[:, index] for h in self.rnn)  # (L, N', H) each
        else:
            rnn = self.rnn[:, index]  # (L, N', H)
        rows = [None if v is None else v[index] for v in (self.context, self.enc_out, self.mask)]
        return DecodeState(rnn, *rows)


class StepDecoding:
    """The decoding methods of an encoder-decoder (see the module docstring); the model gives
    ``encode``, ``_decoder_input``, ``_mask``, its wiring and its parts."""

    wiring: str
    attn: Any  # Luong's attention after the step, or None
    bahdanau: Any  # a decoder that attends before each step (Bahdanau's, GNMT's), or None
    dec: Any
    head: Any
    encode: Any
    _decoder_input: Any
    _mask: Any

    def start(self, src: Any, src_lengths: Any) -> DecodeState:
        """The decoding state for :meth:`step`."""
        state0, enc_out, _, _, _ = self.encode(src, src_lengths)
        h0 = state0[0] if isinstance(state0, tuple) else state0
        context = h0[-1].copy() if self.wiring == "context" else None  # (B, H)
        if self.attn is None and self.bahdanau is None:
            return DecodeState(state0, context, None, None)
        return DecodeState(state0, context, enc_out, self._mask(enc_out, src_lengths))

    def step(
        self, tokens: Any, state: DecodeState, weights: list[np.ndarray] | None = None
    ) -> tuple[np.ndarray, DecodeState]:
        """One decoder step for N hypotheses: ``tokens`` (N,) -> log-probabilities (N, V) and
        the next state (the protocol of :mod:`pyplay.decode` searches). With wirings
        "attention" and "bahdanau", the step's attention weights (N, S) are appended to
        ``weights`` if given.
        """
        tokens = check_array("tokens", tokens, ndim=1, kind="i", layout="(N,)")
        x, _ = self._decoder_input(tokens[:, None], state.context)  # (N, 1, E [+ H])
        if self.bahdanau is not None and state.enc_out is not None and state.mask is not None:
            s, rnn_state, a, _ = self.bahdanau.step(x, state.rnn, state.enc_out, state.mask)
            if weights is not None:
                weights.append(a)
        else:
            s, rnn_state, _ = self.dec.forward(x, state=state.rnn, training=False)  # (N, 1, H)
        if self.attn is not None and state.enc_out is not None and state.mask is not None:
            s, a, _ = self.attn.forward(s, state.enc_out, state.mask)  # (N, 1, H), (N, 1, S)
            if weights is not None:
                weights.append(a[:, 0])
        z, _ = self.head.forward(s[:, 0])  # (N, V)
        next_state = DecodeState(rnn_state, state.context, state.enc_out, state.mask)
        return log_softmax(z, axis=1), next_state

    @staticmethod
    def reorder(state: DecodeState, index: np.ndarray) -> DecodeState:
        """The state rows of the hypotheses ``index`` (N',), for beam search."""
        return state.rows(index)
