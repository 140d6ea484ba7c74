r"""Self-attention in two lectures' notation, declared once: what the "Transformers" lesson
shows, and each shown equation computed as written (NumPy, one sequence, loops over positions
as the sums read), so that a test can hold it against the layer that trains
(``tests/lessons/transformer/test_ui_transformer_formulas.py``).

Wand's lecture ("Self-attention in detail"), at position :math:`n` of :math:`x_1..x_N`:

.. math::

    q_n, k_n, v_n = Qx_n, Kx_n, Vx_n, \qquad
    \alpha_{nm} = \mathrm{softmax}\Big(\Big\{\frac{q_n \cdot k_m}{\sqrt{d_{key}}}\Big\}_m\Big),
    \qquad y_n = \sum_m \alpha_{nm} v_m .

Solberg's lecture (single-head attention, without and with a value function, then multi-head):

.. math::

    \alpha_{i,j} = g(Q(x^i), K(x^j)), \quad
    p_{i,j} = \frac{e^{\alpha_{i,j}}}{\sum_k e^{\alpha_{i,k}}}, \quad
    z^i = \sum_{j=1}^L p_{i,j} x^j \;\text{or}\; \sum_{j=1}^L p_{i,j} V(x^j), \quad
    \tilde x^i = h(z^i, x^i),

and per head :math:`m`: :math:`z_m^i = \sum_j p^m_{i,j} V_m(x^j)`, :math:`z^i = (z_1^i, \dots,
z_M^i)`. In pyplay's layer (:class:`~pyplay.nn.TransformerEncoderLayer`, pre-norm in this
lesson) :math:`x^j` is the layer's input :math:`u^j` after its first layer norm; :math:`Q_m(x)
= W_q^{(m)} x + b_q^{(m)}` (rows :math:`md..(m+1)d-1` of ``in_proj_weight``), likewise
:math:`K_m`, :math:`V_m`; :math:`g(q, k) = q \cdot k / \sqrt d`; and :math:`h` is the rest of
the block. No Panel here.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from pyplay.ui.lectures import lecture

__all__ = [
    "SOLBERG",
    "VALUE_LABELS",
    "WAND",
    "formulas_markdown",
    "solberg_terms",
    "wand_terms",
]

# the lesson's value-function setting: its options' labels and values
VALUE_LABELS = {"learned, V(x) = W_v x + b_v": "linear", "none, V(x) = x": "identity"}

# (the equation as the page shows it, the key of what it computes in *_terms)
WAND = (
    ("qₙ, kₙ, vₙ = Qxₙ, Kxₙ, Vxₙ   (Q, K ∈ ℝ^(d_key × D), V ∈ ℝ^(d_value × D))", "qkv"),
    ("αₙₘ = softmax({ qₙ · kₘ / √d_key }ₘ)", "alpha"),
    ("yₙ = Σₘ αₙₘ vₘ", "y"),
)
SOLBERG = {
    "single": (
        ("αᵢ,ⱼ = g(Q(xⁱ), K(xʲ))", "alpha"),
        ("pᵢ,ⱼ = e^(αᵢ,ⱼ) / Σₖ e^(αᵢ,ₖ)", "p"),
        ("zⁱ = Σⱼ₌₁ᴸ pᵢ,ⱼ xʲ", "z"),
        ("x̃ⁱ = h(zⁱ, xⁱ)", "x_tilde"),
    ),
    "value": (("zⁱ = Σⱼ₌₁ᴸ pᵢ,ⱼ V(xʲ)", "z"),),
    "multi": (
        ("αᵢ,ⱼᵐ = g(Qₘ(xⁱ), Kₘ(xʲ))", "alpha"),
        ("pᵢ,ⱼᵐ = e^(αᵢ,ⱼᵐ) / Σₖ e^(αᵢ,ₖᵐ)", "p"),
        ("zₘⁱ = Σⱼ₌₁ᴸ pᵢ,ⱼᵐ Vₘ(xʲ)", "z"),
        ("zⁱ = (z₁ⁱ, …, z_Mⁱ),  x̃ⁱ = h(zⁱ, xⁱ)", "x_tilde"),
    ),
}

Terms = dict[str, Any]


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def _phi(a: np.ndarray, kind: str) -> np.ndarray:
    """relu, or gelu(a) = a Φ(a) with Φ(a) = (1 + erf(a / √2)) / 2."""
    if kind == "relu":
        return np.maximum(a, 0.0)
    erf = np.vectorize(math.erf)
    return a * 0.5 * (1.0 + erf(a / math.sqrt(2.0)))


def _heads(layer: Any) -> tuple[list[tuple[Any, ...]], int]:
    """Per head m: (W_q, b_q, W_k, b_k, W_v or None, b_v or None), rows of in_proj_*; and d."""
    p, E, M = layer.params, layer.d_model, layer.nhead
    d = E // M
    W = p["self_attn.in_proj_weight"]  # (3E or 2E, E): rows q, k (, v)
    b = p.get("self_attn.in_proj_bias", np.zeros(W.shape[0]))
    out = []
    for m in range(M):
        rows = [slice(r * E + m * d, r * E + (m + 1) * d) for r in range(W.shape[0] // E)]
        Wv, bv = (W[rows[2]], b[rows[2]]) if len(rows) == 3 else (None, None)
        out.append((W[rows[0]], b[rows[0]], W[rows[1]], b[rows[1]], Wv, bv))
    return out, d


Fn = Callable[[np.ndarray], np.ndarray]


def _functions(head: tuple[Any, ...], block: slice) -> tuple[Fn, Fn, Fn]:
    """Solberg's query, key and value functions of one head: Q(x) = W_q x + b_q, K likewise,
    V(x) = W_v x + b_v, or the head's ``block`` of x without a value function."""
    Wq, bq, Wk, bk, Wv, bv = head
    return (
        lambda x: Wq @ x + bq,
        lambda x: Wk @ x + bk,
        lambda x: x[block] if Wv is None else Wv @ x + bv,
    )


