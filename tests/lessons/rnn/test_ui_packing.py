"""Issue 19, "a padding/packing view: a ragged batch, its mask, the wasted operations and the
identical result with packing", in the recurrent lesson (without a browser): the cells show
each valid step's row in PyTorch's packed layout, the counts are the batch's, the comparison
runs on the lesson's current model, and a bad entry is reported beside the box while the last
batch stays drawn."""

from __future__ import annotations

import re

import numpy as np
import pytest

from pyplay.nn.packing import compare_padding
from pyplay.ui.lessons.rnn.packing_view import (
    MAX_LENGTH,
    MAX_SEQUENCES,
    lecture_count,
    parse_lengths,
)
from pyplay.ui.lessons.rnn.view import RecurrentLesson


def cells(view) -> dict[tuple[int, int], str]:
    """(sequence, step) -> the label drawn in that cell ('' on padding)."""
    d = view.source.data
    B = int(max(d["y"])) + 1
    return {
        (B - 1 - int(y), int(t)): str(s) for t, y, s in zip(d["t"], d["y"], d["label"], strict=True)
    }


@pytest.mark.slow
def test_the_grid_shows_the_mask_and_the_packed_rows():
    view = RecurrentLesson().packing
    view.lengths.value = "3, 5, 1"
    grid = cells(view)
    assert len(grid) == 3 * 5
    # sorted longest first: seq 2 (T=5), seq 1 (T=3), seq 3 (T=1); b_t = [3, 2, 2, 1, 1]
    assert [grid[(1, t)] for t in range(5)] == ["0", "3", "5", "7", "8"]
    assert [grid[(0, t)] for t in range(5)] == ["1", "4", "6", "", ""]
    assert [grid[(2, t)] for t in range(5)] == ["2", "", "", "", ""]
    colours = dict(zip(zip(view.source.data["y"], view.source.data["t"], strict=True),
                       view.source.data["colour"], strict=True))  # fmt: skip
    assert colours[(2, 3)] != colours[(1, 3)]  # seq 1's padding against seq 2's valid step
    assert view.heading.object == (
        "Padded batch: B·T = 3·5 = 15 steps, 9 real; packed batch sizes b_t = [3, 2, 2, 1, 1]"
    )


@pytest.mark.slow
def test_the_comparison_runs_on_the_current_model():
    lesson = RecurrentLesson()
    view = lesson.packing
    view.lengths.value = "6, 4, 4, 2, 1"
    rnn = lesson.state.model.rnn
    found = compare_padding(rnn, [6, 4, 4, 2, 1], rng=0)
    text = view.summary.object
    assert f"{type(rnn).__name__} ({rnn.num_layers} layer(s), H={rnn.hidden_size})" in text
    assert "padded 30, packed 17 (43% of the padded work is padding)" in text
    assert f"max |difference| {found.packed_gap:.1e}" in text
    assert f"without the mask: {found.unmasked_gap:.3f}" in text
    assert found.packed_gap < 1e-6 < 1e-3 < found.unmasked_gap
    before = text
    lesson.state.train(steps=20)  # the trained weights: the live refresh reruns it
    lesson.refresh_inside()
    assert view.summary.object != before
    lesson.state.cell = "gru"
    lesson.state.reset()
    lesson.refresh_inside()
    assert "current model's GRU" in view.summary.object


@pytest.mark.slow
@pytest.mark.parametrize(
    "typed, message",
    [
        ("3, x", "Lengths must be whole numbers separated by commas, got '3, x'"),
        ("", f"Lengths must name 1 to {MAX_SEQUENCES} sequences, got 0"),
        ("2, 0", f"Lengths must each lie between 1 and {MAX_LENGTH}, got 0 to 2"),
        (f"{MAX_LENGTH + 1}", f"between 1 and {MAX_LENGTH}, got {MAX_LENGTH + 1} to"),
    ],
)
def test_a_bad_entry_is_reported_beside_the_box_and_the_batch_stays(typed, message):
    view = RecurrentLesson().packing
    view.lengths.value = "2, 1"
    drawn = dict(view.source.data)
    view.lengths.value = typed
    assert view.note.visible and message in view.note.object
    assert all(np.array_equal(view.source.data[k], v) for k, v in drawn.items())
    view.lengths.value = "4 3"  # spaces separate too; the note goes
    assert not view.note.visible and re.search(r"B·T = 2·4 = 8 steps, 7 real", view.heading.object)


def test_parse_lengths_accepts_commas_spaces_and_semicolons():
    assert parse_lengths("6, 4;2 1") == [6, 4, 2, 1]


@pytest.mark.slow
def test_slide_problem_with_padding_first_second_third():
    """The NLP lecture's "Textual Data Length" and "Problem With Padding" slides: three
    sentences of 3, 2 and 1 words ("first second third", "first second", "first") padded to
    (3, 3): 3 x 3 = 9 cells computed, of which 6 are words; packed, the batch holds 3, 2 and 1
    sequences at its three steps, and the final states equal the masked padded run's."""
    view = RecurrentLesson().packing
    view.lengths.value = "3, 2, 1"
    grid = cells(view)
    assert sorted(k for k, v in grid.items() if v == "") == [(1, 2), (2, 1), (2, 2)]  # <pad>
    assert view.heading.object == (
        "Padded batch: B·T = 3·3 = 9 steps, 6 real; packed batch sizes b_t = [3, 2, 1]"
    )
    assert "padded 9, packed 6 (33% of the padded work is padding)" in view.summary.object
    found = compare_padding(view.state.model.rnn, [3, 2, 1], 0)
    assert (found.padded_steps, found.packed_steps) == (9, 6)
    assert found.packed.batch_sizes.tolist() == [3, 2, 1]
    assert found.packed_gap < 1e-6 < found.unmasked_gap


def test_slide_problem_with_padding_counts_operations_and_the_page_says_so():
    """The "Problem With Padding" slide of the NLP lecture: the padded (3, 3) batch times a
    weight matrix is 3 x 3 = 9 multiplications and 3 x 2 = 6 additions (nrows x (n - 1) cols).
    The page counts cell evaluations (9 padded, 6 real): beside its number it gives the
    lecture's count for the typed lengths and says the two 6s are different quantities."""
    text = lecture_count([3, 2, 1])
    assert "B·T = 9 multiplications and B·(T − 1) = 6 additions" in text
    assert text.startswith('Lecture 8 of an NLP course ("Problem With Padding")')
    assert "equal here by coincidence" in text
    other = lecture_count([6, 4, 4, 2, 1])
    assert "30 multiplications" in other and "25 additions" in other and "ΣT_i = 17" in other
    assert "coincidence" not in other
    view = RecurrentLesson().packing
    view.lengths.value = "3, 2, 1"
    assert view.lecture_count.object == text
    column = list(view.panel.objects)
    assert column.index(view.lecture_count) == column.index(view.heading) + 1  # beside it
