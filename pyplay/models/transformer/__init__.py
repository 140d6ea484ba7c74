"""Transformer models: a causal decoder-only model (:mod:`.lm`, a tiny GPT on the character
model) and an encoder-decoder (:mod:`.seq2seq`)."""

from pyplay.models.transformer.lm import TransformerModel
from pyplay.models.transformer.seq2seq import TransformerSeq2Seq

__all__ = ["TransformerModel", "TransformerSeq2Seq"]
