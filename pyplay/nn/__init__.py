"""Layers with explicit forward and hand-written backward passes, in PyTorch's names."""

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
