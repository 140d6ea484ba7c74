"""CTC's three assumptions, each broken by a small case, beside an attention encoder-decoder that
copes (no Panel here).

Wand's lecture: "CTC makes several assumptions: not more targets than inputs, orderedness,
outputs are statistically independent (given the internal state of the network)", and of the
encoder-decoder: "We make no assumptions about sequence lengths or orderedness." Each case
computes what CTC does with pyplay's CTC code:

* **length** (:func:`length_case`): the label H EH L L OU (the lecture's HELLO with the L
  written twice; "blanks are necessary to output the same symbol repeatedly") needs
  :math:`S + r = 6` frames (:math:`S` labels, :math:`r` repeats). Fewer frames have no path at
  all and CTC's loss is infinite, whatever the net outputs. An encoder-decoder writes until EOS,
  so its loss for the same label read from 3 frames is finite.
* **order** (:func:`order_case`): reverse the orders of a, b, c (the 6 permutations), one
  frame each. The reversed label has exactly one CTC path of 3 frames, and it writes the last
  symbol at frame 1; a net reading the frames in order has seen only the first symbol there
  and can at best guess the last one (1 of the 2 others): loss :math:`\\ln 2` per sequence.
  (A bidirectional net has read frame 3 at frame 1; the alignment stays monotonic all the
  same, so it must carry each symbol across the sequence.) The attention decoder reads the
  whole source before writing and learns the reversal.
* **independence** (:func:`independence_case`): two identical frames, labelled "a b" or "b a"
  half the time each. CTC's frames are independent given the input, so the best it can do is
  :math:`\\tfrac12, \\tfrac12` for a and b at both frames, :math:`p = 1/4` for each label and
  as much on "a" and "b" (paths a a and b b): loss :math:`\\ln 4`. A decoder that reads its own
  previous output writes b after a for sure: loss :math:`\\ln 2`.

The trained comparisons (:func:`train_attention`) fit a small attention encoder-decoder for
``ATTENTION_STEPS`` steps (about a second); the CTC optimum of the independence case is found
by gradient descent on free per-frame logits.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from pyplay.decode.ctc import ctc_loss, ctc_loss_logits
from pyplay.decode.ctc_lattice import ctc_paths
from pyplay.losses import cross_entropy, log_softmax
from pyplay.models.seq2seq import EncoderDecoder
from pyplay.optim.adam import Adam
from pyplay.tasks.pairs import BOS, EOS

__all__ = [
    "ATTENTION_STEPS",
    "LONG_LABEL",
    "Case",
    "ctc_optimum",
    "independence_case",
    "length_case",
    "order_case",
    "train_attention",
]

LONG_LABEL = ("H", "EH", "L", "L", "OU")  # the lecture's HELLO with the L twice
CLASSES = ("-", "H", "EH", "L", "OU")  # blank first, as in the lattice section
SYMBOLS = 3  # a, b, c for the order case
ATTENTION_STEPS = 150  # steps of the attention model trained beside each case
PAIR_LABELS = np.array([[1, 2], [2, 1]])  # a b and b a (blank 0), the independence case
FIRST = EOS + 1  # the first token id of a symbol in the encoder-decoder (after PAD, BOS, EOS)


@dataclass(frozen=True)
class Case:
    """One broken assumption: what CTC gives (``ctc_loss``, per sequence, ``inf`` when no path
    exists) and what the attention encoder-decoder gives (``attention_loss``, per sequence),
    with a line of plain text for each frame count or detail (``rows``)."""

    name: str
    ctc_loss: float
    attention_loss: float
    rows: tuple[str, ...]


def _model(seed: int = 0) -> EncoderDecoder:
    return EncoderDecoder(FIRST + 5, FIRST + 5, 8, 16, cell="gru", wiring="attention", rng=seed)


def _teacher(tgt: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(BOS y, y EOS) for target rows (B, U)."""
    B = tgt.shape[0]
    return (
        np.concatenate([np.full((B, 1), BOS), tgt], axis=1),  # (B, U + 1)
        np.concatenate([tgt, np.full((B, 1), EOS)], axis=1),  # (B, U + 1)
    )


def attention_nll(model: EncoderDecoder, src: np.ndarray, tgt: np.ndarray) -> np.ndarray:
    """(B,) teacher-forced -log p(y EOS | x) of each pair under ``model``."""
    tin, tout = _teacher(tgt)
    logits, _, _ = model.forward(src, np.full(len(src), src.shape[1]), tin)
    lp = log_softmax(logits.astype(np.float64))  # (B, U + 1, V)
    return -np.take_along_axis(lp, tout[..., None], axis=2)[..., 0].sum(axis=1)


def train_attention(src: np.ndarray, tgt: np.ndarray, steps: int = ATTENTION_STEPS) -> float:
    """Fit a fresh attention encoder-decoder to the pairs (full batch, Adam); returns its mean
    -log p per sequence after ``steps`` steps."""
    model = _model()
    opt = Adam(model.params, lr=0.03)
    tin, tout = _teacher(tgt)
    lengths = np.full(len(src), src.shape[1])
    for _ in range(steps):
        logits, _, cache = model.forward(src, lengths, tin)
        _, dlogits = cross_entropy(logits, tout)
        opt.step(model.backward(dlogits, cache).grads)
    return float(attention_nll(model, src, tgt).mean())


