"""The attention scores' formulas on the seq2seq lesson page (Schmidt's Table 1, section 8.2):
each shown formula computed as written equals what the lesson trains; the scaled dot
product's divisor as a setting (address, lesson files, the model built)."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import pytest

from addresses import apply_query
from pyplay.io import load, save
from pyplay.models.seq2seq.luong import make_scorer
from pyplay.ui.lessons.seq2seq.scores import FORMULAS, formula_for, formula_markdown
from pyplay.ui.lessons.seq2seq.state import Seq2SeqState
from pyplay.ui.urlstate import to_query

SCORES = Seq2SeqState.param.score.objects
SCALES = Seq2SeqState.param.scale_by.objects
CASES = [(s, "key_size") for s in SCORES] + [("scaled_dot", "source_length")]
LENGTHS = np.array([5, 2, 4])  # source lengths of a padded batch


def _softmax(e: np.ndarray, keep: np.ndarray) -> np.ndarray:
    e = np.where(keep, e, -np.inf)
    z = np.exp(e - e.max(axis=2, keepdims=True))
    return z / z.sum(axis=2, keepdims=True)


@pytest.mark.parametrize(("score", "scale_by"), CASES, ids=[f"{s}-{b}" for s, b in CASES])
def test_schmidt_table1_each_shown_formula_is_what_the_lesson_trains(score: str, scale_by: str):
    """Schmidt, section 8.2, Table 1: score(S_t, H_t') computed literally from the row the
    page shows (its ``reference``), softmax over the real source positions, against the
    scorer the lesson's model is built with (make_scorer, the model's own factory)."""
    rng = np.random.default_rng(3)
    S, H = rng.standard_normal((3, 2, 4)), rng.standard_normal((3, 5, 4))  # (B, Tq, D) (B, Tk, D)
    scorer = make_scorer(score, 4, 4, attn_size=3, max_len=8, dtype=np.float64, rng=1,
                         scale_by=scale_by)  # fmt: skip
    _, w, _ = scorer.forward(S, H, H, lengths=LENGTHS)
    keep = np.arange(5)[None, None, :] < LENGTHS[:, None, None]  # (B, 1, Tk)
    n = np.broadcast_to(keep.sum(axis=2, keepdims=True), (3, 2, 1))  # n_source per query
    row = formula_for(score, scale_by)
    e = row.reference(S, H, scorer.params, n)  # (B, Tq, Tk)
    np.testing.assert_allclose(w, _softmax(e, keep), rtol=1e-12, atol=1e-15)
    assert f"`score(Sₜ, Hₜ′) = {row.text}`" in formula_markdown(score, scale_by)


def test_schmidt_table1_has_every_score_of_the_lesson_and_its_six_rows():
    assert {formula_for(s).name for s in SCORES} == {
        "Content-base", "Additive", "Location-Base", "General", "Dot-Product",
        "Scaled Dot-Product",
    }  # fmt: skip
    assert set(SCORES) <= set(FORMULAS)
    assert formula_for("scaled_dot", "source_length").text.endswith("/ √n_source")
    assert formula_for("scaled_dot", "key_size").text.endswith("/ √d")
    with pytest.raises(ValueError, match=r"score must be one of .*got 'luong'"):
        formula_for("luong")


def test_schmidt_table1_scaled_dot_states_the_lectures_conflict():
    """Table 1 (Schmidt) divides by √n_source; Wand's lecture by √d_key: the page says so."""
    for scale_by in SCALES:
        text = formula_markdown("scaled_dot", scale_by)
        assert "The lectures disagree" in text
        assert "Schmidt's overview (Table 1) divides by √n_source" in text
        assert "Wand's lecture divides by √d_key" in text
    assert "disagree" not in formula_markdown("dot")


