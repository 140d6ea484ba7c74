r"""The encoder-decoder transformer (Vaswani et al. 2017) over token ids, with the protocol of
:class:`~pyplay.models.seq2seq.EncoderDecoder`: the same trainer, greedy decoding and beam search.

.. math::

    M = \mathrm{Enc}(\sqrt D\, E_s[x] + P), \qquad
    Z = \mathrm{Dec}(\sqrt D\, E_t[y_{<t}] + P,\; M), \qquad
    p(y_t \mid y_{<t}, x) = \mathrm{softmax}(W_o z_t + b_o),

with :class:`~pyplay.nn.TransformerEncoder` and :class:`~pyplay.nn.TransformerDecoder` stacks
(the decoder's self-attention causal, its cross-attention over the real source positions
only), pre-norm blocks with final layer norms by default, and the positional encoding ``P``
of :mod:`pyplay.nn.positional` shared by both sides. Decoding steps through the decoder with a
key/value cache: the memory's keys and values are projected once by :meth:`start`, each
:meth:`step` appends one position.

Parameters: ``src_embedding.weight``, ``tgt_embedding.weight``, ``pos.weight`` (learned
positions), ``encoder.layers.0.self_attn.in_proj_weight``, ..., ``encoder.norm.*``,
``decoder.layers.0.multihead_attn.*``, ..., ``decoder.norm.*``, ``head.weight``, ``head.bias``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay._checks import as_generator, check_array, check_int
from pyplay.decode.greedy import greedy_decode
from pyplay.decode.step import RowsState
from pyplay.limits import MAX_STEPS
from pyplay.losses import log_softmax
from pyplay.models.contract import (
    Backward,
    Seq2SeqBase,
    blocks,
    check_model_size,
    config_int,
    gather_params,
)
from pyplay.nn.embedding import Embedding
from pyplay.nn.linear import Linear
from pyplay.nn.positional import input_width, make_positional
from pyplay.nn.transformer import TransformerEncoder, TransformerState
from pyplay.nn.transformer_decoder import TransformerDecoder
from pyplay.tasks.pairs import BOS, EOS, PAD

__all__ = ["TransformerSeq2Seq", "TransformerSeq2SeqState"]


@dataclass(frozen=True)
class _Cache:
    src_emb: Any
    tgt_emb: Any
    src_pos: Any
    tgt_pos: Any
    encoder: Any
    decoder: Any
    head: Any


@dataclass(frozen=True)
class TransformerSeq2SeqState(RowsState):
    """Decoding state of N hypotheses: the decoder's key/value caches (self-attention so far,
    the memory's cross-attention keys and values)."""

    decoder: TransformerState


