"""Issue 19, embeddings: the bundled table the project makes from its generated corpus (PPMI and
SVD) puts king - man + woman nearest to queen, and the page's view computes what it shows with
:class:`pyplay.embeddings.EmbeddingTable`, on the bundled table and on a trained seq2seq
model's tables, with unknown words reported beside their box."""

from __future__ import annotations

import numpy as np
import pytest

from pyplay.embeddings import EmbeddingTable
from pyplay.models.seq2seq import EncoderDecoder
from pyplay.tasks.seq2seq import PAIR_TASKS
from pyplay.ui.embeddings_view import BUNDLED, EmbeddingsView, pair_tables
from pyplay.word_vectors import (
    PEOPLE,
    bundled_table,
    cooccurrence,
    ppmi,
    royal_corpus,
    svd_vectors,
)


@pytest.mark.parametrize(
    "a, b, c, expected, margin",
    [  # the margin over the runner-up: wide across sex, narrow where rank must also hold
        ("king", "man", "woman", "queen", 0.3),
        ("queen", "woman", "man", "king", 0.2),
        ("prince", "boy", "girl", "princess", 0.2),
        ("woman", "man", "king", "queen", 0.3),
        ("boy", "man", "woman", "girl", 0.001),  # princess is next: rank has fewer contexts
    ],
)
def test_the_bundled_tables_analogies_land_on_the_word(a, b, c, expected, margin):
    (best, s1), (_, s2) = bundled_table().analogy(a, b, c, k=2)
    assert best == expected and s1 - s2 > margin


def test_ppmi_is_the_formula_on_a_small_count_matrix():
    C = np.array([[0.0, 2.0, 1.0], [2.0, 0.0, 0.0], [1.0, 0.0, 4.0]])
    N, row, col = C.sum(), C.sum(1), C.sum(0)
    P = ppmi(C)
    for w in range(3):
        for c in range(3):
            want = max(0.0, np.log(C[w, c] * N / (row[w] * col[c]))) if C[w, c] else 0.0
            assert P[w, c] == pytest.approx(want, abs=1e-15)
    with pytest.raises(ValueError, match="C must hold counts"):
        ppmi(-C)


def test_cooccurrence_counts_words_within_the_window():
    vocab, C = cooccurrence([["a", "b", "c", "d"]], window=1)
    assert vocab == ["a", "b", "c", "d"]
    assert C.tolist() == [[0, 1, 0, 0], [1, 0, 1, 0], [0, 1, 0, 1], [0, 0, 1, 0]]
    with pytest.raises(ValueError, match="window must be"):
        cooccurrence([["a"]], window=0)


def test_svd_vectors_factor_the_matrix_and_fix_the_signs():
    P = ppmi(cooccurrence(royal_corpus(300, rng=1))[1])
    E = svd_vectors(P, dim=P.shape[0])  # all of it: E E^T = U S U^T
    U, S, _ = np.linalg.svd(P)
    assert np.allclose(E @ E.T, U @ np.diag(S) @ U.T, atol=1e-10)
    assert (E[np.argmax(np.abs(E), axis=0), np.arange(E.shape[1])] > 0).all()
    with pytest.raises(ValueError, match="dim must be at most"):
        svd_vectors(P, dim=P.shape[0] + 1)


def test_the_corpus_follows_its_seed_and_names_each_person():
    assert royal_corpus(50, rng=3) == royal_corpus(50, rng=np.random.default_rng(3))
    assert royal_corpus(50, rng=3) != royal_corpus(50, rng=4)
    assert set(PEOPLE) <= set(bundled_table().words)


def test_the_view_shows_what_the_table_computes():
    view = EmbeddingsView()
    table = bundled_table()
    assert view.table.value == BUNDLED
    assert view.heading.object.startswith(f"{BUNDLED}: {len(table.words)} words × 10 dimensions")
    assert view.heading.object.endswith("(the map: 8 of them)")
    best = table.analogy("king", "man", "woman", k=3)
    assert view.analogy_out.object.startswith(
        f"king − man + woman ≈ queen (cosine {best[0][1]:.3f})"
    )
    near = table.nearest("king", k=5)
    assert view.nearest_out.object == "Nearest to king: " + ", ".join(
        f"{w} {s:.3f}" for w, s in near
    )
    people = EmbeddingTable(table.weight, table.words, [table.index(w) for w in PEOPLE])
    assert np.allclose(view.source.data["x"], people.pca().xy[:, 0])
    assert list(view.source.data["word"]) == list(PEOPLE)  # the map: the person words
    view.word.value = "<b>dragon</b>"
    assert view.nearest_out.object == "Nearest to: word '<b>dragon</b>' is not in the table."
    view.b.value = "wizard"
    assert view.analogy_out.object == "Analogy: b 'wizard' is not in the table."


