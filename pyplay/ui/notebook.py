"""The playground's look-inside views for a notebook: each returns a Panel object.

In Jupyter (after ``pn.extension()``), for models trained natively:

- ``pyplay.ui.gates(model, x)``: every gate and state of a recurrent model over one input
  sequence, a heatmap per quantity (time along x, units along y), one row per layer;
- ``pyplay.ui.attention(model, src, task=task)``: greedy decoding of a source by an
  encoder-decoder with attention, and where each output step looked;
- ``pyplay.ui.beam(model, src, beam_size=3, task=task)``: beam search over a source, its tree
  and ranked hypotheses, with Step / Back / Run buttons.

The figures are those of the page (:mod:`pyplay.ui.plots`); arguments are checked and a wrong
one raises a TypeError or ValueError saying what was expected.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import panel as pn

from pyplay.models import SequenceModel
from pyplay.models.seq2seq import EncoderDecoder
from pyplay.objectives import reverse_sources
from pyplay.tasks.pairs import BOS, EOS, Vocab
from pyplay.ui.lessons.seq2seq.beam_stepper import BeamStepper
from pyplay.ui.plots import (
    attention_figure,
    beam_tree_figure,
    heatmap_figure,
    update_attention,
    update_heatmap,
)
from pyplay.ui.text import Text

__all__ = ["attention", "beam", "gates"]

TITLES = {
    "i": "input gate i", "f": "forget gate f", "g": "candidate g", "o": "output gate o",
    "c": "cell state c", "h": "hidden state h", "r": "reset gate r", "z": "update gate z",
    "n": "candidate n", "a": "pre-activation a",
}  # fmt: skip
MAX_SOURCE = 200


# ------------------------------------------------------------------ checking arguments
def _sequence(model: SequenceModel, x: Any) -> np.ndarray:
    """``x`` as a batch of one sequence for ``model``: ids (1, T) or features (1, T, F)."""
    arr = np.asarray(x)
    if model.input_kind == "tokens":
        if arr.ndim == 2 and arr.shape[0] == 1:
            arr = arr[0]
        if arr.ndim != 1 or arr.size == 0:
            raise ValueError(
                f"x must be one sequence of token ids, shape (T,) or (1, T), got {arr.shape}"
            )
        if arr.dtype.kind not in "iu":
            raise TypeError(f"x must hold integer token ids, got dtype {arr.dtype}")
        if arr.min() < 0 or arr.max() >= model.input_size:
            raise ValueError(
                f"x's token ids must be from 0 to {model.input_size - 1} (the model's input "
                f"size), got {arr.min()} to {arr.max()}"
            )
        return arr[None, :].astype(np.int64)
    if arr.ndim == 3 and arr.shape[0] == 1:
        arr = arr[0]
    F = model.input_size
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] != F:
        raise ValueError(
            f"x must be one sequence of shape (T, {F}) or (1, T, {F}), got {arr.shape}"
        )
    if arr.dtype.kind not in "fiu" or not np.isfinite(arr).all():
        raise ValueError("x must hold finite real numbers")
    return arr[None].astype(model.dtype)


def _source(model: EncoderDecoder, src: Any, task: Any) -> tuple[list[str], np.ndarray]:
    """The tokens of ``src`` (text with ``task``, or ids) and its ids (1, S)."""
    if isinstance(src, str):
        if task is None or not hasattr(task, "src_vocab"):
            raise ValueError("a text source needs task= (the pair task the model learned)")
        if not src.strip() or len(src) > MAX_SOURCE:
            raise ValueError(f"src must have 1 to {MAX_SOURCE} characters, got {len(src)}")
        tokens = task.src_vocab.split(src.strip())
        ids = np.array([task.src_vocab.encode(tokens, "src")])  # unknown tokens: ValueError
    else:
        arr = np.asarray(src)
        if arr.ndim == 2 and arr.shape[0] == 1:
            arr = arr[0]
        if arr.ndim != 1 or arr.size == 0 or arr.dtype.kind not in "iu":
            raise ValueError(f"src must be text or one row of token ids (S,), got {arr.shape}")
        if arr.min() < 3 or arr.max() >= model.src_vocab_size:
            raise ValueError(
                f"src's ids must be from 3 to {model.src_vocab_size - 1} (0-2 are PAD, BOS, "
                f"EOS), got {arr.min()} to {arr.max()}"
            )
        ids = arr[None, :].astype(np.int64)
        tokens = [str(i) for i in arr]
    if task is not None and len(task.src_vocab) != model.src_vocab_size:
        raise ValueError("the task's source vocabulary does not fit the model")
    return tokens, ids


def _check_seq2seq(model: Any) -> EncoderDecoder:
    if not isinstance(model, EncoderDecoder):
        raise TypeError(f"model must be a pyplay EncoderDecoder, got {type(model).__name__}")
    return model


def _target_vocab(model: EncoderDecoder, task: Any) -> Vocab:
    if task is not None:
        return task.tgt_vocab
    return Vocab(tuple(str(i) for i in range(3, model.tgt_vocab_size)), sep=" ")


# ------------------------------------------------------------------ the views
def gates(model: SequenceModel, x: Any) -> pn.Column:
    """Every gate and state of ``model`` while it reads ``x``, one heatmap per quantity.

    Parameters
    ----------
    model : SequenceModel
    x : array_like
        One sequence: token ids (T,) for a token model, features (T, F) for a real-valued one
        (a leading batch axis of 1 is allowed).

    Returns
    -------
    panel.Column
        A heading and, per layer (and direction), a grid of heatmaps (time x unit).
    """
    if not isinstance(model, SequenceModel):
        raise TypeError(f"model must be a pyplay SequenceModel, got {type(model).__name__}")
    batch = _sequence(model, x)
    _, _, cache = model.forward(batch, None, None, record=True, training=False)
    record = cache.record or {}
    T = batch.shape[1]
    parts: list[Any] = [
        pn.pane.Markdown(
            f"## Inside the {model.cell.upper()}: {T} steps, {model.hidden_size} units "
            "(x: time step, y: unit)"
        )
    ]
    for layer, quantities in record.items():
        grid = pn.GridBox(ncols=3)
        for name, values in quantities.items():
            fig, source = heatmap_figure(name, f"{layer}: {TITLES.get(name, name)}")
            update_heatmap(fig, source, values[0], name)  # (T, H)
            grid.append(pn.pane.Bokeh(fig))
        parts += [pn.pane.Markdown(f"### Layer {layer}"), grid]
    return pn.Column(*parts)


def _greedy(model: EncoderDecoder, ids: np.ndarray) -> tuple[list[int], np.ndarray]:
    state = model.start(ids, np.array([ids.shape[1]]))
    out: list[int] = []
    rows: list[np.ndarray] = []
    token = np.array([BOS])
    for _ in range(3 * ids.shape[1] + 10):
        logp, state = model.step(token, state, rows)
        token = logp.argmax(axis=1)
        if int(token[0]) == EOS:
            break
        out.append(int(token[0]))
    return out, np.concatenate(rows, axis=0)  # (U, S)


def attention(
    model: EncoderDecoder, src: Any, *, task: Any = None, reverse_source: bool = False
) -> pn.Column:
    """Greedy decoding of ``src`` and the attention weights of every output step.

    Parameters
    ----------
    model : EncoderDecoder
        With attention (wiring "attention" or "bahdanau").
    src : str or array_like
        The source as text (needs ``task``) or token ids (S,).
    task : pair task, optional
        The task the model learned (``src_vocab``, ``tgt_vocab``): labels the tokens.
    reverse_source : bool
        The model was trained reading sources backwards.

    Returns
    -------
    panel.Column
        The output text and the heatmap (output steps down, source positions across).
    """
    model = _check_seq2seq(model)
    if model.wiring not in ("attention", "bahdanau"):
        raise ValueError(
            f"this model has no attention (wiring {model.wiring!r}): build it with "
            "wiring='attention' or 'bahdanau'"
        )
    tokens, ids = _source(model, src, task)
    if reverse_source:
        ids = reverse_sources(ids, np.array([ids.shape[1]]))
    out, weights = _greedy(model, ids)
    if reverse_source:
        weights = weights[:, ::-1]  # columns in the order the source was given
    vocab = _target_vocab(model, task)
    words = [vocab.decode([i]) for i in out]
    fig, source = attention_figure()
    update_attention(fig, source, weights, tokens, words)
    heading = f"## Attention\n\nsource: `{' '.join(tokens)}`  \noutput: `{' '.join(words)}`"
    return pn.Column(pn.pane.Markdown(heading), pn.pane.Bokeh(fig))


def beam(
    model: EncoderDecoder,
    src: Any,
    beam_size: int = 3,
    *,
    task: Any = None,
    length_penalty: float = 0.0,
    max_length: int = 30,
    reverse_source: bool = False,
) -> pn.Column:
    """Beam search over ``src``, run to the end: its tree and ranked hypotheses, with Step /
    Back / Run buttons to walk through it (in a live notebook).

    Parameters
    ----------
    model : EncoderDecoder
    src : str or array_like
        As in :func:`attention`.
    beam_size : int
        Hypotheses kept at every step (1 to 16).
    task, reverse_source : as in :func:`attention`
    length_penalty : float
        alpha of the length penalty ((5 + length) / 6) ** alpha, 0 to 5.
    max_length : int
        Output steps at most (1 to 200).

    Returns
    -------
    panel.Column
        Buttons, the ranked list (text) and the search tree figure.
    """
    model = _check_seq2seq(model)
    if isinstance(beam_size, bool) or not isinstance(beam_size, int | np.integer):
        raise TypeError(f"beam_size must be an integer, got {beam_size!r}")
    if not 1 <= beam_size <= 16:
        raise ValueError(f"beam_size must be from 1 to 16, got {beam_size}")
    if not isinstance(max_length, int | np.integer) or not 1 <= max_length <= 200:
        raise ValueError(f"max_length must be an integer from 1 to 200, got {max_length!r}")
    alpha = float(length_penalty)
    if not 0.0 <= alpha <= 5.0:
        raise ValueError(f"length_penalty must be from 0 to 5, got {length_penalty!r}")
    _, ids = _source(model, src, task)
    if reverse_source:
        ids = reverse_sources(ids, np.array([ids.shape[1]]))
    stepper = BeamStepper(
        model, _target_vocab(model, task), ids, int(beam_size), alpha, int(max_length)
    )
    stepper.run()
    fig, nodes, edges = beam_tree_figure()
    listing = Text("")

    def show() -> None:
        tree = stepper.tree()
        nodes.data, edges.data = tree.nodes, tree.edges
        listing.object = stepper.listing()

    def clicked(action: Any) -> Any:
        def callback(_event: Any) -> None:
            action()
            show()

        return callback

    buttons = []
    for label, action in (("Back", stepper.back), ("Step", stepper.step), ("Run", stepper.run)):
        button = pn.widgets.Button(name=label, width=80)
        button.on_click(clicked(action))
        buttons.append(button)
    show()
    return pn.Column(
        pn.pane.Markdown(f"## Beam search (beam size {beam_size})"),
        pn.Row(*buttons),
        listing,
        pn.pane.Bokeh(fig, sizing_mode="stretch_width"),
        sizing_mode="stretch_width",
    )
