"""Layers with explicit forward and hand-written backward passes, in PyTorch's names.

Each name below is imported when first asked for (:mod:`pyplay._lazy`):
``from pyplay.nn import LSTM`` imports :mod:`.lstm` and what it needs only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyplay._lazy import lazy_names

if TYPE_CHECKING:
    from pyplay.nn.attention import (
        SCORERS,
        AdditiveAttention,
        CosineAttention,
        DotAttention,
        GeneralAttention,
        LocationAttention,
        ScaledDotAttention,
    )
    from pyplay.nn.conv2d import Conv2d
    from pyplay.nn.dropout import Dropout
    from pyplay.nn.embedding import Embedding
    from pyplay.nn.gru import GRU
    from pyplay.nn.layernorm import LayerNorm
    from pyplay.nn.linear import Linear
    from pyplay.nn.lstm import LSTM
    from pyplay.nn.multihead import MultiheadAttention
    from pyplay.nn.recurrent import Recurrent
    from pyplay.nn.rnn import RNN
    from pyplay.nn.sdpa import scaled_dot_product_attention, scaled_dot_product_attention_backward
    from pyplay.nn.sequences import pad_sequences
    from pyplay.nn.transformer import (
        LayerState,
        TransformerEncoder,
        TransformerEncoderLayer,
        TransformerState,
    )
    from pyplay.nn.transformer_decoder import TransformerDecoder, TransformerDecoderLayer

# each name -> the module that defines it
HOMES = {
    "AdditiveAttention": "pyplay.nn.attention",
    "Conv2d": "pyplay.nn.conv2d",
    "CosineAttention": "pyplay.nn.attention",
    "DotAttention": "pyplay.nn.attention",
    "Dropout": "pyplay.nn.dropout",
    "Embedding": "pyplay.nn.embedding",
    "GRU": "pyplay.nn.gru",
    "GeneralAttention": "pyplay.nn.attention",
    "LSTM": "pyplay.nn.lstm",
    "LayerNorm": "pyplay.nn.layernorm",
    "LayerState": "pyplay.nn.transformer",
    "Linear": "pyplay.nn.linear",
    "LocationAttention": "pyplay.nn.attention",
    "MultiheadAttention": "pyplay.nn.multihead",
    "RNN": "pyplay.nn.rnn",
    "Recurrent": "pyplay.nn.recurrent",
    "SCORERS": "pyplay.nn.attention",
    "ScaledDotAttention": "pyplay.nn.attention",
    "TransformerDecoder": "pyplay.nn.transformer_decoder",
    "TransformerDecoderLayer": "pyplay.nn.transformer_decoder",
    "TransformerEncoder": "pyplay.nn.transformer",
    "TransformerEncoderLayer": "pyplay.nn.transformer",
    "TransformerState": "pyplay.nn.transformer",
    "pad_sequences": "pyplay.nn.sequences",
    "scaled_dot_product_attention": "pyplay.nn.sdpa",
    "scaled_dot_product_attention_backward": "pyplay.nn.sdpa",
}

__all__ = [
    "GRU",
    "LSTM",
    "RNN",
    "SCORERS",
    "AdditiveAttention",
    "Conv2d",
    "CosineAttention",
    "DotAttention",
    "Dropout",
    "Embedding",
    "GeneralAttention",
    "LayerNorm",
    "LayerState",
    "Linear",
    "LocationAttention",
    "MultiheadAttention",
    "Recurrent",
    "ScaledDotAttention",
    "TransformerDecoder",
    "TransformerDecoderLayer",
    "TransformerEncoder",
    "TransformerEncoderLayer",
    "TransformerState",
    "pad_sequences",
    "scaled_dot_product_attention",
    "scaled_dot_product_attention_backward",
]

__getattr__, __dir__ = lazy_names(__name__, HOMES, globals())
