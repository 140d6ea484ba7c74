r"""Schmidt's recurrent network and backpropagation through time (his eq. 1-2, 5-12), declared
once: what the recurrent-networks lesson shows beside its gradient-through-time view, and each
equation computed as written, in row vectors with the batch as rows, from a plain RNN's
weights (``tests/lessons/rnn/test_ui_rnn_schmidt.py`` holds them against the core's backward).

Schmidt writes, for :math:`n` rows of :math:`d` inputs and :math:`h` hidden units,

.. math::

    H_t = \phi_h(X_t W_{xh} + H_{t-1} W_{hh} + b_h) \;(1), \qquad
    O_t = \phi_o(H_t W_{ho} + b_o) \;(2), \qquad
    \mathcal L(O, Y) = \sum_{t=1}^T \ell_t(O_t, Y_t) \;(5),

and the gradients as sums over the steps :math:`k \le t` that step :math:`t`'s loss reaches
back to, :math:`\partial H_t / \partial H_k` in general (9, 10) and the powers
:math:`(W_{hh}^\top)^{t-k}` (11, 12), which hold when :math:`\phi_h` is the identity. pyplay's
names: :math:`W_{xh}` = ``rnn.weight_ih_l0.T`` (d, h), :math:`W_{hh}` = ``rnn.weight_hh_l0.T``
(h, h), :math:`b_h` = ``rnn.bias_ih_l0 + rnn.bias_hh_l0``, :math:`W_{ho}` = ``head.weight.T``
(h, q), :math:`b_o` = ``head.bias``, :math:`\phi_o` the identity (the softmax is part of
:math:`\ell_t`). No Panel here.
"""

from __future__ import annotations

import numpy as np

from pyplay.ui.lectures import lecture

__all__ = [
    "EQUATIONS",
    "bptt_general",
    "bptt_powers",
    "forward",
    "grad_who",
    "schmidt_markdown",
    "schmidt_weights",
]

Weights = dict[str, np.ndarray]

EQUATIONS = {  # Schmidt's number: the equation as the page shows it
    1: "Hₜ = φₕ(Xₜ W_xh + Hₜ₋₁ W_hh + b_h)",
    2: "Oₜ = φₒ(Hₜ W_ho + b_o)",
    5: "L(O, Y) = Σₜ₌₁ᵀ ℓₜ(Oₜ, Yₜ)",
    6: "∂L/∂W_ho = Σₜ₌₁ᵀ ∂ℓₜ/∂Oₜ · ∂Oₜ/∂φₒ · Hₜ",
    9: "∂L/∂W_hh = Σₜ₌₁ᵀ ∂ℓₜ/∂Oₜ · ∂Oₜ/∂φₒ · W_ho Σₖ₌₁ᵗ ∂Hₜ/∂Hₖ · ∂Hₖ/∂W_hh",
    10: "∂L/∂W_xh = Σₜ₌₁ᵀ ∂ℓₜ/∂Oₜ · ∂Oₜ/∂φₒ · W_ho Σₖ₌₁ᵗ ∂Hₜ/∂Hₖ · ∂Hₖ/∂W_xh",
    11: "∂L/∂W_hh = Σₜ₌₁ᵀ ∂ℓₜ/∂Oₜ · ∂Oₜ/∂φₒ · W_ho Σₖ₌₁ᵗ (W_hhᵀ)ᵗ⁻ᵏ · Hₖ",
    12: "∂L/∂W_xh = Σₜ₌₁ᵀ ∂ℓₜ/∂Oₜ · ∂Oₜ/∂φₒ · W_ho Σₖ₌₁ᵗ (W_hhᵀ)ᵗ⁻ᵏ · Xₖ",
}
NAMES = (
    "W_xh = `rnn.weight_ih_l0`ᵀ (d × h), W_hh = `rnn.weight_hh_l0`ᵀ (h × h), "
    "b_h = `rnn.bias_ih_l0` + `rnn.bias_hh_l0`, W_ho = `head.weight`ᵀ (h × q), "
    "b_o = `head.bias`; φₕ the lesson's nonlinearity, φₒ the identity (the head's outputs are "
    "the scores; the softmax belongs to ℓₜ, so ∂Oₜ/∂φₒ = 1); H₀ = 0; n = the batch's rows."
)


def schmidt_weights(params: Weights) -> Weights:
    """Schmidt's matrices from a one-layer plain RNN's parameters (pyplay's names)."""
    return {
        "W_xh": params["rnn.weight_ih_l0"].T,  # (d, h)
        "W_hh": params["rnn.weight_hh_l0"].T,  # (h, h)
        "b_h": params["rnn.bias_ih_l0"] + params["rnn.bias_hh_l0"],  # (h,)
        "W_ho": params["head.weight"].T,  # (h, q)
        "b_o": params["head.bias"],  # (q,)
    }