def attention_input(layer: Any, u: np.ndarray) -> np.ndarray:
    """What the self-attention reads from the layer's input u (T, E): LN₁(u) in a pre-norm
    layer, u itself in a post-norm one."""
    p = layer.params
    if not layer.norm_first:
        return u
    return _layer_norm(u, p["norm1.weight"], p["norm1.bias"], layer.norm1.eps)  # (T, E)


def wand_terms(layer: Any, u: np.ndarray, causal: bool) -> Terms:
    """Wand's three equations for every head, position by position, from the layer's weights
    and its input u (T, E). Without a value function vₙ is xₙ itself (head m: its m-th block
    of d features). Causal: the softmax runs over m ≤ n."""
    x = attention_input(layer, u)  # (T, D) the rows xₙ
    heads, d = _heads(layer)
    T = x.shape[0]
    qkv, alpha, y = [], np.zeros((len(heads), T, T)), []
    for h, (Q, bq, K, bk, V, bv) in enumerate(heads):
        q = [Q @ x[n] + bq for n in range(T)]  # (d,) each
        k = [K @ x[n] + bk for n in range(T)]
        v = [x[n, h * d : (h + 1) * d] if V is None else V @ x[n] + bv for n in range(T)]
        qkv.append(np.array([q, k, v]))  # (3, T, d)
        for n in range(T):
            ms = range(n + 1) if causal else range(T)
            s = np.array([q[n] @ k[m] / math.sqrt(d) for m in ms])  # d_key = d
            alpha[h, n, list(ms)] = np.exp(s - s.max()) / np.exp(s - s.max()).sum()
        y.append([sum(alpha[h, n, m] * v[m] for m in range(T)) for n in range(T)])  # (T, d)
    return {"x": x, "qkv": np.stack(qkv), "alpha": alpha, "y": np.concatenate(y, axis=1)}


def solberg_terms(layer: Any, u: np.ndarray, causal: bool) -> Terms:
    """Solberg's equations for every head m, from the layer's weights and its input u (T, E):
    scores α (h, T, T) (−inf where the causal mask hides xʲ), probabilities p, z (T, E) the
    heads joined, and x̃ = h(z, x) (T, E), the layer's output."""
    x = attention_input(layer, u)  # (T, D) the rows xⁱ
    heads, d = _heads(layer)
    L = x.shape[0]
    alpha = np.full((len(heads), L, L), -np.inf)
    p, z = np.zeros_like(alpha), []
    for m, head in enumerate(heads):
        Q, K, V = _functions(head, slice(m * d, (m + 1) * d))
        for i in range(L):
            js = range(i + 1) if causal else range(L)
            for j in js:
                alpha[m, i, j] = Q(x[i]) @ K(x[j]) / math.sqrt(d)  # g(q, k) = q · k / √d
            e = np.exp(alpha[m, i, list(js)] - alpha[m, i, list(js)].max())
            p[m, i, list(js)] = e / e.sum()
        z.append([sum(p[m, i, j] * V(x[j]) for j in range(L)) for i in range(L)])  # (L, d)
    zz = np.concatenate(z, axis=1)  # (L, E) zⁱ = (z₁ⁱ, …, z_Mⁱ)
    return {"x": x, "alpha": alpha, "p": p, "z": zz, "x_tilde": h_of(layer, zz, u)}


