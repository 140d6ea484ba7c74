"""Connectionist temporal classification (Graves et al. 2006): the loss and its gradient.

A network emits, at every frame :math:`t`, log-probabilities :math:`\\log y^t_k` over ``C``
classes, one of which is the *blank*. A frame-level *path* :math:`\\pi` maps to a labelling by
the collapse :math:`\\mathcal{B}` (merge repeats, then drop blanks: ``a a - b b -> a b``), and

.. math::

    p(\\mathbf{l} \\mid \\mathbf{x}) = \\sum_{\\pi \\in \\mathcal{B}^{-1}(\\mathbf{l})}
        \\prod_t y^t_{\\pi_t}, \\qquad \\text{loss} = -\\log p(\\mathbf{l} \\mid \\mathbf{x}).

The sum runs over exponentially many paths; the forward-backward programme computes it on the
*extended* labelling :math:`\\mathbf{l}' = (-, l_1, -, l_2, \\dots, l_S, -)` of length
:math:`2S + 1` (blanks between and around the labels). In the log domain,

.. math::

    \\alpha_t(s) = \\log y^t_{l'_s} + \\operatorname{logsumexp}\\big(\\alpha_{t-1}(s),\\,
        \\alpha_{t-1}(s-1),\\, [\\alpha_{t-1}(s-2)]\\big),

where the skip from :math:`s-2` is allowed only onto a label different from :math:`l'_{s-2}`
(a repeated label needs a blank in between). Starting from :math:`\\alpha_1(1), \\alpha_1(2)`
(blank or first label) and ending in the last blank or the last label,
:math:`\\log p = \\operatorname{logsumexp}(\\alpha_T(2S+1), \\alpha_T(2S))`. The backward
variable :math:`\\beta_t(s)` (log-probability of the remaining frames given position :math:`s` at
:math:`t`, emission at :math:`t` excluded) runs the same recursion in reverse, and the posterior
occupation :math:`\\gamma_t(s) = \\exp(\\alpha_t(s) + \\beta_t(s) - \\log p)` gives the gradient.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pyplay._checks import check_array, check_choice, check_int, check_lengths
from pyplay.losses import log_softmax, softmax

__all__ = ["ctc_loss", "ctc_loss_logits"]

REDUCTIONS = ("mean", "sum", "none")
NEG_INF = -np.inf


def _check_inputs(
    log_probs: Any, targets: Any, input_lengths: Any, target_lengths: Any, blank: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    lp = check_array("log_probs", log_probs, ndim=3, layout="(B, T, C)")
    B, T, C = lp.shape
    y = check_array("targets", targets, ndim=2, kind="i", layout="(B, S)")
    if y.shape[0] != B:
        raise ValueError(f"targets must have one row per sequence (B={B}), got {y.shape[0]}")
    S = y.shape[1]
    blank = check_int("blank", blank, min_value=0, max_value=C - 1)
    in_len = check_lengths(input_lengths, B, T, name="input_lengths", min_value=0)
    tgt_len = check_lengths(target_lengths, B, S, name="target_lengths", min_value=0, axis="S")
    valid = np.arange(S)[None, :] < tgt_len[:, None]  # (B, S)
    bad = valid & ((y < 0) | (y >= C) | (y == blank))
    if bad.any():
        b, s = (int(i[0]) for i in np.nonzero(bad))
        raise ValueError(
            f"targets must be class ids in 0..{C - 1} other than the blank ({blank}) within "
            f"target_lengths, got targets[{b}, {s}] = {int(y[b, s])}"
        )
    return lp, np.where(valid, y, blank), in_len, tgt_len, blank


def _extend(y: np.ndarray, tgt_len: np.ndarray, blank: int) -> tuple[np.ndarray, ...]:
    """Extended labels ``-, l1, -, l2, ..., lS, -``, which of them exist, and the skips."""
    B, S = y.shape
    ext = np.full((B, 2 * S + 1), blank, dtype=np.int64)  # (B, L) with L = 2S + 1
    ext[:, 1::2] = y
    exists = np.arange(2 * S + 1)[None, :] < 2 * tgt_len[:, None] + 1  # (B, L)
    # skip s-2 -> s: onto a label (odd s) that differs from the label two places back
    skip = np.zeros_like(exists)  # (B, L)
    skip[:, 3::2] = ext[:, 3::2] != ext[:, 1:-2:2]
    return ext, exists, skip


def _forward_backward(
    lp_ext: np.ndarray,
    in_len: np.ndarray,
    tgt_len: np.ndarray,
    skip: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Log alpha, log beta (both (B, T, L)) and log p(l|x) (B,), looping over time only.

    Both live in buffers with two extra columns of -inf (before the positions for alpha,
    after them for beta), so the moves from s-1, s-2 (or to s+1, s+2) are plain slices.
    """
    B, T, L = lp_ext.shape
    rows = np.arange(B)
    a_buf = np.full((B, T, L + 2), NEG_INF)  # (B, T, L+2): alpha_t(s) at [:, t, s + 2]
    b_buf = np.full((B, T, L + 2), NEG_INF)  # (B, T, L+2): beta_t(s) at [:, t, s]
    alpha, beta = a_buf[:, :, 2:], b_buf[:, :, :L]  # (B, T, L) views
    if T == 0:
        return alpha, beta, np.where(tgt_len == 0, 0.0, NEG_INF)
    # a skip s-2 -> s adds 0 where allowed and -inf elsewhere; s -> s+2 the same, shifted
    skip_to = np.where(skip, 0.0, NEG_INF)  # (B, L)
    skip_from = np.full((B, L), NEG_INF)  # (B, L)
    skip_from[:, : L - 2] = skip_to[:, 2:]

    alpha[:, 0, :2] = lp_ext[:, 0, :2]  # start in the first blank or the first label
    for t in range(1, T):
        prev = a_buf[:, t - 1]  # (B, L+2)
        cur = alpha[:, t]  # (B, L)
        np.logaddexp(prev[:, 2:], prev[:, 1:-1], out=cur)  # stay, or come from s-1
        np.logaddexp(cur, prev[:, :-2] + skip_to, out=cur)  # or skip from s-2
        cur += lp_ext[:, t]

    # end in the last blank (2S) or, if there is a label, the last label (2S - 1)
    final = np.full((B, L), NEG_INF)  # (B, L): beta at frame T_b - 1
    final[rows, 2 * tgt_len] = 0.0
    has_label = tgt_len > 0
    final[rows[has_label], 2 * tgt_len[has_label] - 1] = 0.0
    end = alpha[rows, np.maximum(in_len - 1, 0)]  # (B, L)
    log_p = np.logaddexp.reduce(end + final, axis=1)  # (B,)
    log_p = np.where(in_len == 0, np.where(has_label, NEG_INF, 0.0), log_p)

    nxt = np.full((B, L + 2), NEG_INF)  # (B, L+2): beta_{t+1}(s) + log y^{t+1}_{l'_s}
    for t in range(T - 1, -1, -1):
        if t < T - 1:  # beta_{t+1} is -inf for sequences that end at or before t
            np.add(beta[:, t + 1], lp_ext[:, t + 1], out=nxt[:, :L])
            cur = beta[:, t]  # (B, L)
            np.logaddexp(nxt[:, :L], nxt[:, 1:-1], out=cur)  # stay, or go to s+1
            np.logaddexp(cur, nxt[:, 2:] + skip_from, out=cur)  # or skip to s+2
        ends = rows[in_len - 1 == t]
        beta[ends, t] = final[ends]
    return alpha, beta, log_p