def test_schmidt_table1_schmidts_quoted_words_are_in_the_lecture():
    from pathlib import Path

    lectures = Path("/work/shared/lectures")
    if not lectures.is_dir():
        pytest.skip("the lectures' texts are not here")
    schmidt = next(lectures.glob("003_*.txt")).read_text()
    wand = next(lectures.glob("002_*.txt")).read_text()
    assert "scales the dot-product by the number of characters of the current word" in schmidt
    assert r"\sqrt{n_{source}}" in schmidt and r"\sqrt{d_{\text{key}}}" in wand


def test_scale_by_reaches_the_model_only_with_the_scaled_dot_product():
    state = Seq2SeqState(hidden_size=8, score="scaled_dot", scale_by="source_length")
    assert state.model is not None and state.model.scale_by == "source_length"
    assert "scaled_dot by √n_source" in state.message
    state.score = "general"  # the setting stays, the model takes the default
    assert state.scale_by == "source_length" and state.model.scale_by == "key_size"
    state.param.update(score="scaled_dot", wiring="init")
    assert state.model.scale_by == "key_size" and state.message_kind != "danger"


def test_scale_by_goes_through_the_address():
    a = Seq2SeqState(hidden_size=8, score="scaled_dot", scale_by="source_length")
    query = to_query("seq2seq", a)
    assert "scale_by=source_length" in query
    b = Seq2SeqState(hidden_size=8)
    assert apply_query(query, {"seq2seq": b}) == ("seq2seq", [])
    assert b.scale_by == "source_length" and b.model.scale_by == "source_length"
    _, messages = apply_query("lesson=seq2seq&scale_by=n", {"seq2seq": b})
    assert messages and "scale_by must be one of" in messages[0] and "got 'n'" in messages[0]


def test_scale_by_is_saved_in_lesson_files_and_old_files_load_with_the_default():
    a = Seq2SeqState(hidden_size=8, score="scaled_dot", scale_by="source_length")
    a.train(steps=1)
    data = a.save_bytes().getvalue()
    b = Seq2SeqState(hidden_size=8, score="scaled_dot")
    assert b.load_bytes(data), b.message
    assert b.scale_by == "source_length" and b.model.scale_by == "source_length"
    old = _without_scale_by(Seq2SeqState(hidden_size=8, score="scaled_dot").save_bytes())
    c = Seq2SeqState(hidden_size=8, score="scaled_dot", scale_by="source_length")
    assert c.load_bytes(old), c.message
    assert c.scale_by == "key_size" and c.model.scale_by == "key_size"


def _without_scale_by(buf: io.BytesIO) -> bytes:
    """A lesson file as the page wrote it before ``scale_by`` existed."""
    ckpt = load(buf.getvalue())
    meta: dict[str, Any] = dict(ckpt.meta)
    meta["settings"] = {k: v for k, v in meta["settings"].items() if k != "scale_by"}
    if "model" in meta:
        meta["model"] = {**meta["model"]}
    for holder in (meta, meta.get("model", {})):
        if isinstance(holder.get("config"), dict):
            holder["config"] = {k: v for k, v in holder["config"].items() if k != "scale_by"}
    out = io.BytesIO()
    save(out, ckpt.params, meta=meta, optimizer_state=ckpt.optimizer_state)
    return out.getvalue()


@pytest.mark.slow
def test_the_page_shows_the_formula_beside_the_selector_and_follows_it():
    from pyplay.ui.lessons.seq2seq.view import Seq2SeqLesson

    lesson = Seq2SeqLesson()
    column = lesson.controls()[2]  # task, wiring, score: the score is one of the four in sight
    select, scale, formula = column.objects
    assert select.name == "Attention score" and formula is lesson.formula
    assert formula.object == formula_markdown("general") and not scale.visible
    lesson.state.score = "scaled_dot"
    assert scale.visible and formula.object == formula_markdown("scaled_dot", "key_size")
    scale.value = "source_length"
    assert lesson.state.scale_by == "source_length"
    assert formula.object == formula_markdown("scaled_dot", "source_length")
    lesson.state.score = "additive"
    assert not scale.visible and formula.object == formula_markdown("additive")
