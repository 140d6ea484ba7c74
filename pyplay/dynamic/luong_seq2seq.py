r"""Luong's form of the seq2seq, written in Hagan's layer notation: **not the book's network**
(that is :mod:`pyplay.dynamic.book_seq2seq`). It scores with the decoder's current output
:math:`a^2(t)` and adds a layer :math:`a^3 = \mathrm{tansig}(LW^3 [c; a^2])` (Luong et al. 2015);
the textbook sub-lesson trained it before it trained the book's network, and model files of
that time (class ``"TextbookSeq2Seq"`` with ``embedding_dim`` and ``cell``) load as this class.

Layer 1 (the encoder) reads the source :math:`p^1(1..S)` (embedded tokens); layer 2 (the
decoder) reads the previous target token :math:`p^2(t)` (:math:`y(t-1)` embedded, :math:`y(0)`
= BOS). With tansig cells (``cell="rnn"``):

.. math::

    a^1(t) = \mathrm{tansig}(IW^{1,1} p^1(t) + LW^{1,1} a^1(t-1) + b^1), \quad t = 1..S.

**Context as a constant decoder input** (``score="context"``, the library's
``wiring="context"``): :math:`c = a^1(S)` enters every decoder step,

.. math::

    a^2(t) = \mathrm{tansig}(IW^{2,2} p^2(t) + LW^{2,1} c + LW^{2,2} a^2(t-1) + b^2), \quad
    n^3(t) = LW^{3,2} a^2(t) + b^3 .

**Attention** (``score`` "dot", "general" or "concat", the library's ``wiring="attention"``
with Luong's scores): :math:`a^2(0) = a^1(S)`, the memory :math:`A` is the TDL of the encoder
states (:mod:`pyplay.dynamic.luong_attention`), then

.. math::

    n(t) = \mathrm{score}(A, a^2(t)), \quad \alpha(t) = \mathrm{softmax}(n(t)), \quad
    c(t) = A \alpha(t), \quad a^3(t) = \mathrm{tansig}(LW^{3} [c(t); a^2(t)]), \quad
    n^4(t) = LW^{4,3} a^3(t) + b^4 .

The network *is* a :class:`pyplay.models.seq2seq.EncoderDecoder` (:class:`LuongSeq2Seq`);
:func:`luong_trace` computes the attention through the delay line, returning every quantity
with its equation and library code. LSTM and GRU cells are accepted (steps named, not expanded).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay._checks import check_choice, check_dtype
from pyplay.dynamic.book_attention import ATTENTION_FORMS
from pyplay.dynamic.luong_attention import LIBRARY_SCORE, LuongTDLAttention, source_order
from pyplay.dynamic.notation import Seq2SeqTrace, TraceStep, sup
from pyplay.losses import softmax
from pyplay.models.contract import config_int, recurrent
from pyplay.models.seq2seq import EncoderDecoder
from pyplay.tasks.pairs import BOS, trace_ids

__all__ = [
    "LUONG_FORMS",
    "LuongSeq2Seq",
    "LuongStep",
    "LuongTrace",
    "luong_form",
    "luong_seq2seq",
    "luong_trace",
]

LUONG_FORMS = ("context", *ATTENTION_FORMS)  # the book's forms, as TEXTBOOK_FORMS
_SCORER = {"dot": "DotAttention", "general": "GeneralAttention", "concat": "AdditiveAttention"}
_CELL = {"rnn": "RNN", "lstm": "LSTM", "gru": "GRU"}


class LuongSeq2Seq(EncoderDecoder):
    """Luong's form (module docstring): a library :class:`~pyplay.models.seq2seq.EncoderDecoder`
    with one-layer encoder and decoder, scores named as the book's (model files name it, so
    :func:`pyplay.io.load_model` rebuilds this class).

    Parameters
    ----------
    src_vocab_size, tgt_vocab_size : int
        Vocabulary sizes (PAD, BOS, EOS included).
    form : str
        One of ``LUONG_FORMS``: "context" (the context as a constant decoder input, the
        library's ``wiring="context"``) or "dot", "general", "concat" (attention over the
        encoder states, the library's scores "dot", "general", "additive").
    embedding_dim, hidden_size : int
        Sizes of the embeddings and of both layers (:math:`S^1 = S^2`).
    cell : str
        "rnn" (tansig, the book's), "lstm" or "gru".
    dtype, rng : as everywhere in pyplay (float64 by default: the trace compares exactly).
    """

    def __init__(
        self,
        src_vocab_size: int,
        tgt_vocab_size: int,
        form: str = "general",
        embedding_dim: int = 16,
        hidden_size: int = 32,
        cell: str = "rnn",
        dtype: Any = np.float64,
        rng: np.random.Generator | int | None = 0,
    ) -> None:
        form = check_choice("form", form, LUONG_FORMS)
        super().__init__(
            src_vocab_size,
            tgt_vocab_size,
            embedding_dim=embedding_dim,
            hidden_size=hidden_size,
            cell=cell,
            wiring="context" if form == "context" else "attention",
            score=None if form == "context" else LIBRARY_SCORE[form],
            dtype=check_dtype("dtype", dtype),
            rng=rng,
        )
        self.form = form

    @classmethod
    def estimate_parameters(cls, config: Mapping[str, Any]) -> int:
        """An upper estimate of the parameter count ``config`` describes (without building)."""
        E, H = config_int(config, "embedding_dim", 16), config_int(config, "hidden_size", 32)
        Vs, Vt = config_int(config, "src_vocab_size", 4), config_int(config, "tgt_vocab_size", 4)
        cell, context = config.get("cell"), config.get("form") == "context"
        n = (Vs + Vt) * E + recurrent(cell, E, H, 1, 1) + (H + 1) * Vt
        n += recurrent(cell, E + H, H, 1, 1) if context else recurrent(cell, E, H, 1, 1)
        return n if context else n + (2 * H + 1) * (2 * H + 1)  # score and LW^3


def luong_seq2seq(
    src_vocab_size: int, tgt_vocab_size: int, score: str = "general", **kwargs: Any
) -> LuongSeq2Seq:
    """Luong's form (:class:`LuongSeq2Seq`, the same arguments), ``score`` in LUONG_FORMS."""
    score = check_choice("score", score, LUONG_FORMS)
    return LuongSeq2Seq(src_vocab_size, tgt_vocab_size, score, **kwargs)


def luong_form(model: Any) -> str:
    """Which of ``LUONG_FORMS`` ``model`` computes; TypeError/ValueError when it is not one
    (another class, wiring "init"/"bahdanau", another score, a stacked or bidirectional
    encoder)."""
    if not isinstance(model, EncoderDecoder):
        raise TypeError(
            f"model must be a pyplay.models.seq2seq.EncoderDecoder, got {type(model).__name__}"
        )
    if model.num_layers != 1 or model.bidirectional_encoder:
        raise ValueError(
            "model must have one-layer, one-direction encoder and decoder (the textbook's "
            f"form), got num_layers={model.num_layers}, "
            f"bidirectional_encoder={model.bidirectional_encoder}"
        )
    if model.wiring == "context":
        return "context"
    if model.wiring != "attention" or model.attn is None:
        raise ValueError(f"model must have wiring 'context' or 'attention', got {model.wiring!r}")
    book = {v: k for k, v in LIBRARY_SCORE.items()}
    if model.attn.score not in book:
        raise ValueError(
            "model must use the score 'dot', 'general' or 'additive' (the book's concat), "
            f"got {model.attn.score!r}"
        )
    return book[model.attn.score]


LuongStep = TraceStep  # one quantity of the trace (pyplay.dynamic.notation)


@dataclass(frozen=True)
class LuongTrace(Seq2SeqTrace):
    """Every quantity of one source/target pair (arrays without the batch axis).

    ``a1`` (S, S1) encoder outputs :math:`a^1(1..S)`; ``a2`` (U, S2) decoder outputs; ``A``
    (S1, S) the memory, newest column first (None for "context"); ``n``, ``alpha`` (U, S)
    scores and weights over the columns of ``A``; ``weights`` (U, S) the same weights in
    source order (as :meth:`EncoderDecoder.forward` returns them); ``c`` (U, S1) the context of
    every step (the constant :math:`a^1(S)` repeated for "context"); ``logits`` (U, V);
    ``probs`` (U, V); ``steps`` the list of :class:`LuongStep`.
    """


def _equations(form: str, cell: str, t: int, S: int) -> dict[str, tuple[str, str]]:
    """(LaTeX, Unicode) of every quantity at step ``t`` (encoder step or decoder step)."""
    tm, s1, s2 = t - 1, sup(1), sup(2)
    if cell == "rnn":
        enc = (
            rf"a^1({t}) = \mathrm{{tansig}}(IW^{{1,1}} p^1({t}) + LW^{{1,1}} a^1({tm}) + b^1)",
            f"a{s1}({t}) = tansig(IW{sup('1,1')} p{s1}({t}) + LW{sup('1,1')} a{s1}({tm}) + b{s1})",
        )
        ctx_l, ctx_t = (r" + LW^{2,1} c", f" + LW{sup('2,1')} c") if form == "context" else ("", "")
        dec = (
            rf"a^2({t}) = \mathrm{{tansig}}(IW^{{2,2}} p^2({t}){ctx_l} + LW^{{2,2}} a^2({tm})"
            r" + b^2)",
            f"a{s2}({t}) = tansig(IW{sup('2,2')} p{s2}({t}){ctx_t} + LW{sup('2,2')} a{s2}({tm})"
            f" + b{s2})",
        )
    else:
        name = _CELL[cell]
        enc = (
            rf"a^1({t}) = \mathrm{{{name}}}(p^1({t}), a^1({tm}))",
            f"a{s1}({t}) = {name}(p{s1}({t}), a{s1}({tm}))",
        )
        extra = (", c", ", c") if form == "context" else ("", "")
        dec = (
            rf"a^2({t}) = \mathrm{{{name}}}(p^2({t}){extra[0]}, a^2({tm}))",
            f"a{s2}({t}) = {name}(p{s2}({t}){extra[1]}, a{s2}({tm}))",
        )
    if t == 1 and form != "context":
        dec = (dec[0] + r",\; a^2(0) = a^1(" + f"{S})", dec[1] + f",  a{s2}(0) = a{s1}({S})")
    out = 3 if form == "context" else 4
    o = sup(out)
    hidden = 2 if form == "context" else 3
    score = {
        "dot": (rf"n({t}) = A^T a^2({t})", f"n({t}) = Aᵀ a{s2}({t})"),
        "general": (rf"n({t}) = A^T W a^2({t})", f"n({t}) = Aᵀ W a{s2}({t})"),
        "concat": (
            rf"n_j({t}) = v^T \mathrm{{tansig}}(W [a^1_j; a^2({t})] + b)",
            f"nⱼ({t}) = vᵀ tansig(W [a{s1}ⱼ; a{s2}({t})] + b)",
        ),
        "context": ("", ""),
    }[form]
    return {
        "enc": enc,
        "dec": dec,
        "A": (
            rf"A = [a^1({S})\; a^1({S - 1})\; \cdots\; a^1(1)]",
            f"A = [a{s1}({S}) a{s1}({S - 1}) … a{s1}(1)]   (TDL, D = {S}, read at t = {S})"
            if S > 1
            else f"A = [a{s1}(1)]   (TDL, D = 1)",
        ),
        "c0": (rf"c = a^1({S})", f"c = a{s1}({S})"),
        "n": score,
        "alpha": (
            rf"\alpha({t}) = \mathrm{{softmax}}(n({t}))",
            f"α({t}) = softmax(n({t}))",
        ),
        "c": (rf"c({t}) = A \alpha({t})", f"c({t}) = A α({t})"),
        "a3": (
            rf"a^3({t}) = \mathrm{{tansig}}(LW^3 [c({t}); a^2({t})])",
            f"a{sup(3)}({t}) = tansig(LW{sup(3)} [c({t}); a{s2}({t})])",
        ),
        "out": (
            rf"n^{out}({t}) = LW^{{{out},{hidden}}} a^{hidden}({t}) + b^{out}",
            f"n{o}({t}) = LW{sup(f'{out},{hidden}')} a{sup(hidden)}({t}) + b{o}",
        ),
        "y": (
            rf"a^{out}({t}) = \mathrm{{softmax}}(n^{out}({t}))",
            f"a{o}({t}) = softmax(n{o}({t}))",
        ),
    }


def luong_trace(model: Any, source: Any, target: Any) -> LuongTrace:
    r"""Every textbook quantity of ``model`` on one pair, step by step.

    Parameters
    ----------
    model : EncoderDecoder
        Wiring "context", or "attention" with score "dot", "general" or "additive", one layer,
        one direction (:func:`luong_form`); fresh or trained.
    source : sequence of int (S,)
        Source symbol ids (3..V-1, no BOS/EOS).
    target : sequence of int (n,)
        Target ids the decoder reads after BOS (teacher forcing), EOS excluded; the trace has
        :math:`U = n + 1` decoder steps (the last one predicts EOS). To follow a greedy
        decoding, pass its output (an untrained model's may hold PAD or BOS: accepted).

    Returns
    -------
    LuongTrace
        Equal to the model's own :meth:`~EncoderDecoder.forward` (weights, contexts, logits)
        up to rounding: the same computation, written the book's way.
    """
    form = luong_form(model)
    src = trace_ids("source", source, model.src_vocab_size, source=True)
    tgt = trace_ids("target", target, model.tgt_vocab_size, source=False)
    S, cell = src.shape[0], model.cell
    state0, enc_out, _, _, _ = model.encode(src[None, :], np.array([S]))  # (1, S, S1)
    a1 = enc_out  # (1, S, S1) a^1(1..S)
    tgt_in = np.concatenate([[BOS], tgt])[None, :]  # (1, U) y(0..n)
    p2, _ = model.dec_emb.forward(tgt_in)  # (1, U, E) p^2(t)
    U = tgt_in.shape[1]
    h0 = state0[0] if isinstance(state0, tuple) else state0  # (1, 1, S2)
    if form == "context":
        c0 = h0[-1]  # (1, S1) c = a^1(S)
        p2 = np.concatenate([p2, np.broadcast_to(c0[:, None, :], (1, U, c0.shape[1]))], axis=2)
    a2, _, _ = model.dec.forward(p2, state=state0, training=False)  # (1, U, S2)
    A = n = alpha = weights = None
    if form == "context":
        c = np.broadcast_to(c0[:, None, :], (1, U, c0.shape[1]))  # (1, U, S1)
        hidden = a2  # (1, U, S2)
    else:
        assert model.attn is not None
        tb = LuongTDLAttention.from_scorer(model.attn.scorer, a1.shape[2], a2.shape[2])
        A = tb.memory(a1)  # (1, S1, S) through TDL_hstack
        n = tb.net_input(a2, a1)  # (1, U, S)
        c, alpha, _ = tb.forward(a2, a1)  # (1, U, S1), (1, U, S)
        weights = source_order(alpha)  # (1, U, S)
        W3 = model.attn.params["weight_c"]  # (S2, S1 + S2) LW^3 = [LW^{3,c} LW^{3,2}]
        hidden = np.tanh(np.concatenate([c, a2], axis=2) @ W3.T)  # (1, U, S2) a^3(t)
    head = model.head.params
    logits = hidden @ head["weight"].T + head["bias"]  # (1, U, V) n^out(t)
    probs = softmax(logits.astype(np.float64), axis=2)  # (1, U, V)

    enc_code = f"pyplay.models.seq2seq.EncoderDecoder.encode -> pyplay.nn.{_CELL[cell]}.forward"
    dec_code = f"pyplay.models.seq2seq.EncoderDecoder.forward -> pyplay.nn.{_CELL[cell]}.forward"
    luong = (
        "pyplay.models.seq2seq.EncoderDecoder.forward -> "
        "pyplay.models.seq2seq.luong.LuongAttention.forward"
    )
    steps: list[LuongStep] = []

    def add(key: str, symbol: str, t: int | None, code: str, value: np.ndarray, k: int) -> None:
        latex, text = _equations(form, cell, k, S)[key]
        steps.append(LuongStep(symbol, t, latex, text, code, np.array(value)))

    for k in range(1, S + 1):
        add("enc", f"a{sup(1)}({k})", None, f"{enc_code} (encoder.rnn)", a1[0, k - 1], k)
    if form == "context":
        add(
            "c0",
            "c",
            None,
            "pyplay.models.seq2seq.EncoderDecoder.forward: context = h0[-1]",
            c[0, 0],
            1,
        )
    elif A is not None:
        add("A", "A", None, "pyplay.dynamic.tdl.TDL_hstack(S1, D=S).forward(a1) at t = S", A[0], 1)
    out = sup(3 if form == "context" else 4)
    scorer = f"{luong} -> pyplay.nn.attention.{_SCORER.get(form, '')}"
    for t in range(1, U + 1):
        u = t - 1
        add("dec", f"a{sup(2)}({t})", t, f"{dec_code} (decoder.rnn)", a2[0, u], t)
        if form != "context":
            assert n is not None and alpha is not None
            add("n", f"n({t})", t, f"{scorer}._score", n[0, u], t)
            add("alpha", f"α({t})", t, f"{scorer}.forward -> masked_softmax", alpha[0, u], t)
            add("c", f"c({t})", t, f"{scorer}.forward (weights @ value)", c[0, u], t)
            add("a3", f"a{sup(3)}({t})", t, f"{luong} (tanh(cs @ weight_c.T))", hidden[0, u], t)
        head_code = (
            "pyplay.models.seq2seq.EncoderDecoder.forward -> pyplay.nn.Linear.forward (head)"
        )
        add("out", f"n{out}({t})", t, head_code, logits[0, u], t)
        add(
            "y",
            f"a{out}({t})",
            t,
            "pyplay.losses.log_softmax (EncoderDecoder.step)",
            probs[0, u],
            t,
        )
    return LuongTrace(
        form,
        a1[0],
        a2[0],
        None if A is None else A[0],
        None if n is None else n[0],
        None if alpha is None else alpha[0],
        None if weights is None else weights[0],
        np.array(c[0]),
        logits[0],
        probs[0],
        steps,
    )
