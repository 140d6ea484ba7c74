"""Layers with explicit forward and hand-written backward passes, in PyTorch's names."""

from pyplay.nn.dropout import Dropout
from pyplay.nn.embedding import Embedding
from pyplay.nn.gru import GRU
from pyplay.nn.linear import Linear
from pyplay.nn.lstm import LSTM
from pyplay.nn.rnn import RNN
from pyplay.nn.sequences import pad_sequences

__all__ = ["GRU", "LSTM", "RNN", "Dropout", "Embedding", "Linear", "pad_sequences"]
