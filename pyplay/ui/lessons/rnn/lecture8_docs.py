"""Lecture 8's worked example, step by step: its three documents through word-to-index, padding,
an embedding, packing and an LSTM with hidden size 5 (a part of the recurrent lesson's padding
and packing section).

The lecture's code (slides "Read the data and encode them" and "Pad Sequences and Creating a
Pack Sequence") in PyTorch::

    docs = ['first second third', 'first second', 'first']
    word_list = ['<pad>'] + list(word_set);  word2idx = {word: idx ...}
    vocab_size = len(word_list);  embedding_dim = 10
    x_padded = pad_sequence(x, batch_first=True, padding_value=0);  seq_len = ...
    embed = nn.Embedding(vocab_size, embedding_dim)
    lstm = nn.LSTM(embedding_dim, hidden_size=5, batch_first=True)
    packed_input = pack_padded_sequence(embed(x_padded), seq_len, batch_first=True,
                                        enforce_sorted=False)
    packed_output, (ht, ct) = lstm(packed_input)
    output, input_sizes = pad_packed_sequence(packed_output, batch_first=True)
    print(ht[-1])

:func:`walk_through` runs the same steps with pyplay's :class:`~pyplay.nn.Embedding`,
:class:`~pyplay.nn.LSTM` and :mod:`pyplay.nn.packing`, and records each line's value or shape.
One departure: ``list(word_set)`` has no fixed order in Python (a set of strings is ordered by
hash, which changes between runs); the page lists the words in the order they first appear,
which here is also alphabetical: first, second, third. The weights are random (seeded), as the
lecture's are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import panel as pn

from pyplay.nn import LSTM, Embedding
from pyplay.nn.packing import pack_padded_sequence, pad_packed_sequence, run_packed
from pyplay.ui.lectures import lecture, lecture_label
from pyplay.ui.text import Text

__all__ = [
    "DOCS",
    "EMBEDDING_DIM",
    "HIDDEN_SIZE",
    "Lecture8Docs",
    "Step",
    "run",
    "walk_through",
    "walk_through_text",
]

DOCS = ("first second third", "first second", "first")  # the lecture's three documents
EMBEDDING_DIM = 10  # the lecture's embedding_dim
HIDDEN_SIZE = 5  # the lecture's hidden_size
PAD = "<pad>"


@dataclass(frozen=True)
class Step:
    """One line of the lecture's code: the line, what it gives here (plain text), its shape."""

    code: str
    value: str
    shape: tuple[int, ...]


def _rows(a: np.ndarray) -> str:
    return np.array2string(np.asarray(a), precision=3, suppress_small=True, max_line_width=90)


def run(seed: int = 0) -> dict[str, Any]:
    """Every value of the lecture's pipeline on its three documents, by its name there."""
    word_list = [PAD, *dict.fromkeys(w for doc in DOCS for w in doc.split(" "))]
    word2idx = {w: i for i, w in enumerate(word_list)}
    vocab_size = len(word_list)
    x = [[word2idx[w] for w in doc.split(" ")] for doc in DOCS]
    seq_len = np.array([len(s) for s in x])  # (B,)
    x_padded = np.zeros((len(x), int(seq_len.max())), dtype=np.int64)  # (B, T), 0 = <pad>
    for i, s in enumerate(x):
        x_padded[i, : len(s)] = s
    embed = Embedding(vocab_size, EMBEDDING_DIM, dtype=np.float64, rng=seed)  # no padding_idx
    lstm = LSTM(EMBEDDING_DIM, HIDDEN_SIZE, dtype=np.float64, rng=seed + 1)
    emb, _ = embed.forward(x_padded)  # (B, T, E)
    packed_input = pack_padded_sequence(emb, seq_len)  # data (sum T_i, E)
    packed_output, (ht, ct), _ = run_packed(lstm, packed_input)  # data (sum T_i, H)
    output, input_sizes = pad_packed_sequence(packed_output)  # (B, T, H), (B,)
    return {k: v for k, v in locals().items() if k != "seed"}