class TransformerSeq2Seq(Seq2SeqBase):
    """Encoder-decoder transformer (see the module docstring).

    Parameters
    ----------
    src_vocab_size, tgt_vocab_size : int
        Vocabulary sizes (ids 0, 1, 2 are PAD, BOS, EOS in both).
    d_model, nhead, num_encoder_layers, num_decoder_layers, dim_feedforward : int
    positional : one of :data:`~pyplay.nn.positional.POSITIONAL`
        ``"concat"``: embeddings ``d_model - d_pos`` wide, the code in the last ``d_pos``.
    max_len : int
        Longest source or target.
    norm_first : bool
    activation : {"gelu", "relu"}
    dropout : float
    dtype, rng : as everywhere in pyplay.
    value_function : {"linear", "identity"}
        The self-attention's value function in every encoder and decoder layer (the
        cross-attention keeps its own): ``"identity"`` has none, :math:`V = X` (Solberg's
        TEK5040 lecture; :class:`~pyplay.nn.multihead.MultiheadAttention`).
    """

    def __init__(
        self,
        src_vocab_size: int,
        tgt_vocab_size: int,
        d_model: int = 32,
        nhead: int = 4,
        num_encoder_layers: int = 2,
        num_decoder_layers: int = 2,
        dim_feedforward: int | None = None,
        positional: str = "sinusoidal",
        max_len: int = 128,
        norm_first: bool = True,
        activation: str = "gelu",
        dropout: float = 0.0,
        dtype: Any = np.float32,
        rng: np.random.Generator | int | None = 0,
        value_function: str = "linear",
    ) -> None:
        self._set_vocabs(src_vocab_size, tgt_vocab_size, dtype)
        D = self.d_model = check_int("d_model", d_model, min_value=1)
        F = 4 * D if dim_feedforward is None else dim_feedforward
        check_model_size(type(self), locals())  # before anything is built
        gen = as_generator(rng)
        E = input_width(positional, D)  # D, or D - d_pos with a concatenated position code
        self.src_emb = Embedding(self.src_vocab_size, E, padding_idx=PAD, dtype=self.dtype, rng=gen)
        self.tgt_emb = Embedding(self.tgt_vocab_size, E, padding_idx=PAD, dtype=self.dtype, rng=gen)
        for emb in (self.src_emb, self.tgt_emb):
            emb.params["weight"] *= self.dtype.type(D**-0.5)  # N(0, 1/D), scaled by sqrt(D)
        self.pos = make_positional(positional, max_len, D, self.dtype, gen)
        self.positional, self.max_len = positional, self.pos.max_len
        self.nhead, self.dim_feedforward = nhead, F
        self.num_encoder_layers, self.num_decoder_layers = num_encoder_layers, num_decoder_layers
        self.norm_first, self.activation, self.dropout = norm_first, activation, float(dropout)
        kw: dict[str, Any] = dict(
            dim_feedforward=F, dropout=dropout, activation=activation, norm_first=norm_first,
            norm=norm_first, dtype=self.dtype, rng=gen, value_function=value_function,
        )  # fmt: skip
        self.encoder = TransformerEncoder(D, nhead, num_encoder_layers, **kw)
        self.decoder = TransformerDecoder(D, nhead, num_decoder_layers, **kw)
        self.value_function = self.encoder.value_function
        self.head = Linear(D, self.tgt_vocab_size, dtype=self.dtype, rng=gen)
        self.params: dict[str, np.ndarray] = gather_params(
            [
                ("src_embedding", self.src_emb), ("tgt_embedding", self.tgt_emb), ("pos", self.pos),
                ("encoder", self.encoder), ("decoder", self.decoder), ("head", self.head),
            ]
        )  # fmt: skip

    @classmethod
    def estimate_parameters(cls, config: Mapping[str, Any]) -> int:
        """An upper estimate of the parameter count ``config`` describes (without building)."""
        D = config_int(config, "d_model", 32)
        F = config_int(config, "dim_feedforward", 4 * D)
        Vs, Vt = config_int(config, "src_vocab_size", 4), config_int(config, "tgt_vocab_size", 4)
        pos = config_int(config, "max_len", 128) * D if config.get("positional") == "learned" else 0
        enc = config_int(config, "num_encoder_layers", 2)
        dec = config_int(config, "num_decoder_layers", 2)
        n = (Vs + Vt) * D + pos + blocks(D, F, enc, 1) + blocks(D, F, dec, 2) + 4 * D  # 2 norms
        return n + (D + 1) * Vt  # the head

    # ------------------------------------------------------------------ pieces
    def _embed(self, emb: Embedding, ids: np.ndarray, offset: int = 0) -> tuple[Any, ...]:
        x, emb_cache = emb.forward(ids)  # (B, T, D)
        u, pos_cache = self.pos.forward(x * self.dtype.type(np.sqrt(self.d_model)), offset)
        return u, emb_cache, pos_cache  # u: (B, T, D)

    @staticmethod
    def _pad_mask(src: np.ndarray, src_lengths: Any) -> np.ndarray:
        n = check_array("src_lengths", src_lengths, ndim=1, kind="i", layout="(B,)")
        return np.arange(src.shape[1])[None, :] >= n[:, None]  # (B, S) True = padding

    def encode(self, src: Any, src_lengths: Any) -> tuple[np.ndarray, np.ndarray, tuple]:
        """``(memory (B, S, D), padding mask (B, S), caches)``."""
        src = check_array("src", src, ndim=2, kind="i", layout="(B, S)")
        kpm = self._pad_mask(src, src_lengths)
        u, emb_cache, pos_cache = self._embed(self.src_emb, src)
        memory, enc_cache = self.encoder.forward(u, src_key_padding_mask=kpm)  # (B, S, D)
        return memory, kpm, (emb_cache, pos_cache, enc_cache)

    # ------------------------------------------------------------------ training
    def forward(
        self, src: Any, src_lengths: Any, tgt_in: Any, tgt_lengths: Any = None
    ) -> tuple[np.ndarray, np.ndarray, _Cache]:
        """Teacher-forced logits (B, U, tgt_vocab_size), the last decoder layer's
        cross-attention weights averaged over heads (B, U, S), and the cache. Target steps
        past ``tgt_lengths`` are computed and never read (the decoder is causal)."""
        memory, kpm, (src_emb, src_pos, enc_cache) = self.encode(src, src_lengths)
        tgt_in = self._check_tgt_in(tgt_in, memory.shape[0])  # (B, U)
        v, tgt_emb, tgt_pos = self._embed(self.tgt_emb, tgt_in)  # (B, U, D)
        z, dec_cache = self.decoder.forward(
            v, memory, memory_key_padding_mask=kpm, tgt_is_causal=True
        )  # (B, U, D)
        logits, head_cache = self.head.forward(z)  # (B, U, V)
        weights = dec_cache.layers[-1].record()["multihead_attn.weights"].mean(axis=1)
        cache = _Cache(src_emb, tgt_emb, src_pos, tgt_pos, enc_cache, dec_cache, head_cache)
        return logits, weights, cache  # weights: (B, U, S)

    def backward(self, dlogits: Any, cache: _Cache) -> Backward:
        """Gradients of every parameter (keys of :attr:`params`) given d(loss)/d(logits)."""
        grads: dict[str, np.ndarray] = {}
        dz, g = self.head.backward(dlogits, cache.head)  # (B, U, D)
        grads.update({f"head.{k}": v for k, v in g.items()})
        dv, dmemory, g = self.decoder.backward(dz, cache.decoder)  # (B, U, D), (B, S, D)
        grads.update({f"decoder.{k}": v for k, v in g.items()})
        du, g = self.encoder.backward(dmemory, cache.encoder)  # (B, S, D)
        grads.update({f"encoder.{k}": v for k, v in g.items()})
        scale = self.dtype.type(np.sqrt(self.d_model))
        pos_grads: dict[str, np.ndarray] = {}
        for name, emb, d, emb_cache, pos_cache in (
            ("src_embedding", self.src_emb, du, cache.src_emb, cache.src_pos),
            ("tgt_embedding", self.tgt_emb, dv, cache.tgt_emb, cache.tgt_pos),
        ):
            dx, gp = self.pos.backward(d, pos_cache)  # (B, T, D)
            for k, v in gp.items():
                pos_grads[k] = pos_grads[k] + v if k in pos_grads else v
            _, g = emb.backward(dx * scale, emb_cache)
            grads.update({f"{name}.{k}": v for k, v in g.items()})
        grads.update({f"pos.{k}": v for k, v in pos_grads.items()})
        return Backward({name: grads[name] for name in self.params})

    # ------------------------------------------------------------------ decoding
    def start(self, src: Any, src_lengths: Any) -> TransformerSeq2SeqState:
        """The decoding state for :meth:`step`: the memory's keys and values, projected once."""
        memory, kpm, _ = self.encode(src, src_lengths)
        return TransformerSeq2SeqState(self.decoder.init_state(memory, kpm))

    def step(
        self,
        tokens: Any,
        state: TransformerSeq2SeqState,
        weights: list[np.ndarray] | None = None,
    ) -> tuple[np.ndarray, TransformerSeq2SeqState]:
        """One decoder step for N hypotheses: ``tokens`` (N,) -> log-probabilities (N, V) and
        the next state; the last layer's cross-attention weights (N, S), averaged over heads,
        are appended to ``weights`` if given."""
        tokens = check_array("tokens", tokens, ndim=1, kind="i", layout="(N,)")
        if not isinstance(state, TransformerSeq2SeqState):
            raise TypeError(f"state must be a TransformerSeq2SeqState, got {type(state).__name__}")
        v, _, _ = self._embed(self.tgt_emb, tokens[:, None], state.decoder.length)  # (N, 1, D)
        z, dec_state, record = self.decoder.step(v, state.decoder)  # (N, 1, D)
        if weights is not None:
            last = self.decoder.num_layers - 1
            weights.append(record[f"layers.{last}.multihead_attn.weights"][:, :, 0].mean(axis=1))
        logits, _ = self.head.forward(z[:, 0])  # (N, V)
        return log_softmax(logits, axis=1), TransformerSeq2SeqState(dec_state)

    @staticmethod
    def reorder(state: TransformerSeq2SeqState, index: np.ndarray) -> TransformerSeq2SeqState:
        """The state rows of the hypotheses ``index`` (N',), for beam search."""
        return state.reorder(index)

    def greedy(self, src: Any, src_lengths: Any, max_length: int = 50) -> list[list[int]]:
        """Greedy decoding of a batch: the target ids of each row up to (without) EOS."""
        max_length = check_int("max_length", max_length, min_value=1, max_value=MAX_STEPS)
        max_length = min(max_length, self.pos.max_len)
        state = self.start(src, src_lengths)
        B = len(np.asarray(src_lengths))
        results = greedy_decode(self.step, state, BOS, EOS, max_length, batch_size=B)
        return [[t for t in r.tokens if t != EOS] for r in results]
