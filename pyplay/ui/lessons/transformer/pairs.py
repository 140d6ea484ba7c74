r"""The encoder-decoder mode of the "Transformers" lesson: a
:class:`~pyplay.models.transformer.seq2seq.TransformerSeq2Seq` on a pair task of the "Sequence
to sequence" lesson, the recurrent attention model
(:class:`~pyplay.models.seq2seq.EncoderDecoder`, LSTM cells, Luong attention) beside it, every
head's attention of the three kinds, and greedy decoding of a typed source by both.

The three attention maps of one layer and head ``h`` (queries down, keys across):

.. math::

    A^{enc} = \mathrm{softmax}\Big(\frac{Q_x K_x^\top}{\sqrt{d_k}}\Big), \qquad
    A^{dec} = \mathrm{softmax}\Big(\frac{Q_y K_y^\top}{\sqrt{d_k}} + M\Big), \qquad
    A^{cross} = \mathrm{softmax}\Big(\frac{Q_y K_m^\top}{\sqrt{d_k}}\Big),

with queries and keys the head's projections of the source stream (:math:`Q_x, K_x`), of the
target stream (:math:`Q_y, K_y`, and :math:`M_{uv} = -\infty` for :math:`v > u`: the causal
mask) and, for cross-attention, queries from the target stream and keys from the encoder's
output memory (:math:`K_m`). Each row sums to 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay.models.seq2seq import EncoderDecoder
from pyplay.models.transformer.seq2seq import TransformerSeq2Seq
from pyplay.ui.lessons.seq2seq.state import PAIR_LABELS, parse_source

__all__ = [
    "ARCHS",
    "ENC_DEC",
    "PAIR_CHOICES",
    "PairView",
    "decode",
    "pair_model",
    "pair_view",
    "recurrent_model",
]

ENC_DEC = "encoder_decoder"
ARCHS = {"Decoder only (a language model)": "decoder", "Encoder-decoder (pairs)": ENC_DEC}
PAIR_CHOICES = {label: key for label, key in PAIR_LABELS.items() if key != "pairs"}
MAX_LEN = 128  # the longest source or target the transformer takes


@dataclass(frozen=True)
class PairView:
    """Attention of one pair, per layer: ``encoder[l]`` (heads, S, S), ``decoder[l]`` (heads,
    U, U), ``cross[l]`` (heads, U, S). ``source`` names the S source tokens, ``read`` the U
    tokens the decoder reads (BOS and the target), ``written`` the U it writes (the target and
    EOS); ``text`` the pair as "source -> target"."""

    encoder: list[np.ndarray]
    decoder: list[np.ndarray]
    cross: list[np.ndarray]
    source: list[str]
    read: list[str]
    written: list[str]
    text: str


def pair_model(
    task: Any,
    d_model: int,
    nhead: int,
    num_layers: int,
    positional: str,
    seed: int,
    value_function: str = "linear",
) -> TransformerSeq2Seq:
    """The transformer for ``task``: ``num_layers`` encoder and as many decoder layers
    (``value_function``: their self-attention's, see :class:`TransformerSeq2Seq`)."""
    return TransformerSeq2Seq(
        len(task.src_vocab), len(task.tgt_vocab), d_model=d_model, nhead=nhead,
        num_encoder_layers=num_layers, num_decoder_layers=num_layers, positional=positional,
        max_len=MAX_LEN, rng=seed, value_function=value_function,
    )  # fmt: skip


def recurrent_model(task: Any, hidden_size: int, seed: int) -> EncoderDecoder:
    """The recurrent model beside it: LSTM encoder and decoder of width ``hidden_size`` with
    Luong attention (general score), as the seq2seq lesson (:mod:`~pyplay.ui.lessons.seq2seq`)
    trains it."""
    return EncoderDecoder(
        len(task.src_vocab), len(task.tgt_vocab), embedding_dim=16, hidden_size=hidden_size,
        cell="lstm", wiring="attention", score="general", rng=seed,
    )  # fmt: skip


def _tokens(vocab: Any, ids: np.ndarray) -> list[str]:
    """Axis labels of ``ids``: their symbols, a space shown as ␣."""
    return [vocab.decode([int(i)]).replace(" ", "␣") for i in ids]


def pair_view(model: TransformerSeq2Seq, task: Any, index: int, seed: int) -> PairView:
    """Every layer's and head's attention on pair ``index`` (0..7) of a fixed batch of
    ``task``'s pairs (drawn with its own seed, so the views show the same pair as the model
    trains), teacher-forced."""
    fixed = type(task)(**{**task.config, "rng": 10_000 + seed})
    batch = fixed.batch(8)
    k = int(np.clip(index, 0, 7))
    S = int(batch.src_lengths[k])
    U = int(batch.tgt_mask[k].sum())  # the target and EOS
    src = batch.src[k : k + 1, :S]  # (1, S)
    tgt_in = batch.tgt_in[k : k + 1, :U]  # (1, U)
    _, _, cache = model.forward(src, np.array([S]), tgt_in)
    enc, dec = cache.encoder.record(), cache.decoder.record()
    L = range(len(model.encoder.layers))
    target = _tokens(task.tgt_vocab, batch.tgt_out[k, : U - 1])
    return PairView(
        [enc[f"layers.{i}.self_attn.weights"][0] for i in L],  # (h, S, S)
        [dec[f"layers.{i}.self_attn.weights"][0] for i in L],  # (h, U, U)
        [dec[f"layers.{i}.multihead_attn.weights"][0] for i in L],  # (h, U, S)
        _tokens(task.src_vocab, src[0]),
        ["<bos>", *target],
        [*target, "<eos>"],
        f"{task.src_vocab.decode(src[0])} -> {task.tgt_vocab.decode(batch.tgt_out[k])}",
    )


def decode(model: Any, task: Any, text: str) -> str:
    """``model``'s greedy output for the typed source ``text`` (ValueError when it does not
    fit the task's vocabulary or the transformer's longest sequence)."""
    _, ids = parse_source(task.src_vocab, text)  # (1, S)
    S = ids.shape[1]
    if S > MAX_LEN:
        raise ValueError(f"at most {MAX_LEN} source tokens, got {S}")
    out = model.greedy(ids, np.array([S]), max_length=min(3 * S + 10, MAX_LEN))
    return str(task.tgt_vocab.decode(out[0]))