def _ctc_nll(probs: np.ndarray, label: list[int]) -> float:
    """-log p(label) under per-frame probabilities (T, C) (zeros floored at 1e-300)."""
    lp = np.log(np.maximum(probs, 1e-300))[None]  # (1, T, C)
    loss, _ = ctc_loss(lp, np.array([label]), [lp.shape[1]], [len(label)], reduction="none")
    return float(loss[0])


def length_case() -> Case:
    """H EH L L OU from 4 to 7 frames: paths, and the loss under uniform frames."""
    label = [CLASSES.index(s) for s in LONG_LABEL]
    repeats = sum(a == b for a, b in itertools.pairwise(label))
    need = len(label) + repeats
    rows, losses = [], {}
    for T in range(need - 2, need + 2):
        n = len(ctc_paths(np.array(label), T))
        losses[T] = _ctc_nll(np.full((T, len(CLASSES)), 1 / len(CLASSES)), label)
        paths = "path" if n == 1 else "paths"
        rows.append(f"T = {T} frames: {n} {paths}, CTC loss under uniform frames {losses[T]:.3f}")
    src = np.full((1, 3), FIRST)  # 3 frames
    tgt = np.array([[FIRST + k - 1 for k in label]])
    finite = float(attention_nll(_model(), src, tgt)[0])
    rows.append(
        f"S = {len(label)} labels with {repeats} repeat need at least {need} frames; "
        f"the untrained attention model's loss from 3 frames: {finite:.3f}"
    )
    return Case("length", losses[need - 1], finite, tuple(rows))


def order_case(train: bool = False) -> Case:
    """The 6 orders of a, b, c, reversed, one frame per symbol."""
    src = np.array(list(itertools.permutations(range(SYMBOLS))))  # (6, 3)
    reversed_ = src[:, ::-1]
    (path,) = ctc_paths(np.array([3, 2, 1]), 3)  # c b a, ids 1..3 after the blank
    # the best a one-way net can do: frame 1 has read x1 only and guesses x3 among the two
    # other symbols (1/2 each); frames 2 and 3 write x2 and x1, already read
    eye = np.eye(SYMBOLS + 1)  # (C, C), class k + 1 is symbol k
    best = np.mean(
        [
            _ctc_nll(
                np.array([(1 - eye[0] - eye[x[0] + 1]) / 2, eye[x[1] + 1], eye[x[0] + 1]]),
                [int(k) + 1 for k in x[::-1]],
            )
            for x in src
        ]
    )
    attention = train_attention(src + FIRST, reversed_ + FIRST) if train else math.nan
    names = "-abc"
    rows = (
        "input a b c, target c b a: its only path of 3 frames is "
        + " ".join(names[k] for k in path)
        + " (c at frame 1)",
        f"best one-way CTC net: loss {best:.3f} per sequence (ln 2 = {math.log(2):.3f})",
    )
    return Case("order", float(best), attention, rows)


def ctc_optimum(steps: int = 400) -> np.ndarray:
    """(T, C) per-frame probabilities minimising CTC's mean loss on a b and b a from the same
    two frames, found by gradient descent on free logits (one set for both: the frames cannot
    tell the two apart)."""
    logits = np.random.default_rng(0).normal(size=(1, 2, 3)) * 0.1  # (1, T, C)
    for _ in range(steps):
        both = np.repeat(logits, 2, axis=0)  # (2, T, C)
        _, grad = ctc_loss_logits(both, PAIR_LABELS, [2, 2], [2, 2], reduction="sum")
        logits = logits - 2.0 * grad.sum(axis=0, keepdims=True)
    return np.exp(log_softmax(logits[0]))


def independence_case(train: bool = False) -> Case:
    """Two identical frames labelled a b or b a: CTC's best frames (1/2 on a and b at both,
    or, when ``train``, found by :func:`ctc_optimum`) against the attention model."""
    probs = ctc_optimum() if train else np.array([[0.0, 0.5, 0.5]] * 2)  # (T, C)
    ctc = float(np.mean([_ctc_nll(probs, list(lab)) for lab in PAIR_LABELS]))
    single = sum(math.exp(-_ctc_nll(probs, [k])) for k in (1, 2))
    src = np.full((2, 2), FIRST)
    attention = train_attention(src, PAIR_LABELS - 1 + FIRST) if train else math.nan
    how = "found by gradient descent" if train else "1/2 each, by symmetry"
    rows = (
        f"CTC's best frames ({how}): "
        + "; ".join(f"frame {t + 1}: a {probs[t, 1]:.3f}, b {probs[t, 2]:.3f}" for t in range(2)),
        f"CTC: p(a b) = {math.exp(-_ctc_nll(probs, [1, 2])):.3f}, p(b a) = "
        f"{math.exp(-_ctc_nll(probs, [2, 1])):.3f}, and {single:.3f} on a or b alone; loss "
        f"{ctc:.3f} (ln 4 = {math.log(4):.3f}); a decoder that reads its last output: "
        f"ln 2 = {math.log(2):.3f}",
    )
    return Case("independence", ctc, attention, rows)
