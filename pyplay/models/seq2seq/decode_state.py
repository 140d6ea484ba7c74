"""The decoding state of a recurrent encoder-decoder: N hypotheses decoded side by side.

:meth:`EncoderDecoder.start <pyplay.models.seq2seq.encoder_decoder.EncoderDecoder.start>` makes
one from a batch of sources, each :meth:`~pyplay.models.seq2seq.encoder_decoder.EncoderDecoder.step`
returns the next, and a beam search keeps the rows of the hypotheses it goes on with
(:meth:`DecodeState.rows`, the model's ``reorder``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay._checks import check_rows

__all__ = ["DecodeState"]


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
