r"""The six attention scores of Schmidt's Table 1 (section 8.2), declared once: the formula the
page shows beside the score selector and, right beside it, the same formula as NumPy.

Table 1 writes every score as :math:`\mathrm{score}(S_t, H_{t'})`, :math:`S_t` the decoder's
state (the query: :math:`s_t` with Luong's wiring, :math:`s_{t-1}` with Bahdanau's, as in
Schmidt's eq. 28) and :math:`H_{t'}` the encoder's state at source position :math:`t'` (the
key), with trainable :math:`v_a` and :math:`W_a`. The weights are then
:math:`\alpha_{t,t'} = \exp e_{t,t'} / \sum_{t''} \exp e_{t,t''}` over the real source positions.

Each :class:`ScoreFormula`'s ``reference`` computes :math:`e` (B, Tq, Tk) the way its text reads,
from the scorer's parameters (named as in :mod:`pyplay.nn.attention`), so a test can hold the
shown formula against the module that trains
(``tests/lessons/seq2seq/test_ui_seq2seq_formulas.py``). The scaled dot product has two
entries, ``"scaled_dot"`` by :math:`\sqrt{n_{source}}` as Table 1 writes it and
``"scaled_dot/key_size"`` by :math:`\sqrt{d}` as Vaswani et al. and Wand's lecture write it (the
lesson's ``scale_by`` picks one, :func:`formula_for`). No Panel here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from pyplay.ui.lectures import lecture

__all__ = ["FORMULAS", "SCALE_LABELS", "ScoreFormula", "formula_for", "formula_markdown"]

Params = dict[str, np.ndarray]
Reference = Callable[[np.ndarray, np.ndarray, Params, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class ScoreFormula:
    """One row of Table 1.

    Parameters
    ----------
    name : str
        The row's name in Table 1.
    text : str
        :math:`\\mathrm{score}(S_t, H_{t'})` in Table 1's notation (Unicode, as the page shows).
    used_in : str
        The work Table 1 cites for it.
    note : str
        How pyplay's code writes the same thing, where its form differs ("" when it does not).
    reference : callable
        ``reference(S (B, Tq, Dq), H (B, Tk, Dk), params, n (B, Tq, 1))`` -> :math:`e`
        (B, Tq, Tk), the text computed literally; ``n`` is the number of source positions
        each query sees.
    """

    name: str
    text: str
    used_in: str
    note: str
    reference: Reference


def _T(x: np.ndarray) -> np.ndarray:
    return np.swapaxes(x, -1, -2)


def _cosine(S: np.ndarray, H: np.ndarray, p: Params, n: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(S, axis=2)[:, :, None] * np.linalg.norm(H, axis=2)[:, None, :]
    return (S @ _T(H)) / norms  # (B, Tq, Tk)


def _additive(S: np.ndarray, H: np.ndarray, p: Params, n: np.ndarray) -> np.ndarray:
    W_a = np.concatenate([p["weight_query"], p["weight_key"]], axis=1)  # (A, Dq + Dk)
    Tq, Tk = S.shape[1], H.shape[1]
    pairs = np.concatenate(  # [S_t; H_t'] for every pair, (B, Tq, Tk, Dq + Dk)
        [np.repeat(S[:, :, None], Tk, axis=2), np.repeat(H[:, None], Tq, axis=1)], axis=3
    )
    return np.tanh(pairs @ W_a.T + p.get("bias", 0.0)) @ p["v"]  # (B, Tq, Tk)


FORMULAS: dict[str, ScoreFormula] = {
    "cosine": ScoreFormula(
        "Content-base", "cosine[Sₜ, Hₜ′]", "Graves et al. 2014 (Neural Turing Machine)",
        "pyplay: β · Sₜᵀ Hₜ′ / (‖Sₜ‖ ‖Hₜ′‖) with β = 1 here (a zero vector counts as cosine 0)",
        _cosine,
    ),
    "additive": ScoreFormula(
        "Additive", "vₐᵀ tanh(Wₐ [Sₜ; Hₜ′])", "Bahdanau et al. 2014",
        "pyplay splits Wₐ = [W_q W_k] and adds a bias: vₐᵀ tanh(W_q Sₜ + W_k Hₜ′ + b)",
        _additive,
    ),
    "location": ScoreFormula(
        "Location-Base", "softmax(Wₐ Sₜ)", "Luong et al. 2015",
        "the weights come from the decoder state alone: position t′ scores (Wₐ Sₜ)ₜ′, row t′ "
        "of a 64-row Wₐ, whatever Hₜ′ holds",
        lambda S, H, p, n: S @ p["weight"][: H.shape[1]].T,
    ),
    "general": ScoreFormula(
        "General", "Sₜᵀ Wₐ Hₜ′", "Luong et al. 2015", "",
        lambda S, H, p, n: S @ p["weight"] @ _T(H),
    ),
    "dot": ScoreFormula(
        "Dot-Product", "Sₜᵀ Hₜ′", "Luong et al. 2015", "", lambda S, H, p, n: S @ _T(H)
    ),
    "scaled_dot": ScoreFormula(
        "Scaled Dot-Product", "Sₜᵀ Hₜ′ / √n_source", "Vaswani et al. 2017",
        "n_source is this source's length (padding not counted)",
        lambda S, H, p, n: S @ _T(H) / np.sqrt(n),
    ),
    "scaled_dot/key_size": ScoreFormula(
        "Scaled Dot-Product", "Sₜᵀ Hₜ′ / √d", "Vaswani et al. 2017",
        "d is the size of Sₜ and Hₜ′ (the hidden size)",
        lambda S, H, p, n: S @ _T(H) / np.sqrt(S.shape[2]),
    ),
}  # fmt: skip

SCALE_LABELS = {"√d (Vaswani, Wand)": "key_size", "√n_source (Schmidt)": "source_length"}

CONFLICT = (
    f"The lectures disagree here: {lecture('schmidt')} (Table 1) divides by √n_source and says "
    'it "scales the dot-product by the number of characters of the current word"; '
    f"{lecture('wand')} divides by √d_key, the size of the vectors, as Vaswani et al. do (for "
    "vectors of unit-variance numbers the dot product has variance d). The code divided by √d "
    "until this choice existed, and still does by default."
)


def formula_for(score: str, scale_by: str = "key_size") -> ScoreFormula:
    """The row of ``score`` (a key of the lesson's score setting); for ``"scaled_dot"`` the
    divisor ``scale_by`` picks (``"key_size"``: √d, ``"source_length"``: √n_source)."""
    if score == "scaled_dot" and scale_by == "key_size":
        return FORMULAS["scaled_dot/key_size"]
    if score not in FORMULAS:
        raise ValueError(f"score must be one of {sorted(FORMULAS)}, got {score!r}")
    return FORMULAS[score]


def formula_markdown(score: str, scale_by: str = "key_size") -> str:
    """What the page shows beside the score selector: Table 1's row, the code's form where it
    differs, and for the scaled dot product the lectures' disagreement."""
    row = formula_for(score, scale_by)
    where = f"Table 1 of {lecture('schmidt')}: {row.name}, {row.used_in}"
    if row is FORMULAS["scaled_dot/key_size"]:
        where = f"as Vaswani et al. and {lecture('wand')} write it; Table 1 has √n_source"
    lines = [f"`score(Sₜ, Hₜ′) = {row.text}`", f"({where})"]
    if row.note:
        lines.append(row.note)
    if score == "scaled_dot":
        lines.append(CONFLICT)
    return "\n\n".join(lines)
