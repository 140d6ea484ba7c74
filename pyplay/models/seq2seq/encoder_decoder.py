"""Encoder-decoder (sequence-to-sequence) models in the three classic wirings.

The encoder reads the source :math:`x_1 .. x_S` (embedding, then a recurrent stack); its final
state :math:`h^{enc}_S` (each sequence's own last step) summarises it. The decoder is a
recurrent stack over the previous target token :math:`y_{t-1}` (teacher forcing while
training: :math:`y_0` is BOS), followed by a linear head over the target vocabulary.

``wiring="init"`` (Sutskever et al. 2014)
    The summary initialises the decoder: :math:`s_0 = h^{enc}_S`, then
    :math:`s_t = f(E y_{t-1}, s_{t-1})`.
``wiring="context"`` (the textbook form)
    The summary also enters every decoder step as a constant input,
    :math:`s_t = f([E y_{t-1}; c], s_{t-1})` with :math:`c` the top layer's :math:`h^{enc}_S`,
    in the book's notation :math:`a^2(t) = \\mathrm{tansig}(IW^{2,2} p^2(t) + LW^{2,1} c
    + LW^{2,2} a^2(t-1) + b^2)` with :math:`c = a^1(S)` and :math:`p^2(t)` the embedded
    previous target (:func:`pyplay.models.textbook.trace.textbook_trace` writes out every
    term).
``wiring="attention"`` (Luong et al. 2015)
    As "init", and every decoder state attends over all encoder states
    (:class:`~pyplay.models.seq2seq.luong.LuongAttention`, ``score`` one of its six scores); the
    head reads :math:`\\tilde s_t = \\tanh(W_c [c_t; s_t])` instead of :math:`s_t`.
``wiring="bahdanau"`` (Bahdanau et al. 2015)
    As "init", and before every step the previous state :math:`s_{t-1}` attends over the
    encoder states; the context enters the step as an input,
    :math:`s_t = f([E y_{t-1}; c_t], s_{t-1})`
    (:class:`~pyplay.models.seq2seq.bahdanau.BahdanauDecoder`,
    the decoder then runs one step at a time, forward and backward).

Where nothing but the embedding comes before a recurrent stack (the encoder unless a shared net
reads zero context inputs; the decoder of "init" and "attention" while training), the stack
reads the token ids with the table (:mod:`pyplay.nn.token_input`): fewer products, same sums.

A bidirectional encoder's two final states are joined by a bridge,
:math:`s_{l,0} = \\tanh(W_b [h^{\\rightarrow}_{l,S}; h^{\\leftarrow}_{l,1}] + b_b)` in every
layer l (and, for an LSTM, the cell :math:`W_c [c^{\\rightarrow}; c^{\\leftarrow}] + b_c`), see
:mod:`.bridge`; attention reads both directions side by side, encoder states of width 2H.

``encoder="gnmt"`` (Wu et al. 2016, the GNMT of Solberg's lecture, :mod:`.gnmt`): a
bidirectional bottom encoder layer under one-way layers, residual connections from layer 3 in
encoder and decoder, the bottom decoder layer's output querying the attention (wiring
"bahdanau": its previous output, as the paper; "attention": this step's) and the context
entering every decoder layer above it. Its parameters are ``encoder.bottom.*``,
``encoder.upper.*``, ``encoder.bridge.*``, ``decoder.bottom.*`` and ``decoder.layer{l}.*``.

``share_rnn=True`` (Solberg's TEK5040 lecture's "encoder-decoder, shared RNN"): one recurrent
net reads the source and then goes on writing the target, with the same weights,
:math:`h_t = f(E_s x_t, h_{t-1})` for t = 1..S, then :math:`s_0 = h_S` and
:math:`s_t = f(E_t y_{t-1}, s_{t-1})`; the two embeddings and the head stay separate. Where the
wiring feeds the decoder a context too (``"context"``, ``"bahdanau"``) the encoder reads that
part of the input as zeros. A shared net reads left to right only: no bidirectional encoder.

Parameters are named ``encoder.embedding.weight``, ``encoder.rnn.weight_ih_l0``, ...,
``bridge.h.weight``, ``decoder.embedding.weight``, ``decoder.rnn.*``, ``head.weight``/``bias``;
with a shared RNN its parameters are ``rnn.*`` (no ``encoder.rnn`` or ``decoder.rnn``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay._checks import as_generator, check_array, check_choice, check_int
from pyplay.decode.greedy import greedy_decode
from pyplay.limits import MAX_STEPS
from pyplay.models.contract import (
    Backward,
    Seq2SeqBase,
    check_model_size,
    config_int,
    gather_params,
    recurrent,
)
from pyplay.models.seq2seq.bahdanau import BahdanauCache, BahdanauDecoder
from pyplay.models.seq2seq.bridge import Bridge, BridgeCache
from pyplay.models.seq2seq.decode_state import DecodeState, StepDecoding
from pyplay.models.seq2seq.gnmt import QUERIES, GNMTCache, GNMTDecoder, GNMTEncoder, check_gnmt
from pyplay.models.seq2seq.luong import SCORES, LuongAttention, make_scorer
from pyplay.nn import GRU, LSTM, RNN, Embedding, Linear
from pyplay.tasks.pairs import BOS, EOS, PAD

__all__ = ["WIRINGS", "DecodeState", "EncoderDecoder"]

WIRINGS = ("init", "context", "attention", "bahdanau")  # encoder="gnmt": the attending two
ATTENDING = ("attention", "bahdanau")  # the wirings that use a score
NO_ATTENTION_SCORE = "general"  # what the other wirings record as their (unused) score
CELLS = {"rnn": RNN, "lstm": LSTM, "gru": GRU}


@dataclass(frozen=True)
class Seq2SeqCache:
    """What :meth:`EncoderDecoder.backward` needs from the forward pass."""

    enc_emb: Any
    enc: Any
    attn: Any  # LuongAttention cache ("attention") or BahdanauCache ("bahdanau")
    bridge: BridgeCache | None  # when bidirectional
    dec_emb: Any
    dec: Any  # None with "bahdanau" (its steps' caches are in attn)
    head: Any
    U: int


class EncoderDecoder(StepDecoding, Seq2SeqBase):
    """An encoder-decoder over token ids (see the module docstring for the equations).

    Parameters
    ----------
    src_vocab_size, tgt_vocab_size : int
        Vocabulary sizes (ids 0, 1, 2 are PAD, BOS, EOS in both).
    embedding_dim, hidden_size, num_layers : int
        Shared by encoder and decoder.
    cell : {"rnn", "lstm", "gru"}
    bidirectional_encoder : bool
        Join the encoder's two directions with a :class:`~.bridge.Bridge`.
    wiring : {"init", "context", "attention", "bahdanau"}
    score : {"general", "dot", "scaled_dot", "additive", "cosine", "location"}, optional
        The attention score (wirings "attention" and "bahdanau"; "location" reads at most 64
        source steps). Default "general" for Luong's attention, "additive" for Bahdanau's.
    share_rnn : bool
        One recurrent net for encoder and decoder (see the module docstring); not with
        ``bidirectional_encoder``.
    encoder : {"stack", "gnmt"}
        ``"gnmt"``: Google's NMT (:mod:`.gnmt`), encoder and decoder; with ``num_layers >= 2``
        and wiring "bahdanau" (Wu et al.) or "attention"; older files load as "stack".
    scale_by : {"key_size", "source_length"}
        ``score="scaled_dot"`` divides by :math:`\\sqrt{K}` (default: Vaswani, IDSIA) or by
        :math:`\\sqrt{n_{source}}`, the source's length (Schmidt's Table 1); older files load
        with the default.
    dtype, rng : as everywhere in pyplay.
    """

    def __init__(
        self,
        src_vocab_size: int,
        tgt_vocab_size: int,
        embedding_dim: int = 32,
        hidden_size: int = 64,
        num_layers: int = 1,
        cell: str = "lstm",
        bidirectional_encoder: bool = False,
        wiring: str = "init",
        score: str | None = None,
        share_rnn: bool = False,
        scale_by: str = "key_size",
        dtype: Any = np.float32,
        rng: np.random.Generator | int | None = 0,
        encoder: str = "stack",
    ) -> None:
        self._set_vocabs(src_vocab_size, tgt_vocab_size, dtype)
        V_s, V_t = self.src_vocab_size, self.tgt_vocab_size
        E = check_int("embedding_dim", embedding_dim, min_value=1)
        H = check_int("hidden_size", hidden_size, min_value=1)
        L = check_int("num_layers", num_layers, min_value=1)
        self.cell = check_choice("cell", cell, tuple(CELLS))
        self.wiring = check_choice("wiring", wiring, WIRINGS)
        for name, flag in (
            ("bidirectional_encoder", bidirectional_encoder),
            ("share_rnn", share_rnn),
        ):
            if not isinstance(flag, bool):
                raise TypeError(f"{name} must be True or False, got {flag!r}")
        if share_rnn and bidirectional_encoder:
            raise ValueError(
                "share_rnn=True needs a one-directional encoder: one net reads the source left "
                "to right and goes on writing the target; got bidirectional_encoder=True"
            )
        self.bidirectional_encoder, self.share_rnn = bidirectional_encoder, share_rnn
        self.encoder = check_gnmt(encoder, self.wiring, L, bidirectional_encoder, share_rnn)
        gnmt = self.encoder == "gnmt"
        self._names = ("encoder", "decoder") if gnmt else ("encoder.rnn", "decoder.rnn")
        self.hidden_size, self.num_layers, self.embedding_dim = H, L, E
        check_model_size(type(self), locals())  # before anything is built
        gen = as_generator(rng)
        kw: dict[str, Any] = dict(num_layers=L, dtype=self.dtype, rng=gen)
        self.enc_emb = Embedding(V_s, E, padding_idx=PAD, dtype=self.dtype, rng=gen)
        self.enc: Any
        if gnmt:
            self.enc = GNMTEncoder(CELLS[self.cell], E, H, L, self.dtype, gen)
        elif not share_rnn:
            self.enc = CELLS[self.cell](E, H, bidirectional=bidirectional_encoder, **kw)
        self.bridge = None
        if bidirectional_encoder:
            self.bridge = Bridge(H, self.cell == "lstm", self.dtype, gen)
        self.dec_emb = Embedding(V_t, E, padding_idx=PAD, dtype=self.dtype, rng=gen)
        K = (2 if bidirectional_encoder else 1) * H  # encoder state size
        dec_in = E + {"context": H, "bahdanau": K}.get(self.wiring, 0)
        self.dec: Any = (
            GNMTDecoder(CELLS[self.cell], E, H, K, L, QUERIES[self.wiring], self.dtype, gen)
            if gnmt
            else CELLS[self.cell](dec_in, H, **kw)
        )
        if share_rnn:
            self.enc = self.dec  # one net: the encoder's steps are its first steps
        self.attn: LuongAttention | None = None
        self.bahdanau: BahdanauDecoder | GNMTDecoder | None = None
        attends = self.wiring in ATTENDING
        if score is not None:
            check_choice("score", score, SCORES)  # a misspelt one, whatever the wiring
            if not attends and score != NO_ATTENTION_SCORE:
                raise ValueError(
                    f"score is used only by the wirings {', '.join(map(repr, ATTENDING))}; "
                    f"wiring={self.wiring!r} has no attention, so leave score out, got "
                    f"score={score!r}"
                )
        else:
            score = "additive" if self.wiring == "bahdanau" else NO_ATTENTION_SCORE
        self.score = score
        self.scale_by = scale_by  # checked by make_scorer, or here without attention
        if gnmt:
            self.dec.scorer = make_scorer(score, H, K, None, 64, self.dtype, gen, scale_by)
            self.bahdanau = self.dec  # the same protocol, its own wiring
        elif self.wiring == "attention":
            self.attn = LuongAttention(H, K, score, dtype=self.dtype, rng=gen, scale_by=scale_by)
        elif self.wiring == "bahdanau":
            self.bahdanau = BahdanauDecoder(
                self.dec, make_scorer(score, H, K, None, 64, self.dtype, gen, scale_by)
            )
        elif scale_by != "key_size":  # no scorer to check it
            msg = f"wiring={self.wiring!r} has no attention: scale_by must be 'key_size'"
            raise ValueError(f"{msg}, got scale_by={scale_by!r}")
        self.head = Linear(H, V_t, dtype=self.dtype, rng=gen)
        self.params: dict[str, np.ndarray] = gather_params(self._layers())

    @classmethod
    def from_config(cls, config: dict[str, Any], rng: np.random.Generator | int | None = 0) -> Any:
        """As :meth:`ModelBase.from_config`; a file written before an unused score was refused
        (a wiring without attention and the page's score at the time) still loads: that score
        never entered the model."""
        if isinstance(config, dict) and config.get("wiring") not in ATTENDING and "score" in config:
            config = {**config, "score": None}
        return super().from_config(config, rng)

    @classmethod
    def estimate_parameters(cls, config: Mapping[str, Any]) -> int:
        """An upper estimate of the parameter count ``config`` describes (without building)."""
        E, H = config_int(config, "embedding_dim", 32), config_int(config, "hidden_size", 64)
        L = config_int(config, "num_layers", 1)
        Vs, Vt = config_int(config, "src_vocab_size", 4), config_int(config, "tgt_vocab_size", 4)
        D = 2 if config.get("bidirectional_encoder") or config.get("encoder") == "gnmt" else 1
        K, cell = D * H, config.get("cell", "lstm")
        n = (Vs + Vt) * E + recurrent(cell, E + K, H, L, 1)
        if not config.get("share_rnn"):
            n += recurrent(cell, E, H, L, D)
        return n + 4 * (K + 1) * H + (H + K + 64) * (H + K + 2) + (H + 1) * Vt

    def _layers(self) -> list[tuple[str, Any]]:
        if self.share_rnn:
            layers = [("encoder.embedding", self.enc_emb), ("rnn", self.dec)]
        else:
            layers = [("encoder.embedding", self.enc_emb), (self._names[0], self.enc)]
        if self.bridge is not None:
            layers += [(f"bridge.{name}", part) for name, part in self.bridge.layers()]
        decoder: list[tuple[str, Any]] = [("decoder.embedding", self.dec_emb)]
        if not self.share_rnn:
            decoder.append((self._names[1], self.dec))
        if self.attn is not None:
            decoder.append(("attention", self.attn))
        if self.bahdanau is not None:
            decoder.append(("attention.score", self.bahdanau.scorer))
        return [*layers, *decoder, ("head", self.head)]

    # ------------------------------------------------------------------ encoder
    def encode(
        self, src: Any, src_lengths: Any, record: bool = False
    ) -> tuple[Any, np.ndarray, Any, Any, Any]:
        """The decoder's initial state from the source: ``(state, encoder outputs (B, S, D*H),
        emb cache, enc cache, bridge cache)``; ``state`` is h (L, B, H) or (h, c). With
        ``record`` the enc cache's ``record`` holds every layer's and direction's states
        (``"l0"``, ``"l0_reverse"``, ``"l1"``, ...; see :meth:`pyplay.nn.RNN.forward`)."""
        src = check_array("src", src, ndim=2, kind="i", layout="(B, S)")
        extra = self.dec.input_size - self.embedding_dim
        x: Any
        emb_cache: Any
        if self.share_rnn and extra:  # embedded: the decoder's context inputs read zeros
            x, emb_cache = self.enc_emb.forward(src)  # (B, S, E)
            x = np.concatenate([x, np.zeros((*src.shape, extra), self.dtype)], axis=2)
        else:  # the stack projects the table
            x = emb_cache = self.enc_emb.tokens(src)  # ids (B, S) and the table (V, E)
        enc_out, state, enc_cache = self.enc.forward(x, lengths=src_lengths, record=record)
        h_n, c_n = state if isinstance(state, tuple) else (state, None)  # (L*D, B, H)
        bridge = None
        if self.bridge is not None:
            h_n, c_n, bridge = self.bridge.forward(h_n, c_n)  # (L, B, H) each
        state0 = (h_n, c_n) if c_n is not None else h_n
        return state0, enc_out, emb_cache, enc_cache, bridge

    def _decoder_input(
        self, tokens: np.ndarray, context: np.ndarray | None, table: bool = False
    ) -> tuple[Any, Any]:
        if table and context is None:  # the recurrent stack projects the table
            return (self.dec_emb.tokens(tokens),) * 2  # ids (B, U) and the table (V, E)
        x, cache = self.dec_emb.forward(tokens)  # (B, U, E)
        if context is not None:
            c = np.broadcast_to(context[:, None, :], (*tokens.shape, self.hidden_size))
            x = np.concatenate([x, c], axis=2)  # (B, U, E + H)
        return x, cache

    # ------------------------------------------------------------------ training
    def forward(
        self, src: Any, src_lengths: Any, tgt_in: Any, tgt_lengths: Any = None
    ) -> tuple[np.ndarray, np.ndarray | None, Seq2SeqCache]:
        """Teacher-forced logits (B, U, tgt_vocab_size) for ``tgt_in`` (BOS y_1 ... y_n), the
        attention weights (B, U, S) (wirings "attention" and "bahdanau", else None) and the
        cache."""
        state0, enc_out, emb_cache, enc_cache, bridge = self.encode(src, src_lengths)
        tgt_in = self._check_tgt_in(tgt_in, enc_out.shape[0])  # (B, U)
        h0 = state0[0] if isinstance(state0, tuple) else state0  # (L, B, H)
        context = h0[-1] if self.wiring == "context" else None  # (B, H)
        x, dec_emb_cache = self._decoder_input(tgt_in, context, self.bahdanau is None)
        weights = dec_cache = None
        attn_cache: Any = None
        if self.bahdanau is not None:
            mask = self._mask(enc_out, src_lengths)
            s, weights, attn_cache = self.bahdanau.forward(x, state0, enc_out, mask)  # (B, U, H)
        else:
            s, _, dec_cache = self.dec.forward(x, state=state0, lengths=tgt_lengths)  # (B, U, H)
        if self.attn is not None:
            s, weights, attn_cache = self.attn.forward(s, enc_out, self._mask(enc_out, src_lengths))
        logits, head_cache = self.head.forward(s)  # (B, U, V)
        cache = Seq2SeqCache(
            emb_cache,
            enc_cache,
            attn_cache,
            bridge,
            dec_emb_cache,
            dec_cache,
            head_cache,
            tgt_in.shape[1],
        )
        return logits, weights, cache

    @staticmethod
    def _mask(enc_out: np.ndarray, src_lengths: Any) -> np.ndarray:
        S = enc_out.shape[1]
        return np.arange(S)[None, :] < np.asarray(src_lengths)[:, None]  # (B, S)

    def backward(self, dlogits: Any, cache: Seq2SeqCache) -> Backward:
        """Gradients of every parameter (keys of :attr:`params`) given d(loss)/d(logits)."""
        grads: dict[str, np.ndarray] = {}
        ds, g = self.head.backward(dlogits, cache.head)  # (B, U, H)
        grads.update({f"head.{k}": v for k, v in g.items()})
        denc_out = None
        if self.attn is not None:
            ds, denc_out, g = self.attn.backward(ds, cache.attn)
            grads.update({f"attention.{k}": v for k, v in g.items()})
        stepper: Any = self.bahdanau  # Bahdanau's or GNMT's decoder, each with its own cache
        if stepper is not None and isinstance(cache.attn, BahdanauCache | GNMTCache):
            dx, dstate0, denc_out, g, gs = stepper.backward(ds, cache.attn)  # (B, U, E)
            grads.update({f"attention.score.{k}": v for k, v in gs.items()})
        else:
            dx, dstate0, g = self.dec.backward(ds, None, cache.dec)  # dx (B, U, E [+ H])
        enc_name, dec_name = self._names
        grads.update({f"{dec_name}.{k}": v for k, v in g.items()})
        E = self.dec_emb.embedding_dim
        g = self.dec_emb.grads_from(dx, cache.dec_emb)
        grads.update({f"decoder.embedding.{k}": v for k, v in g.items()})
        dh0, dc0 = dstate0 if isinstance(dstate0, tuple) else (dstate0, None)  # (L, B, H)
        if self.wiring == "context":
            dh0 = dh0.copy()
            dh0[-1] += dx[:, :, E:].sum(axis=1)  # the context entered every step
        if cache.bridge is not None and self.bridge is not None:
            dh0, dc0, g = self.bridge.backward(dh0, dc0, cache.bridge)  # (2L, B, H) each
            grads.update({f"bridge.{k}": v for k, v in g.items()})
        dstate = (dh0, dc0) if dc0 is not None else dh0
        B, S = cache.enc_emb.shape[:2]
        dout = np.zeros((B, S, self.enc.num_directions * self.hidden_size), dtype=self.dtype)
        if denc_out is not None:
            dout = denc_out
        dx_enc, _, g = self.enc.backward(dout, dstate, cache.enc)  # (B, S, E [+ context])
        if self.share_rnn:  # the same weights: both uses add up
            grads.update({f"rnn.{k}": v + grads.pop(f"{dec_name}.{k}") for k, v in g.items()})
        else:
            grads.update({f"{enc_name}.{k}": v for k, v in g.items()})
        g = self.enc_emb.grads_from(dx_enc, cache.enc_emb)
        grads.update({f"encoder.embedding.{k}": v for k, v in g.items()})
        return Backward({name: grads[name] for name in self.params})

    # ------------------------------------------------------------------ decoding
    def greedy(self, src: Any, src_lengths: Any, max_length: int = 50) -> list[list[int]]:
        """Greedy decoding of a batch: the target ids of each row up to (without) EOS."""
        max_length = check_int("max_length", max_length, min_value=1, max_value=MAX_STEPS)
        state = self.start(src, src_lengths)
        B = len(np.asarray(src_lengths))
        results = greedy_decode(self.step, state, BOS, EOS, max_length, batch_size=B)
        return [[t for t in r.tokens if t != EOS] for r in results]