def _phi(a: np.ndarray, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """φₕ(a) and φₕ′(a)."""
    if kind == "tanh":
        h = np.tanh(a)
        return h, 1.0 - h * h
    if kind == "relu":
        return np.maximum(a, 0.0), (a > 0).astype(a.dtype)
    return a, np.ones_like(a)


def forward(
    W: Weights, X: list[np.ndarray], kind: str
) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
    """Eq. 1 and 2 step by step: ``H`` (H₀..H_T, each (n, h)), ``O`` (O₁..O_T, (n, q)) and
    ``dphi`` (φₕ′ of each step's argument, index 1..T; index 0 unused) from ``X`` (X₁..X_T,
    each (n, d))."""
    n = X[0].shape[0]
    H = [np.zeros((n, W["W_hh"].shape[0]))]  # H₀ = 0
    O, dphi = [], [np.zeros(0)]
    for X_t in X:
        h, d = _phi(X_t @ W["W_xh"] + H[-1] @ W["W_hh"] + W["b_h"], kind)  # (1)
        H.append(h)
        dphi.append(d)
        O.append(h @ W["W_ho"] + W["b_o"])  # (2), φₒ the identity
    return H, O, dphi


def grad_who(H: list[np.ndarray], dl_dO: list[np.ndarray]) -> np.ndarray:
    """Eq. 6, Σₜ ∂ℓₜ/∂Oₜ · Hₜ, in row form Σₜ Hₜᵀ (∂ℓₜ/∂Oₜ): (h, q)."""
    return sum(H[t + 1].T @ dl_dO[t] for t in range(len(dl_dO)))  # (h, q)


def bptt_general(
    W: Weights, X: list[np.ndarray], H: list[np.ndarray], dphi: list[np.ndarray],
    dl_dO: list[np.ndarray],
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Eq. 9 and 10 for any φₕ: for every t the row gradient ∂ℓₜ/∂Oₜ · W_hoᵀ, carried back to
    each k ≤ t through ∂Hₜ/∂Hₖ (one factor W_hhᵀ and one φₕ′ per step), then times
    ∂Hₖ/∂W (Hₖ₋₁ for W_hh, Xₖ for W_xh). Returns (∂L/∂W_hh (h, h), ∂L/∂W_xh (d, h))."""
    T = len(X)
    g_hh, g_xh = np.zeros_like(W["W_hh"]), np.zeros_like(W["W_xh"])
    for t in range(1, T + 1):
        dH = dl_dO[t - 1] @ W["W_ho"].T  # (n, h) ∂ℓₜ/∂Hₜ
        for k in range(t, 0, -1):  # dH is ∂ℓₜ/∂Hₖ: through ∂Hₜ/∂Hₖ
            dA = dH * dphi[k]  # (n, h) into step k's argument
            g_hh += H[k - 1].T @ dA  # ∂Hₖ/∂W_hh: Hₖ₋₁
            g_xh += X[k - 1].T @ dA  # ∂Hₖ/∂W_xh: Xₖ
            dH = dA @ W["W_hh"].T  # one step further back
    return g_hh, g_xh


def bptt_powers(
    W: Weights, X: list[np.ndarray], H: list[np.ndarray], dl_dO: list[np.ndarray],
    state_index: int = -1,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Eq. 11 and 12 as written: Σₜ Σₖ₌₁ᵗ, the powers (W_hhᵀ)ᵗ⁻ᵏ by matrix_power, in row form
    Xₖᵀ (∂ℓₜ/∂Oₜ W_hoᵀ (W_hhᵀ)ᵗ⁻ᵏ); exact when φₕ is the identity. Eq. 11's state is
    Hₖ₊ₛ with s = ``state_index``: -1, the state W_hh multiplies at step k (Hₖ₋₁), or 0, Hₖ as
    the equation prints it. Returns (∂L/∂W_hh, ∂L/∂W_xh)."""
    T = len(X)
    g_hh, g_xh = np.zeros_like(W["W_hh"]), np.zeros_like(W["W_xh"])
    for t in range(1, T + 1):
        for k in range(1, t + 1):
            back = dl_dO[t - 1] @ W["W_ho"].T @ np.linalg.matrix_power(W["W_hh"].T, t - k)
            g_hh += H[k + state_index].T @ back  # (h, h)
            g_xh += X[k - 1].T @ back  # (d, h)
    return g_hh, g_xh


def schmidt_markdown() -> str:
    """The section beside the gradient-through-time view."""
    eqs = "\n".join(f"`{text}`   ({n})  " for n, text in EQUATIONS.items())
    return (
        f"{lecture('schmidt')} writes the network in row vectors, one row per example "
        f"(Xₜ is n × d, Hₜ is n × h), and backpropagation through time as sums:\n\n{eqs}\n\n"
        f"In pyplay: {NAMES}\n\n"
        "**How to read the products.** With row vectors the shapes fit in the order "
        "Hₜᵀ · ∂ℓₜ/∂Oₜ in (6) and Xₖᵀ · (∂ℓₜ/∂Oₜ · W_hoᵀ · (W_hhᵀ)ᵗ⁻ᵏ) in (12): the row "
        "gradient is carried back from step t to step k, then multiplied by the input of step "
        "k; Schmidt leaves these transposes out. ∂Hₜ/∂Hₖ in (9) and (10) is one factor W_hhᵀ "
        "per step back *and* φₕ′ of each step's argument. The powers in (11) and (12) are that "
        "product only when φₕ is the identity (a linear RNN): Schmidt does not say so, but his "
        "derivation needs it; with tanh they are not the gradient. In (11) the state that W_hh "
        "multiplies at step k is Hₖ₋₁ (eq. 1), not the printed Hₖ: with Hₖ the sum does not "
        "give the gradient.\n\n"
        "Computed exactly as these sums from this lesson's RNN, (6), (9)-(10) and, for a "
        "linear RNN, (11)-(12) give the core's backward gradient to 1e-10 (pyplay's tests "
        "check it). To train the linear case, choose Cell: RNN and φₕ: linear below."
    )
