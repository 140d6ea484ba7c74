"""The encoder's sentence embedding (Wand): the final state for a set of sources, their 2-D
PCA map and nearest neighbours by cosine, drawn without disturbing the task's generator."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("panel")

from pyplay.ui.lessons.seq2seq.sentence_map import (
    MAP_SENTENCES,
    sample_sources,
    sentence_map,
    sentence_vectors,
)
from pyplay.ui.lessons.seq2seq.state import Seq2SeqState, parse_source
from pyplay.ui.lessons.seq2seq.view import Seq2SeqLesson


def one_by_one(state: Seq2SeqState, source: str) -> np.ndarray:
    _, ids = parse_source(state.task_obj.src_vocab, source)  # (1, S)
    if state.reverse_source:
        ids = ids[:, ::-1]
    h = state.model.encode(ids, np.array([ids.shape[1]]))[0]
    h = h[0] if isinstance(h, tuple) else h  # (L, 1, H)
    return h[-1, 0]


@pytest.mark.parametrize("reverse", [False, True])
def test_vectors_are_the_encoders_final_state(reverse: bool) -> None:
    state = Seq2SeqState()
    state.reverse_source = reverse
    sources = ["abc", "abcdefg", "ba"]
    vectors = sentence_vectors(state.model, state.task_obj.src_vocab, sources, reverse)
    assert vectors.shape == (3, state.model.hidden_size)
    for row, s in zip(vectors, sources, strict=True):  # padding does not change the state
        np.testing.assert_allclose(row, one_by_one(state, s), atol=1e-5)


def test_sources_leave_the_task_generator_alone() -> None:
    state = Seq2SeqState()
    before = state.task_obj.rng.bit_generator.state
    sources = sample_sources(state.task_obj)
    assert len(sources) == len(set(sources)) == MAP_SENTENCES
    assert state.task_obj.rng.bit_generator.state == before
    assert sample_sources(state.task_obj) == sources  # the same set each time


def test_neighbours_are_ranked_by_cosine() -> None:
    state = Seq2SeqState()
    found = sentence_map(state.model, state.task_obj, "abcde")
    assert found.sources[-1] == "abcde" and found.pca.xy.shape == (MAP_SENTENCES + 1, 2)
    q = one_by_one(state, "abcde")
    for s, cos in found.neighbours:
        v = one_by_one(state, s)
        assert cos == pytest.approx(v @ q / np.linalg.norm(v) / np.linalg.norm(q), abs=1e-5)
    cosines = [c for _, c in found.neighbours]
    assert cosines == sorted(cosines, reverse=True) and len(cosines) == 5


def test_section_in_the_lesson() -> None:
    lesson = Seq2SeqLesson()
    section = lesson.sentences
    assert "## The encoder's sentence embedding" in lesson.sections()
    lesson.source_box.value_input = "abcde"
    section.button.clicks += 1
    data = section.source.data
    assert len(data["x"]) == MAP_SENTENCES + 1 and data["colour"].count("#e45756") == 1
    assert "Nearest to 'abcde'" in section.text.object
    lesson.source_box.value_input = "zz"
    section.show()
    assert section.text.object.startswith("Cannot map the box's source")
    lesson.state.hidden_size = lesson.state.hidden_size + 8  # a new model clears the map
    assert len(section.source.data["x"]) == 0