def test_a_trained_seq2seq_model_offers_its_tables():
    task = PAIR_TASKS["translation"](rng=0)
    model = EncoderDecoder(
        len(task.src_vocab), len(task.tgt_vocab), embedding_dim=8, hidden_size=8, rng=0
    )
    tables = pair_tables(model, task)
    assert len(tables) == 2
    source = next(t for name, t in tables.items() if "source" in name)
    assert source.rows == list(range(3, len(task.src_vocab)))
    assert [source.words[r] for r in source.rows] == list(task.src_vocab.symbols)
    view = EmbeddingsView(lambda: tables)
    name = next(iter(tables))
    view.table.value = name
    word = source.words[3] if "source" in name else tables[name].words[3]
    view.word.value = word
    assert view.nearest_out.object.startswith(f"Nearest to {word}: ")
    assert view.heading.object.startswith(f"{name}: ")


@pytest.mark.slow
def test_the_seq2seq_lesson_shows_its_models_tables_beside_the_bundled_one():
    from pyplay.ui.lessons.seq2seq.view import Seq2SeqLesson

    lesson = Seq2SeqLesson()
    lesson.state.train(steps=2)
    lesson.refresh()
    options = lesson.embeddings.table.options
    assert options[0] == BUNDLED and len(options) == 3
    assert any("source embedding" in o for o in options[1:])
    lesson.embeddings.table.value = options[1]
    before = list(lesson.embeddings.source.data["x"])
    lesson.state.train(steps=20)
    lesson.refresh()  # the live refresh: the trained table moved
    assert list(lesson.embeddings.source.data["x"]) != before
    assert lesson.embeddings.table.value == options[1]


@pytest.mark.slow
def test_the_transformer_lesson_offers_its_character_and_pair_tables():
    """Issue 19, "fed by any trained model with an embedding table": the Transformers lesson's
    character model (one row per character, newline and space as ⏎ and ␣) and its
    encoder-decoder (source and target); a task of bare token ids offers the bundled one only."""
    from pyplay.ui.lessons.transformer.state import TransformerLessonState
    from pyplay.ui.lessons.transformer.view import TransformerLesson

    state = TransformerLessonState(task="charlm", d_model=16, num_layers=1, seq_len=16)
    lesson = TransformerLesson(state)
    lesson.panel()
    options = lesson.embeddings.table.options
    vocab = state.task_obj.vocab
    assert options == [
        BUNDLED,
        f"This lesson's model: character embedding ({len(vocab)})",
    ]
    lesson.embeddings.table.value = options[1]
    table = lesson.embeddings.current()
    assert "␣" in table.words and "⏎" in table.words and "e" in table.words
    np.testing.assert_array_equal(table.weight, state.model.params["embedding.weight"])
    lesson.embeddings.word.value = "e"
    assert lesson.embeddings.nearest_out.object.startswith("Nearest to e: ")
    before = list(lesson.embeddings.source.data["x"])
    state.train(steps=5)
    lesson.refresh()  # the live refresh: the trained table moved, the choice stays
    assert list(lesson.embeddings.source.data["x"]) != before
    assert lesson.embeddings.table.value == options[1]
    state.arch = "encoder_decoder"
    lesson.refresh()
    shown = lesson.embeddings.table.options
    assert len(shown) == 3 and "source embedding" in shown[1] and "target embedding" in shown[2]
    assert lesson.embeddings.table.value == BUNDLED  # the character table went with its model
    state.arch, state.task = "decoder", "parity"
    lesson.refresh()
    assert lesson.embeddings.table.options == [BUNDLED]


@pytest.mark.slow
def test_the_recurrent_lesson_builds_its_embeddings_view_for_the_character_model():
    """Issue 19 in the landing lesson: the default task (adding, real inputs, no table) lays
    out a line and no map (issue 22's start-up path); the character model's table is offered
    once that task is chosen, one row per character, and moves as the model trains."""
    import panel as pn

    from pyplay.ui.lessons.rnn.state import LessonState
    from pyplay.ui.lessons.rnn.view import RecurrentLesson

    def maps(layout: object) -> list[object]:
        panes = layout.select(pn.pane.Bokeh)  # type: ignore[attr-defined]
        return [p for p in panes if p.object.xaxis[0].axis_label == "principal axis 1"]

    state = LessonState(hidden_size=16, seq_len=16)
    lesson = RecurrentLesson(state)
    layout = lesson.panel()
    assert lesson.embeddings.view is None and maps(layout) == []
    assert "Character model" in lesson.embeddings.panel.objects[1].object
    state.train(steps=2)
    lesson.refresh()  # a live redraw of the adding model builds nothing
    assert lesson.embeddings.view is None and maps(layout) == []
    state.task = "charlm"  # rebuilds the model, and the view with it
    view = lesson.embeddings.view
    assert view is not None and len(maps(layout)) == 1
    vocab = state.task_obj.vocab
    name = f"This lesson's model: character embedding ({len(vocab)})"
    assert view.table.options == [BUNDLED, name]
    view.table.value = name
    table = view.current()
    assert table.words == [{"\n": "⏎", " ": "␣"}.get(c, c) for c in vocab]
    np.testing.assert_array_equal(table.weight, state.model.params["embedding.weight"])
    before = list(view.source.data["x"])
    state.train(steps=5)
    lesson.refresh()  # the live redraw: the trained table moved, the choice stays
    assert list(view.source.data["x"]) != before and view.table.value == name
    state.task = "adding"
    assert lesson.embeddings.view is view and view.table.options == [BUNDLED]