def walk_through(seed: int = 0) -> list[Step]:
    """The lecture's pipeline on its three documents, one :class:`Step` per line."""
    v = run(seed)
    word_list, word2idx, vocab_size, x = v["word_list"], v["word2idx"], v["vocab_size"], v["x"]
    x_padded, seq_len, embed, emb = v["x_padded"], v["seq_len"], v["embed"], v["emb"]
    packed_input, packed_output = v["packed_input"], v["packed_output"]
    output, input_sizes, ht, ct = v["output"], v["input_sizes"], v["ht"], v["ct"]
    return [
        Step("word_list = ['<pad>'] + list(word_set)", str(word_list), (vocab_size,)),
        Step("word2idx = {word: idx ...}", str(word2idx), (vocab_size,)),
        Step("x = [LongTensor([word2idx[word] ...]) for seq in docs]", str(x), (len(x),)),
        Step("x_padded = pad_sequence(x, batch_first=True)", _rows(x_padded), x_padded.shape),
        Step("seq_len", str(seq_len.tolist()), seq_len.shape),
        Step(
            f"embed = nn.Embedding({vocab_size}, {EMBEDDING_DIM}); embed(x_padded)",
            f"row 0 of the table (<pad>) is random too (no padding_idx): "
            f"{_rows(embed.params['weight'][0])}",
            emb.shape,
        ),
        Step(
            "packed_input = pack_padded_sequence(...); packed_input.data.shape",
            f"batch_sizes {packed_input.batch_sizes.tolist()}",
            packed_input.data.shape,
        ),
        Step(
            f"lstm = nn.LSTM({EMBEDDING_DIM}, hidden_size={HIDDEN_SIZE}); packed_output.data.shape",
            "one row per real word, none for <pad>",
            packed_output.data.shape,
        ),
        Step(
            "output, input_sizes = pad_packed_sequence(...)",
            f"input_sizes {input_sizes.tolist()}; document 3 ('first'): its word, then zeros "
            f"on the padding:\n{_rows(output[2])}",
            output.shape,
        ),
        Step("ht, ct", f"ht {ht.shape}, ct {ct.shape}: (layers, B, H)", ht.shape),
        Step(
            "print(ht[-1])",
            f"each document's output at its last real word:\n{_rows(ht[-1])}",
            ht[-1].shape,
        ),
    ]


def walk_through_text(seed: int = 0) -> str:
    """The steps as plain text, one block per line of the lecture's code."""
    blocks = []
    for n, s in enumerate(walk_through(seed), start=1):
        shape = "(" + ", ".join(map(str, s.shape)) + ("," if len(s.shape) == 1 else "") + ")"
        value = "\n".join(f"    {line}" for line in s.value.splitlines())
        blocks.append(f"{n:>2}. {s.code}\n    shape {shape}\n{value}")
    return "\n".join(blocks)


HELP = (
    f"The worked example of {lecture('nlp')}: three documents, 'first second third', 'first "
    "second' and 'first', turned into word indices ('<pad>' is 0), padded to a (3, 3) batch, "
    f"embedded in {EMBEDDING_DIM} dimensions, packed (6 real words of 9 places) and read by an "
    f"LSTM with hidden size {HIDDEN_SIZE}. Each line of its code is followed by what pyplay's "
    "own embedding, LSTM and packing give and the shape. The weights are random, as in its "
    "code; **New weights** draws others (the shapes stay). The slide's "
    "`list(word_set)` has no fixed order; the page lists the words as they first appear."
)


class Lecture8Docs:
    """The walk-through's help, seed button and text."""

    def __init__(self) -> None:
        self.seed = 0
        self.text = Text(walk_through_text(self.seed), css_classes=["pyplay-lecture8-docs"])
        self.button = pn.widgets.Button(name="New weights", width=120)
        self.button.on_click(lambda *_: self.redraw())

    def redraw(self) -> None:
        self.seed += 2  # embedding and LSTM take seed and seed + 1
        self.text.object = walk_through_text(self.seed)

    def items(self) -> list[Any]:
        return [
            f"### Three documents through an embedding and an LSTM ({lecture_label('nlp')})",
            pn.pane.Markdown(HELP),
            self.button,
            self.text,
        ]
