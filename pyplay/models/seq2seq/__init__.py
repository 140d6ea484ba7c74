"""Sequence-to-sequence models: the recurrent encoder-decoder (:mod:`.encoder_decoder`) and its two
attention wirings, Luong's global attention after each decoder step (:mod:`.luong`) and
Bahdanau's attention from the previous state fed into each step (:mod:`.bahdanau`)."""

from pyplay.models.seq2seq.encoder_decoder import WIRINGS, DecodeState, EncoderDecoder

__all__ = ["WIRINGS", "DecodeState", "EncoderDecoder"]