def h_of(layer: Any, z: np.ndarray, u: np.ndarray) -> np.ndarray:
    """x̃ = h(z, x): the rest of pyplay's block after the attention's weighted sum. Pre-norm:
    x′ = u + W_o z + b_o, x̃ = x′ + FF(LN₂(x′)); post-norm: x′ = LN₁(u + W_o z + b_o),
    x̃ = LN₂(x′ + FF(x′)); FF(a) = W₂ φ(W₁ a + b₁) + b₂."""
    p = layer.params

    def ff(a: np.ndarray) -> np.ndarray:
        hidden = _phi(a @ p["linear1.weight"].T + p["linear1.bias"], layer.activation)
        return hidden @ p["linear2.weight"].T + p["linear2.bias"]

    def ln(a: np.ndarray, k: int) -> np.ndarray:
        return _layer_norm(a, p[f"norm{k}.weight"], p[f"norm{k}.bias"], layer.norm1.eps)

    attended = z @ p["self_attn.out_proj.weight"].T + p["self_attn.out_proj.bias"]
    if layer.norm_first:
        x1 = u + attended
        return x1 + ff(ln(x1, 2))
    x1 = ln(u + attended, 1)
    return ln(x1 + ff(x1), 2)


def _eqs(rows: tuple[tuple[str, str], ...]) -> str:
    return "\n".join(f"`{text}`  " for text, _ in rows)


def formulas_markdown(value_function: str = "linear", nhead: int = 4) -> str:
    """The lesson's section: the self-attention of each layer in the notation of Wand's and of
    Solberg's lecture, the names in pyplay's code, and which of Solberg's forms the lesson's
    setting trains."""
    none = value_function == "identity"
    wand = (
        f"**{lecture('wand')}** (self-attention in detail):\n\n{_eqs(WAND)}\n\n"
        "Here xₙ is position n as the attention reads it (pyplay's blocks are pre-norm: the "
        "layer's input after its first layer norm); Q, K, V are each head's rows of "
        "`self_attn.in_proj_weight` (q, k, v in that order), d_key = d_model / heads. pyplay, "
        "as torch, also adds a bias (Qxₙ + b_q), joins the heads' yₙ and multiplies them by "
        "`out_proj.weight` (Wand: multi-head attention carries out several attention "
        "operations with separate parameters and concatenates their results). With the causal "
        "mask the softmax runs over m ≤ n only."
    )
    if none:
        wand += " Without a value function there is no V: vₙ is xₙ itself."
    trains = "without" if none else "with"
    solberg = (
        f"**{lecture('solberg')}** (single-head attention):\n\n{_eqs(SOLBERG['single'])}\n\n"
        f"with a value function V:\n\n{_eqs(SOLBERG['value'])}\n\n"
        f"and multi-head, with value functions:\n\n{_eqs(SOLBERG['multi'])}\n\n"
        "In pyplay g(q, k) = q · k / √d, Qₘ(x) = W_q⁽ᵐ⁾x + b_q⁽ᵐ⁾ (head m's rows of "
        "`in_proj_weight`), likewise Kₘ and Vₘ, and h is the rest of the block: "
        "x′ = uⁱ + W_o zⁱ + b_o, x̃ⁱ = x′ + FF(LN₂(x′)), where uⁱ is the layer's input before its "
        "first norm (xⁱ = LN₁(uⁱ)), so h reads uⁱ rather than xⁱ.\n\n"
        f"The lesson trains the form **{trains} a value function** (setting *Value function*)."
    )
    if none and nhead > 1:
        solberg += (
            f" {lecture('solberg')} writes multi-head attention only with value functions; "
            "without them pyplay gives head m the m-th block of d = d_model / heads features of "
            "xʲ, zₘⁱ = Σⱼ pᵢ,ⱼᵐ xʲ₍ₘ₎, so that z is d_model wide as before."
        )
    elif none:
        solberg += " With one head this is exactly the first form, zⁱ = Σⱼ pᵢ,ⱼ xʲ."
    return wand + "\n\n" + solberg
