"""The CTC lesson without a browser, and the CTC objective of the common Trainer."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("panel")

from pyplay.models import SequenceModel
from pyplay.tasks.ctc_frames import CTCFrames
from pyplay.train import Trainer
from pyplay.ui.lessons.ctc.state import CTCState
from pyplay.ui.lessons.ctc.view import CTCLesson


@pytest.mark.slow
def test_trainer_uses_the_ctc_loss() -> None:
    task = CTCFrames(rng=0)
    model = SequenceModel.for_task(task, "gru", hidden_size=16, bidirectional=True, rng=0)
    trainer = Trainer(model, task, lr=0.02, batch_size=16)
    records = list(trainer.run(60))
    assert records[-1].loss < 0.7 * records[0].loss
    assert {"exact_match", "label_error_rate"} <= set(records[-1].metrics)
    assert set(trainer.evaluate(batch_size=32)) == {"loss", "exact_match", "label_error_rate"}
    with pytest.raises(ValueError, match="tbptt=True is for character models, not for CTC"):
        Trainer(model, task, tbptt=True)


@pytest.mark.slow
def test_lesson_state_learns_to_read_the_frames() -> None:
    state = CTCState()
    before = state.view(0)
    assert before is not None and before.probs.shape[1] == 5 and before.classes[0] == "_"
    np.testing.assert_allclose(before.probs.sum(axis=1), 1.0, rtol=1e-6)
    state.train(steps=250)
    assert state.trainer.evaluate(batch_size=200)["exact_match"] > 0.7
    views = [state.view(k) for k in range(8)]
    assert sum(v.decoded == v.target for v in views) >= 6
    v = views[0]
    assert len(v.best_path) == len(v.frames) == v.probs.shape[0]
    collapsed = "".join(c for i, c in enumerate(v.best_path) if i == 0 or c != v.best_path[i - 1])
    assert collapsed.replace("_", "") == v.decoded  # the collapse of the best path


@pytest.mark.slow
def test_settings_rebuild_and_bad_values_are_messages() -> None:
    state = CTCState()
    state.train(steps=2)
    version = state.version
    state.noise = 0.5
    assert state.version == version + 1 and state.trainer.step_count == 0
    state.train(steps=2)
    state.lr = 0.0
    assert state.message_kind == "danger" and "lr must be > 0" in state.message
    assert state.trainer.step_count == 2
    state.noise = -1.0
    assert "Not rebuilt" in state.message and state.version == version + 1


@pytest.mark.slow
def test_lesson_renders_probabilities_and_paths() -> None:
    lesson = CTCLesson()
    lesson.state.train(steps=5)
    lesson.refresh()
    assert "best path" in lesson.paths.object and "collapse" in lesson.paths.object
    image = lesson.prob_source.data["image"][0]
    assert image.shape[0] == 5  # one row per class, blank first
    assert lesson.panel() is not None


def shown_after(steps: int) -> tuple[CTCLesson, Any]:
    """A lesson trained ``steps`` steps, laid out and redrawn, and the example on screen."""
    lesson = CTCLesson()
    lesson.state.train(steps=steps)
    lesson.panel()
    lesson.refresh()
    view = lesson.state.view(0)
    assert view is not None
    return lesson, view


@pytest.mark.slow
def test_the_lattice_and_the_paths_follow_the_example_on_screen() -> None:
    from pyplay.decode.ctc import ctc_loss
    from pyplay.ui.lessons.ctc.lattice import lattice_of, path_list

    lesson, view = shown_after(3)
    lat = lattice_of(view)
    target = [view.classes.index(c) for c in view.target]
    T = view.probs.shape[0]
    loss, _ = ctc_loss(
        np.log(view.probs)[None], np.array([target]), [T], [len(target)], reduction="none"
    )
    assert lat.log_p == pytest.approx(-loss[0], rel=1e-9)  # the lattice is the loss's
    np.testing.assert_allclose(lat.gamma.sum(axis=1), 1.0, rtol=1e-9)
    shown = lesson.lattice.sources["gamma"].data["image"][0]  # (L, T)
    np.testing.assert_allclose(shown, lat.gamma.T)
    assert lesson.lattice.figs["gamma"].yaxis[0].major_label_overrides[1] == view.target[0]
    # the paths of the first two symbols over five frames add up to the forward algorithm's p
    listed = lesson.lattice.paths.object
    assert f"collapse to {view.target[:2]}" in listed
    found = path_list(view, view.target[:2], 5)
    assert found.total == pytest.approx(found.forward, rel=1e-9) and found.paths
    assert all(p.replace("_", "") != "" for p, _ in found.paths)
    # a typed label and T change the list; a bad one is explained and the list stays
    lesson.lattice.label.value = "a"
    lesson.lattice.frames.value = 3
    assert "collapse to A:" in lesson.lattice.paths.object
    before = lesson.lattice.paths.object
    lesson.lattice.label.value = "AZ!"
    assert "label must be at most 4 of the symbols" in lesson.lattice.note.object
    assert lesson.lattice.paths.object == before
    # the state trains on: the next refresh redraws the lattice from the new model
    lesson.state.train(steps=5)
    lesson.refresh()
    assert not np.allclose(lesson.lattice.sources["gamma"].data["image"][0], shown)


@pytest.mark.slow
def test_the_lectures_h_eh_l_ou_paths_beside_the_typed_label() -> None:
    """The IDSIA lecture's "H EH L OU" slide: every path of six frames over (-, H, EH, L, OU)
    that collapses to the label, each the product of the page's stated frame probabilities,
    their sum the forward algorithm's p; the toggle shows them in place of the typed label's
    list, which is kept and comes back when a label is typed."""
    import itertools

    from pyplay.decode.ctc import ctc_loss
    from pyplay.decode.ctc_decode import ctc_collapse
    from pyplay.ui.lessons.ctc.lattice import HELLO_CLASSES, HELLO_PROBS, lecture_paths

    found = lecture_paths()
    label = [HELLO_CLASSES.index(p) for p in ("H", "EH", "L", "OU")]
    every = {
        p
        for p in itertools.product(range(len(HELLO_CLASSES)), repeat=6)
        if ctc_collapse(p) == label
    }
    listed = {tuple(HELLO_CLASSES.index(c) for c in p.split()) for p, _ in found.paths}
    assert len(found.paths) == len(listed) == 45 and listed == every
    for p, q in found.paths:  # each path's probability is the product of its frames' entries
        ids = [HELLO_CLASSES.index(c) for c in p.split()]
        assert q == pytest.approx(np.prod(HELLO_PROBS[np.arange(6), ids]), rel=1e-12)
    loss, _ = ctc_loss(np.log(HELLO_PROBS)[None], np.array([label]), [6], [4], reduction="none")
    assert found.forward == pytest.approx(np.exp(-loss[0]), rel=1e-12)
    assert found.total == pytest.approx(found.forward, rel=1e-12)
    np.testing.assert_allclose(HELLO_PROBS.sum(axis=1), 1.0, rtol=1e-12)

    lesson, _ = shown_after(2)
    views = lesson.lattice
    views.label.value = "ab"
    typed = views.paths.object
    assert "collapse to AB:" in typed and views.paths.visible
    views.lecture.value = True  # the button
    shown = views.lecture_paths.object
    assert views.lecture_paths.visible and not views.paths.visible
    assert "45 paths of 6 frames collapse to H EH L OU:" in shown and "illustrative" in shown
    assert all(f"  {p}" in shown for p, _ in found.paths)  # every path, none left out
    assert f"sum over the 45 paths : {found.total:.6e}" in shown
    assert f"forward algorithm p    : {found.forward:.6e}" in shown
    assert "its only path is H EH L - L OU" in shown  # the repeated L needs a blank
    assert views.paths.object == typed  # the typed label's list is kept
    lesson.state.train(steps=2)
    lesson.refresh()  # training goes on: the example stays, the hidden list follows the model
    assert views.lecture_paths.object == shown and views.lecture_paths.visible
    assert "collapse to AB:" in views.paths.object
    views.label.value = "ba"  # a typed label returns to its own list
    assert not views.lecture.value and not views.lecture_paths.visible and views.paths.visible
    assert "collapse to BA:" in views.paths.object
    views.lecture.value = True
    views.lecture.value = False  # clicked again: back to the label's list
    assert views.paths.visible and "collapse to BA:" in views.paths.object


@pytest.mark.slow
def test_the_decoding_panel_shows_three_decoders_of_the_example_on_screen() -> None:
    from pyplay.decode import ctc_lexicon_beam_search, ctc_prefix_beam_search
    from pyplay.ui.lessons.ctc.decoding import parse_lexicon

    lesson, view = shown_after(40)
    found = lesson.decoding.last
    assert found is not None and found.lexicon_error == ""
    assert found.best_path[0] == (view.decoded or "(empty)")
    lp = np.log(view.probs)
    beam = ctc_prefix_beam_search(lp, beam_width=lesson.state.beam_width)
    assert found.beam[0][1] == pytest.approx(beam[0][1])
    words = parse_lexicon(lesson.state.lexicon, "ABCD")
    assert words[:2] == [(1, 2), (2, 3)]  # "AB BC ...": A is label 1 (0 the blank)
    lex = ctc_lexicon_beam_search(lp, words, beam_width=lesson.state.beam_width)
    assert [t for t, _ in found.lexicon] == [
        "".join(view.classes[k] for k in p) for p, _ in lex[:5]
    ]
    allowed = {"AB", "BC", "CD", "DA", "BAD", "CAB"}

    def is_words(text: str) -> bool:
        return text == "" or any(text.startswith(w) and is_words(text[len(w) :]) for w in allowed)

    assert all(is_words(t) for t, _ in found.lexicon)
    assert "lexicon beam search" in lesson.decoding.columns["lexicon"].object
    assert f"{found.lexicon[0][1]:7.3f}  {found.lexicon[0][0]}" in (
        lesson.decoding.columns["lexicon"].object
    )
    # live: training on redraws the panel from the new model
    before = found
    lesson.state.train(steps=5)
    lesson.refresh()
    assert lesson.decoding.last is not None and lesson.decoding.last.beam != before.beam
    # the settings redraw it; a bad lexicon is explained next to its box and kept
    lesson.state.lexicon = "ab, dx"
    assert "the word 'DX' uses X" in lesson.decoding.problem.object
    assert lesson.decoding.lexicon.value == "ab, dx" and lesson.decoding.last.lexicon == []
    assert lesson.decoding.last.beam  # the other decoders carry on
    lesson.state.lexicon = "ab, dc"
    assert lesson.decoding.problem.object == ""
    assert all(t.replace("AB", "").replace("DC", "") == "" for t, _ in lesson.decoding.last.lexicon)
    lesson.state.beam_width = 1
    assert len(lesson.decoding.last.beam) == 1
    with pytest.raises(ValueError, match="at least one word"):
        parse_lexicon(" , ", "ABCD")
    with pytest.raises(ValueError, match="at most 12 symbols"):
        parse_lexicon("A" * 13, "ABCD")


@pytest.mark.slow
def test_bidirectional_learns_fastest_and_the_time_delay_net_learns_too() -> None:
    """Seeded (the comparison figure's claim): three GRUs of width 16 on the same 60 batches;
    measured greedy label error rates on 64 held-out examples: one-way 0.29, time-delay
    (D = 3) 0.48, bidirectional 0.09."""
    from pyplay.ui.lessons.ctc.race import KINDS, DirectionRace

    race = DirectionRace("gru", 16, 0, 0.3, 0.02, 0)
    assert race.delay == 3 and race.trainers["time-delay"].model.delay == 3
    assert race.trainers["bidirectional"].model.bidirectional
    for _ in range(60):
        race.step()
    assert race.errors["step"] == list(range(10, 61, 10))
    assert all(len(race.history[k]) == 60 for k in KINDS)
    last = race.latest()
    assert last["bidirectional"] <= 0.15, last
    assert last["bidirectional"] + 0.15 < min(last["one-way"], last["time-delay"]), last
    assert last["time-delay"] < 0.8 and race.errors["time-delay"][0] == 1.0, last  # it learns
    for kind in KINDS:  # every loss fell from where it started
        assert np.mean(race.history[kind][-10:]) < 0.5 * np.mean(race.history[kind][:5])


@pytest.mark.slow
def test_the_time_delay_option_and_the_comparison_in_the_lesson() -> None:
    lesson = CTCLesson()
    lesson.panel()
    state = lesson.state
    assert lesson.delay.disabled and state.model.delay == 0  # bidirectional: no delay
    assert not lesson.race.figures.visible and "Off" in lesson.race.note.object
    state.bidirectional = False
    assert not lesson.delay.disabled
    state.delay = 2
    assert state.model.delay == 2 and not state.model.bidirectional
    assert state.message_kind != "danger", state.message
    state.compare = True
    assert state.race is not None and state.race.delay == 2
    state.train(steps=10)
    assert state.trainer.step_count == 10 and state.race.steps == 10
    lesson.refresh()
    assert lesson.race.figures.visible
    assert list(lesson.race.loss_source.data["step"]) == list(range(1, 11))
    assert len(lesson.race.error_source.data["time-delay"]) == 1
    assert "Step 10: label error rate one-way" in lesson.race.note.object
    assert "D = 2" in lesson.race.loss_fig.title.text
    state.lr = 0.005  # a new rate reaches the compared nets too, keeping their steps
    assert {t.optimizer.lr for t in state.race.trainers.values()} == {0.005}
    assert state.trainer.optimizer.lr == 0.005 and state.race.steps == 10
    assert "three compared nets" in state.message
    state.hidden_size = 8  # a rebuild starts the comparison afresh
    assert state.race is not None and state.race.steps == 0
    state.bidirectional = True  # with a delay set: a clear message, nothing rebuilt
    assert "delay is the one-way alternative to a bidirectional net" in state.message
    assert state.model.delay == 2
