"""Layers with explicit forward and hand-written backward passes, in PyTorch's names."""

from pyplay.nn.attention import (
    SCORERS,
    AdditiveAttention,
    CosineAttention,
    DotAttention,
    GeneralAttention,
    LocationAttention,
    ScaledDotAttention,
    scaled_dot_product_attention,
    scaled_dot_product_attention_backward,
)
from pyplay.nn.dropout import Dropout
from pyplay.nn.embedding import Embedding
from pyplay.nn.gru import GRU
from pyplay.nn.linear import Linear
from pyplay.nn.lstm import LSTM
from pyplay.nn.multihead import MultiheadAttention
from pyplay.nn.rnn import RNN
from pyplay.nn.sequences import pad_sequences

__all__ = [
    "GRU",
    "LSTM",
    "RNN",
    "SCORERS",
    "AdditiveAttention",
    "CosineAttention",
    "DotAttention",
    "Dropout",
    "Embedding",
    "GeneralAttention",
    "Linear",
    "LocationAttention",
    "MultiheadAttention",
    "ScaledDotAttention",
    "pad_sequences",
    "scaled_dot_product_attention",
    "scaled_dot_product_attention_backward",
]
