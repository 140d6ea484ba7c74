r"""The book's seq2seq (:class:`~pyplay.models.textbook.seq2seq.TextbookSeq2Seq`) traced equation
by equation, with the book's layer numbers and symbols.

:func:`textbook_trace` recomputes one source/target pair from the chapter's equations alone:
one sequence, explicit one-hot vectors :math:`p(t)` and :math:`a^3(t-1)`, matrix-vector
products, :math:`A^1(T)` read from the delay line of encoder states (Hagan's
:class:`~pyplay.dynamic.tdl.TDL_hstack`, gathered by
:func:`~pyplay.models.textbook.attention.delay_line`), in the book's time (encoder
:math:`t = 1..T`, decoder :math:`t = T+1, \dots`, from :math:`a^2(T) = a^1(T)`).
Every quantity comes with its equation (numbered as in the chapter), the library code that
computes the same number in the batched model, and its value; the choices the book leaves open
are listed in :data:`~pyplay.models.textbook.seq2seq.BOOK_CHOICES` (``trace.choices``).

======================  ==========================================================  ======
form                    score and context                                           eq.
======================  ==========================================================  ======
``"context"``           :math:`LW^{2,1} a^1(T)` into layer 2                        6.6
``"dot"``               :math:`n^4 = [A^1(T)]^T a^2(t-1)`, :math:`a^4`, :math:`a^5`  6.9-11
``"general"``           :math:`n^4 = [A^1(T)]^T W_a a^2(t-1)`                        6.12
``"concat"``            :math:`\bar A^{1,2}`, :math:`A^4`, :math:`N^5`, :math:`a^5`,   6.13-18
                        :math:`a^6`
======================  ==========================================================  ======
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay.losses import softmax
from pyplay.models.textbook.attention import EPS_PD, delay_line, general_weight
from pyplay.models.textbook.seq2seq import BOOK_CHOICES, CONTEXT_LAYER, TEXTBOOK_FORMS
from pyplay.models.textbook.seq2seq import TextbookSeq2Seq as TextbookSeq2Seq
from pyplay.tasks.pairs import BOS, trace_ids

__all__ = [
    "TEXTBOOK_FORMS",
    "TextbookSeq2Seq",
    "TextbookStep",
    "TextbookTrace",
    "textbook_seq2seq",
    "textbook_trace",
]

_MODEL = "pyplay.models.textbook.seq2seq.TextbookSeq2Seq"
_ATTEND = "pyplay.models.textbook.attention.attend"
_SUP = str.maketrans("0123456789,-", "⁰¹²³⁴⁵⁶⁷⁸⁹˒⁻")


def sup(text: object) -> str:
    """``text`` in superscript digits: ``sup("1,2") == "¹˒²"``."""
    return str(text).translate(_SUP)


def textbook_seq2seq(
    src_vocab_size: int, tgt_vocab_size: int, form: str = "general", **kwargs: Any
) -> TextbookSeq2Seq:
    """The book's seq2seq (:class:`TextbookSeq2Seq`, the same arguments: ``hidden_size``,
    ``D``, ``dtype``, ``rng``) in ``form``, one of ``TEXTBOOK_FORMS``."""
    return TextbookSeq2Seq(src_vocab_size, tgt_vocab_size, form, **kwargs)


@dataclass(frozen=True)
class TextbookStep:
    """One quantity of the trace: its ``symbol`` (e.g. "a⁴(7)", "α(3)"), the decoder step
    ``t`` = 1, 2, ... (None on the encoder side), the equation in LaTeX and in plain Unicode,
    the library ``code`` that computes the same number, and its ``value``."""

    symbol: str
    t: int | None
    latex: str
    text: str
    code: str
    value: np.ndarray


@dataclass(frozen=True)
class TextbookTrace:
    """Every quantity of one pair (no batch axis): ``a1`` (T, S1) :math:`a^1(1..T)`; ``a2``
    (U, S2) :math:`a^2(T+1..T+U)`; ``A`` (S1, D) :math:`A^1(T)` (None for "context"); ``n``
    (U, D) the scores :math:`n^4` or :math:`N^5`; ``alpha`` (U, D) the weights :math:`a^4` or
    :math:`a^5` over the columns of ``A`` (newest first); ``weights`` (U, T) the same in source
    order; ``c`` (U, S1) the context entering layer 2; ``logits`` (U, V) :math:`n^3`;
    ``probs`` (U, V) :math:`a^3`; ``steps``; ``D`` the columns of the delay line; ``choices``
    (the book's open choices taken)."""

    form: str
    a1: np.ndarray
    a2: np.ndarray
    A: np.ndarray | None
    n: np.ndarray | None
    alpha: np.ndarray | None
    weights: np.ndarray | None
    c: np.ndarray
    logits: np.ndarray
    probs: np.ndarray
    steps: list[TextbookStep]
    D: int
    choices: tuple[str, ...]


def _columns(T: int, D: int) -> str:
    """``a¹(5) a¹(4) … a¹(1) 0 0`` : the columns of A¹(T), initial conditions as 0."""
    cols = [f"a¹({T - j})" if T - j >= 1 else "0" for j in range(D)]
    return " ".join(cols) if D <= 6 else " ".join([*cols[:3], "…", cols[-1]])


def _equations(form: str, T: int, D: int, t: int) -> dict[str, tuple[str, str]]:
    """(LaTeX, Unicode) of every quantity at book time ``t``."""
    tm, s2 = t - 1, sup(2)
    lc = CONTEXT_LAYER[form]
    ctx_l, ctx_t = {
        "context": (f"a^1({T})", f"a¹({T})"),
        "dot": (f"a^5({t})", f"a⁵({t})"),
        "general": (f"a^5({t})", f"a⁵({t})"),
        "concat": (f"a^6({t})", f"a⁶({t})"),
    }[form]
    start = f"\n    from a²({T}) = a¹({T}), a³({T}) = one-hot BOS" if t == T + 1 else ""
    A_l, A_t = rf"[A^1({T})]", f"[A¹({T})]"
    return {
        "enc": (
            rf"a^1({t}) = \mathrm{{tansig}}(IW^{{1,1}} p({t}) + LW^{{1,1}} a^1({tm}) + b^1)",
            f"a¹({t}) = tansig(IW¹˒¹ p({t}) + LW¹˒¹ a¹({tm}) + b¹)   (6.5)",
        ),
        "A": (
            rf"A^1({T}) = [a^1({T})\; \cdots\; a^1({T - D + 1})]",
            f"A¹({T}) = [{_columns(T, D)}]   (6.8, TDL_hstack, D = {D}"
            + ("; taps before t = 1 are zero and masked)" if D > T else ")"),
        ),
        "W": (
            r"W_a = L_a L_a^T + \epsilon I",
            f"W_a = L_a L_aᵀ + εI, ε = {EPS_PD:g}   (positive definite, as eq. 6.12 asks)",
        ),
        "n4": {
            "dot": (rf"n^4({t}) = {A_l}^T a^2({tm})", f"n⁴({t}) = {A_t}ᵀ a²({tm})   (6.9)"),
            "general": (
                rf"n^4({t}) = {A_l}^T W_a a^2({tm})",
                f"n⁴({t}) = {A_t}ᵀ W_a a²({tm})   (6.12)",
            ),
        }.get(form, ("", "")),
        "a4": (rf"a^4({t}) = \mathrm{{softmax}}(n^4({t}))", f"a⁴({t}) = softmax(n⁴({t}))   (6.10)"),
        "a5": (rf"a^5({t}) = A^1({T})\, a^4({t})", f"a⁵({t}) = A¹({T}) a⁴({t})   (6.11)"),
        "Abar": (
            rf"\bar A^{{1,2}}({t}) = [A^1({T});\; a^2({tm}) \cdots a^2({tm})]",
            f"Ā¹˒²({t}) = [A¹({T}); a²({tm}) … a²({tm})]   (6.13-6.14)",
        ),
        "A4": (
            rf"A^4({t}) = \mathrm{{tansig}}(LW^{{4,2}} \bar A^{{1,2}}({t}) + b^4)",
            f"A⁴({t}) = tansig(LW⁴˒² Ā¹˒²({t}) + b⁴)   (6.15)",
        ),
        "N5": (
            rf"N^5({t}) = LW^{{5,4}} A^4({t}) + b^5",
            f"N⁵({t}) = LW⁵˒⁴ A⁴({t}) + b⁵   (6.16)",
        ),
        "a5c": (
            rf"a^5({t}) = \mathrm{{softmax}}([N^5({t})]^T)",
            f"a⁵({t}) = softmax([N⁵({t})]ᵀ)   (6.17)",
        ),
        "a6": (rf"a^6({t}) = A^1({T})\, a^5({t})", f"a⁶({t}) = A¹({T}) a⁵({t})   (6.18)"),
        "dec": (
            rf"a^2({t}) = \mathrm{{tansig}}(LW^{{2,3}} a^3({tm}) + LW^{{2,{lc}}} {ctx_l}"
            rf" + LW^{{2,2}} a^2({tm}) + b^2)",
            f"a{s2}({t}) = tansig(LW²˒³ a³({tm}) + LW{sup(f'2,{lc}')} {ctx_t} + LW²˒² a²({tm})"
            f" + b²)   (6.6){start}",
        ),
        "n3": (rf"n^3({t}) = LW^{{3,2}} a^2({t}) + b^3", f"n³({t}) = LW³˒² a²({t}) + b³   (6.7)"),
        "a3": (rf"a^3({t}) = \mathrm{{softmax}}(n^3({t}))", f"a³({t}) = softmax(n³({t}))"),
    }


def _softmax(n: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """exp(n_j) / sum_k exp(n_k) over the kept columns; 0 elsewhere."""
    e = np.where(keep, np.exp(n - n[keep].max()), 0.0)  # (D,)
    return e / e.sum()


def textbook_trace(model: Any, source: Any, target: Any) -> TextbookTrace:
    """Every quantity of the book's seq2seq ``model`` on one pair, from the equations alone.

    Parameters
    ----------
    model : TextbookSeq2Seq
    source : sequence of int (T,)
        Source symbol ids (3..V-1, no BOS/EOS).
    target : sequence of int (n,)
        The words fed back after BOS (teacher forcing), EOS excluded: :math:`U = n + 1`
        decoder steps (the last predicts EOS). A greedy decoding's output may be passed.

    Returns
    -------
    TextbookTrace
        Equal to ``model.forward`` (logits, weights) up to rounding.
    """
    if not isinstance(model, TextbookSeq2Seq):
        raise TypeError(
            "model must be a pyplay.models.textbook.TextbookSeq2Seq (the book's network), got "
            f"{type(model).__name__}"
        )
    src = trace_ids("source", source, model.src_vocab_size, source=True)
    tgt = trace_ids("target", target, model.tgt_vocab_size, source=False)
    p, form, D, H = model.params, model.form, model.D, model.hidden_size
    T, fed = src.shape[0], np.concatenate([[BOS], tgt]).astype(np.int64)  # (U,) a^3(t-1)
    U, Vs, Vt = fed.shape[0], model.src_vocab_size, model.tgt_vocab_size
    a1 = np.zeros((T + 1, H))  # (T+1, S1) a^1(0..T)
    for t in range(1, T + 1):
        pt = np.eye(Vs)[src[t - 1]]  # (Vs,) one-hot p(t)
        a1[t] = np.tanh(p["IW1,1"] @ pt + p["LW1,1"] @ a1[t - 1] + p["b1"])  # eq. 6.5
    A = delay_line(a1[None, 1:], np.array([T]), D)[0][0]  # (S1, D) eq. 6.8
    keep = np.arange(D) < T  # (D,) taps at t >= 1
    W = general_weight(p["L_a"]) if form == "general" else None  # (S1, S1)
    a2 = np.zeros((U + 1, H))  # (U+1, S2) a^2(T..T+U)
    a2[0] = a1[T]
    n, alpha = np.zeros((U, D)), np.zeros((U, D))
    c, logits = np.zeros((U, H)), np.zeros((U, Vt))
    steps: list[TextbookStep] = []

    def add(key: str, symbol: str, k: int | None, t: int, code: str, value: np.ndarray) -> None:
        latex, text = _equations(form, T, D, t)[key]
        steps.append(TextbookStep(symbol, k, latex, text, code, np.array(value)))

    for t in range(1, T + 1):
        add("enc", f"a¹({t})", None, t, f"{_MODEL}.encode", a1[t])
    if form != "context":
        add(
            "A",
            f"A¹({T})",
            None,
            T,
            f"pyplay.models.textbook.attention.delay_line(a1, T, D={D})",
            A,
        )
    if W is not None:
        add("W", "W_a", None, T, "pyplay.models.textbook.attention.general_weight", W)
    for k in range(1, U + 1):
        t, q = T + k, a2[k - 1]  # book time, query a^2(t-1)
        if form == "context":
            c[k - 1] = a1[T]
        elif form == "concat":
            Abar = np.vstack([A, np.tile(q[:, None], (1, D))])  # (S1+S2, D) eq. 6.13
            A4 = np.tanh(p["LW4,2"] @ Abar + p["b4"][:, None])  # (S4, D) eq. 6.15
            N5 = p["LW5,4"] @ A4 + p["b5"][:, None]  # (1, D) eq. 6.16
            n[k - 1] = N5[0]
            alpha[k - 1] = _softmax(N5[0], keep)  # eq. 6.17
            c[k - 1] = A @ alpha[k - 1]  # (S1,) eq. 6.18
            add("Abar", f"Ā¹˒²({t})", k, t, f"{_ATTEND} (concatenate)", Abar)
            add("A4", f"A⁴({t})", k, t, f"{_ATTEND} (tanh)", A4)
            add("N5", f"N⁵({t})", k, t, f"{_ATTEND} (n)", N5)
            add("a5c", f"a⁵({t})", k, t, f"{_ATTEND} -> masked_softmax", alpha[k - 1])
            add("a6", f"a⁶({t})", k, t, f"{_ATTEND} (ctx)", c[k - 1])
        else:
            n[k - 1] = A.T @ (q if W is None else W @ q)  # (D,) eq. 6.9 / 6.12
            alpha[k - 1] = _softmax(n[k - 1], keep)  # eq. 6.10
            c[k - 1] = A @ alpha[k - 1]  # (S1,) eq. 6.11
            add("n4", f"n⁴({t})", k, t, f"{_ATTEND} (n)", n[k - 1])
            add("a4", f"a⁴({t})", k, t, f"{_ATTEND} -> masked_softmax", alpha[k - 1])
            add("a5", f"a⁵({t})", k, t, f"{_ATTEND} (ctx)", c[k - 1])
        y = np.eye(Vt)[fed[k - 1]]  # (Vt,) one-hot a^3(t-1)
        net2 = p["LW2,3"] @ y + p[model.context_key] @ c[k - 1] + p["LW2,2"] @ q + p["b2"]
        a2[k] = np.tanh(net2)  # eq. 6.6
        logits[k - 1] = p["LW3,2"] @ a2[k] + p["b3"]  # eq. 6.7
        add("dec", f"a²({t})", k, t, f"{_MODEL}._step", a2[k])
        add("n3", f"n³({t})", k, t, f"{_MODEL}.forward (logits)", logits[k - 1])
        probs_k = softmax(logits[k - 1 : k], axis=1)[0]
        add("a3", f"a³({t})", k, t, "pyplay.losses.log_softmax (TextbookSeq2Seq.step)", probs_k)
    attn = form != "context"
    weights = None
    if attn:
        weights = model.source_order(alpha[None], np.array([T]))[0]  # (U, T)
    return TextbookTrace(
        form,
        a1[1:],
        a2[1:],
        A if attn else None,
        n if attn else None,
        alpha if attn else None,
        weights,
        c,
        logits,
        softmax(logits, axis=1),
        steps,
        D=D,
        choices=BOOK_CHOICES,
    )