def ctc_loss(
    log_probs: Any,
    targets: Any,
    input_lengths: Any,
    target_lengths: Any,
    blank: int = 0,
    reduction: str = "mean",
    zero_infinity: bool = False,
) -> tuple[Any, np.ndarray]:
    """CTC loss of padded ``targets`` under per-frame ``log_probs``, and d(loss)/d(log_probs).

    Parameters
    ----------
    log_probs : (B, T, C) float array
        Log-softmax outputs (finite; float32 or float64; the dynamic programme runs in float64).
        Batch first, like every pyplay layer: this differs from
        ``torch.nn.functional.ctc_loss``, which takes ``(T, B, C)``. An array in torch's layout
        goes in as ``log_probs.transpose(1, 0, 2)``; when ``T == B`` nothing can tell the two
        layouts apart, so the wrong one gives other losses without an error.
    targets : (B, S) int array
        Label ids, padded: only the first ``target_lengths[b]`` entries of row ``b`` are read.
        They must lie in ``0..C-1`` and differ from ``blank``.
    input_lengths : (B,) ints in ``0..T``
        Frames of each sequence; later frames are padding and get zero gradient.
    target_lengths : (B,) ints in ``0..S``
    blank : int
        The blank class.
    reduction : {"mean", "sum", "none"}
        As in ``torch.nn.functional.ctc_loss``: "none" returns the (B,) losses, "sum" their sum,
        "mean" divides each loss by its target length (clamped to >= 1), then averages.
    zero_infinity : bool
        A labelling that no path of ``input_lengths[b]`` frames can produce (too many labels,
        counting a blank between repeats) has probability 0 and loss ``inf``. With
        ``zero_infinity=True`` its loss is 0 instead. Either way its gradient is zero (torch's
        backward gives NaN there unless ``zero_infinity``).

    Returns
    -------
    loss : float, or (B,) array for ``reduction="none"``
    dlog_probs : (B, T, C) array, dtype of ``log_probs``
        The gradient of the reduced loss (for "none": of the sum of the losses) with respect to
        ``log_probs`` taken as free variables, minus the posterior occupation of each class:

        .. math::

            \\frac{\\partial (-\\log p)}{\\partial \\log y^t_k} =
                -\\sum_{s:\\, l'_s = k} \\gamma_t(s).

        ``torch.nn.functional.ctc_loss`` returns instead, in its backward,
        ``exp(log_probs) * sum_j gamma_t(j) - gamma_t(k)`` with
        :math:`\\gamma_t(k) = \\sum_{s:\\, l'_s = k} \\gamma_t(s)`, i.e. ``softmax - gamma`` on
        valid frames: the gradient with respect to the *logits before the log-softmax* (torch's
        kernel assumes its input came out of a log-softmax). Both conventions give the same
        gradient with respect to those logits: the log-softmax backward
        :math:`g - \\mathrm{softmax}\\cdot\\sum_k g_k` maps ours to ``softmax - gamma`` because
        :math:`\\sum_k \\gamma_t(k) = 1` on every valid frame. :func:`ctc_loss_logits` does that
        step for you.
    """
    lp, y, in_len, tgt_len, blank = _check_inputs(
        log_probs, targets, input_lengths, target_lengths, blank
    )
    reduction = check_choice("reduction", reduction, REDUCTIONS)
    if not isinstance(zero_infinity, bool | np.bool_):
        raise TypeError(f"zero_infinity must be True or False, got {zero_infinity!r}")
    B, T, C = lp.shape
    ext, exists, skip = _extend(y, tgt_len, blank)  # (B, L) each
    L = ext.shape[1]
    lp64 = lp.astype(np.float64, copy=False)
    with np.errstate(under="ignore"):
        lp_ext = np.take_along_axis(lp64, np.broadcast_to(ext[:, None, :], (B, T, L)), axis=2)
        lp_ext = np.where(exists[:, None, :], lp_ext, NEG_INF)  # (B, T, L)
        alpha, beta, log_p = _forward_backward(lp_ext, in_len, tgt_len, skip)
        possible = np.isfinite(log_p)  # (B,)
        shift = np.where(possible, log_p, 0.0)[:, None, None]  # (B, 1, 1)
        gamma = np.exp(alpha + beta - shift) * possible[:, None, None]  # (B, T, L)
    onehot = (ext[:, :, None] == np.arange(C)).astype(np.float64)  # (B, L, C)
    grad = -np.matmul(gamma, onehot)  # (B, T, C)

    per = -log_p  # (B,), inf where impossible
    if zero_infinity:
        per = np.where(possible, per, 0.0)
    if reduction == "none":
        return per.astype(lp.dtype), grad.astype(lp.dtype)
    if reduction == "sum":
        return float(per.sum()), grad.astype(lp.dtype)
    scale = 1.0 / (np.maximum(tgt_len, 1) * max(B, 1))  # (B,)
    loss = float((per * scale).sum()) if B else float("nan")
    return loss, (grad * scale[:, None, None]).astype(lp.dtype)


def ctc_loss_logits(logits: Any, *args: Any, **kwargs: Any) -> tuple[Any, np.ndarray]:
    """:func:`ctc_loss` of ``log_softmax(logits)``, and d(loss)/d(logits).

    The log-softmax backward turns the gradient :math:`g` with respect to the log-probabilities
    into :math:`\\partial / \\partial z_k = g_k - \\mathrm{softmax}(z)_k \\sum_j g_j`, which for
    CTC is :math:`\\mathrm{softmax}(z) - \\gamma` on valid frames (and 0 on padding). This is
    the gradient to feed a network's output layer.

    Parameters
    ----------
    logits : (B, T, C) float array
        Unnormalised scores.
    *args, **kwargs
        The other arguments of :func:`ctc_loss` (``targets, input_lengths, target_lengths,
        blank=0, reduction="mean", zero_infinity=False``), passed on as given.
    """
    z = check_array("logits", logits, ndim=3, layout="(B, T, C)")
    loss, g = ctc_loss(log_softmax(z), *args, **kwargs)
    with np.errstate(under="ignore"):
        dz = g - softmax(z) * g.sum(axis=-1, keepdims=True)  # (B, T, C)
    return loss, dz.astype(z.dtype, copy=False)
