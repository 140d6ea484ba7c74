"""Lecture 8's three documents through word-to-index, padding, an embedding, packing and an LSTM
with hidden size 5: its values and shapes, and the packed run equal to the masked one."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("panel")

from pyplay.ui.lessons.rnn.lecture8_docs import (
    DOCS,
    EMBEDDING_DIM,
    HIDDEN_SIZE,
    Lecture8Docs,
    run,
    walk_through,
    walk_through_text,
)

NLP = Path("/work/shared/lectures/001_3888c37c852b7d35.txt")


@pytest.mark.skipif(not NLP.exists(), reason="the lecture's text is not on this machine")
def test_documents_and_sizes_are_the_lectures() -> None:
    text = NLP.read_text()
    assert "docs = ['first second third'" in text and "'first second'" in text
    assert "'first'" in text and len(DOCS) == 3
    assert f"embedding dim={EMBEDDING_DIM}" in text and f"hidden size={HIDDEN_SIZE}" in text


def test_values_and_shapes() -> None:
    v = run()
    assert v["word_list"] == ["<pad>", "first", "second", "third"]
    assert v["word2idx"] == {"<pad>": 0, "first": 1, "second": 2, "third": 3}
    assert v["x_padded"].tolist() == [[1, 2, 3], [1, 2, 0], [1, 0, 0]]
    assert v["seq_len"].tolist() == [3, 2, 1]
    assert v["emb"].shape == (3, 3, EMBEDDING_DIM)
    assert v["packed_input"].data.shape == (6, EMBEDDING_DIM)
    assert v["packed_input"].batch_sizes.tolist() == [3, 2, 1]
    assert v["packed_output"].data.shape == (6, HIDDEN_SIZE)
    assert v["output"].shape == (3, 3, HIDDEN_SIZE) and v["input_sizes"].tolist() == [3, 2, 1]
    assert v["ht"].shape == v["ct"].shape == (1, 3, HIDDEN_SIZE)
    assert not np.allclose(v["embed"].params["weight"][0], 0)  # nn.Embedding: no padding_idx


def test_packed_run_is_the_masked_run() -> None:
    v = run(seed=4)
    _, (h, c), _ = v["lstm"].forward(v["emb"], lengths=v["seq_len"], training=False)
    np.testing.assert_allclose(v["ht"], h, atol=1e-12)
    np.testing.assert_allclose(v["ct"], c, atol=1e-12)
    for i, n in enumerate(v["seq_len"]):  # ht[-1] is each document's output at its last word
        np.testing.assert_allclose(v["ht"][-1, i], v["output"][i, n - 1], atol=1e-12)
        assert np.all(v["output"][i, n:] == 0)


def test_text_and_view() -> None:
    steps = walk_through()
    assert [s.shape for s in steps][3:] == [
        (3, 3), (3,), (3, 3, 10), (6, 10), (6, 5), (3, 3, 5), (1, 3, 5), (3, 5),
    ]  # fmt: skip
    text = walk_through_text()
    assert "shape (6, 10)" in text and "shape (6, 5)" in text
    view = Lecture8Docs()
    before = view.text.object
    view.button.clicks += 1
    assert view.text.object != before and "shape (3, 5)" in view.text.object
    heading = view.items()[0]
    assert heading.endswith("(lecture 8)")
