"""Issue 33 in the page's logic, without a browser: a lesson is a workbench (buttons, status,
the first settings, the loss curve and the main look-inside view at its top, everything deeper
in closed sections), a model setting changed while training builds the new model and goes on
training it with the run before drawn faded beside it, and leaving a lesson pauses it."""

from __future__ import annotations

import pytest

pytest.importorskip("panel")

import panel as pn

from pyplay.ui.app import Playground
from pyplay.ui.lessons.experiment import set_up
from pyplay.ui.lessons.rnn.state import LessonState
from pyplay.ui.lessons.rnn.view import RecurrentLesson
from pyplay.ui.lessons.seq2seq.view import Seq2SeqLesson
from pyplay.ui.workbench import (
    INSET,
    MORE_SETTINGS,
    Later,
    Section,
    button_row_px,
    controls_column,
    heading_of,
    sections,
)

pytestmark = pytest.mark.slow  # each builds a lesson or the playground (seconds)


def _walk(obj):
    yield obj
    held = getattr(obj, "held", None)  # a closed section's body (workbench.SectionLayout)
    for child in [*(getattr(obj, "objects", []) or []), *([held] if held is not None else [])]:
        yield from _walk(child)


def test_a_setting_changed_while_training_keeps_training_the_new_model():
    state = LessonState(task="adding", cell="lstm", hidden_size=32, seq_len=10)
    state.train(steps=12)
    trained = list(state.history["loss"])
    state.running = True  # as the page's Train sets it
    state.hidden_size = 48
    assert state.running, "the experiment goes on with the new model"
    assert state.model.rnn.hidden_size == 48
    assert state.history["loss"] == [] and state.trainer.step_count == 0
    label, steps, losses = state.previous_run
    assert label == "before: Hidden size 32"
    assert losses == trained and steps == list(range(1, 13))
    state.train(steps=3)
    assert len(state.history["loss"]) == 3


def test_a_setting_changed_while_paused_stays_paused_and_reset_starts_clean():
    state = LessonState(task="adding", cell="lstm", seq_len=10)
    state.train(steps=5)
    state.cell = "gru"
    assert not state.running
    assert state.previous_run is not None and state.previous_run[0] == "before: Cell lstm"
    state.reset()
    assert state.previous_run is None, "Reset starts clean: no run before"


def test_a_refused_setting_keeps_the_model_and_its_training():
    state = LessonState(task="adding", cell="lstm", seq_len=10)
    state.train(steps=3)
    model = state.model
    state.running = True
    state.batch_size = 32  # a training setting: applied, no rebuild
    state.seed = 3  # a setting that rebuilds
    assert state.running and state.model is not model


@pytest.mark.slow
def test_try_this_starts_afresh_without_a_run_before():
    view = RecurrentLesson()
    view.state.train(steps=4)
    view.state.hidden_size = 16
    assert view.state.previous_run is not None
    from pyplay.ui.lessons import spec_of

    set_up(view.state, tuple(spec_of(LessonState).params), spec_of(LessonState).experiments[0])
    assert view.state.previous_run is None
    assert list(view.loss_plot.before.data["step"]) == []


@pytest.mark.slow
def test_the_loss_plot_draws_the_run_before_faded_and_labelled():
    view = RecurrentLesson()
    view.state.train(steps=6)
    view.state.hidden_size = 24
    before = view.loss_plot.before.data
    assert list(before["step"]) == [1, 2, 3, 4, 5, 6] and len(before["loss"]) == 6
    for fig in view.loss_plot.figures:
        labels = [i.label.value for i in fig.legend[0].items]
        assert labels[:2] == ["training loss", "before: Hidden size 32"]
    view.session.reset()
    assert list(view.loss_plot.before.data["step"]) == []
    for fig in view.loss_plot.figures:
        labels = [str(i.label.value) for i in fig.legend[0].items]
        assert not any(t.startswith("before") for t in labels), "no entry for an undrawn line"


@pytest.mark.slow
@pytest.mark.parametrize("view_class", [RecurrentLesson, Seq2SeqLesson])
def test_the_workbench_holds_buttons_loss_and_the_main_view_and_closes_the_rest(view_class):
    view = view_class()
    page = view.panel()
    bench = page.objects[0]
    assert "pyplay-workbench" in bench.css_classes
    controls, views = bench.objects
    names = [w.name for w in _walk(controls) if isinstance(w, pn.widgets.Button)]
    assert names[:4] == ["Train", "Pause", "Step", "Reset"]
    panes = [p.object for p in _walk(views) if isinstance(p, pn.pane.Bokeh)]
    assert view.loss_plot.log_fig in panes
    assert len(panes) >= 2, "the main look-inside view is beside the loss"
    more = [c for c in controls.objects if _is_section(c)]
    assert [_title(c) for c in more] == [MORE_SETTINGS] and _closed(more[0])
    cards = [o for o in page.objects if _is_section(o)]
    assert len(cards) >= 4
    assert all(_closed(c) for c in cards), "every section closed until opened"
    assert _title(cards[0]) == "How to use this lesson"


def _is_section(part):
    return isinstance(part, pn.Column) and "pyplay-section" in part.css_classes


def _closed(layout):  # only the header in the page; the body held until first opened
    return len(layout.objects) == 1 and not layout.held.visible


def _title(layout):
    return layout.objects[0].name[2:]  # the header button's name after its arrow


def test_a_section_opens_and_closes_from_its_header():
    body = pn.pane.Markdown("inside")
    sec = Section("Deeper", body)
    layout = pn.panel(sec)
    (header,) = layout.objects  # closed: the body is not in the page until first opened
    assert header.name == "\u25b8 Deeper" and sec.layout.held is sec.body and sec.objects == [body]
    assert layout.select(pn.pane.Markdown) == [body], "select finds what the section holds"
    header.value = True
    assert sec.opened and sec.layout.held is None and header.name == "\u25be Deeper"
    assert layout.objects == [header, sec.body] and sec.body.visible
    assert sec.body.objects == [body]
    sec.opened = False  # closed again: hidden, still in the page (not drawn twice)
    assert not sec.body.visible and not header.value and layout.objects == [header, sec.body]
    sec.visible = False
    assert not layout.visible


def test_every_control_fits_its_column_a_closed_sections_too():
    """BokehJS draws a slider told no width 300 px wide: past a 300 px column with its margins
    (and a section's inset), under the plots beside it; a row of long-labelled buttons too."""
    slider = pn.widgets.IntSlider(name="Memory cells N", start=4, end=32)
    deep = pn.widgets.FloatSlider(name="Rate", start=0.0, end=1.0)
    wide = pn.widgets.TextInput(name="Seed", width=400)
    short = pn.widgets.RadioButtonGroup(options=["Recall", "Copy"])
    heads = pn.widgets.RadioButtonGroup(options=["Soft", "Hard reads", "Hard writes", "Both hard"])
    stretched = pn.widgets.IntSlider(name="Steps", start=1, end=9, sizing_mode="stretch_width")
    room = 300 - 2 * INSET
    assert button_row_px(heads.labels) > room >= button_row_px(short.labels)
    controls_column([slider, short, stretched], [deep, wide, heads], 300)  # the last closed
    assert slider.width == deep.width == wide.width == room
    assert stretched.width is None, "a stretching widget takes the width it is given"
    assert heads.orientation == "vertical" and short.orientation == "horizontal"


def test_a_closed_section_keeps_its_parts_out_of_the_document_until_opened():
    from bokeh.document import Document
    from bokeh.models import ColumnDataSource
    from bokeh.plotting import figure

    source = ColumnDataSource(data={"x": [0], "y": [1.0]})
    fig = figure(width=200, height=150)
    fig.line("x", "y", source=source)
    sec = Section("Deeper", pn.pane.Bokeh(fig))
    root = sec.__panel__().get_root(Document())  # the models the page is sent
    assert source not in root.references(), "a closed section's plot is not sent to the page"
    sec.opened = True
    assert source in root.references(), "opened, it joins the page's models"


def test_sections_group_parts_by_their_headings():
    a, b = pn.pane.Markdown("a"), pn.pane.Markdown("b")
    own = pn.Column("## Own", b)
    lead = pn.pane.Markdown("before any heading")
    cards = sections([lead, "## First", a, own])
    assert cards[0] is lead
    assert [c.title for c in cards[1:]] == ["First", "Own"]
    assert cards[1].objects == [a]
    assert isinstance(own.objects[0], pn.Spacer) and own.objects[1] is b, "the heading is the title"
    own.visible = False
    assert not cards[2].visible, "a part the lesson hides hides its section"
    assert heading_of("### Three") == "Three" and heading_of("plain") is None
    nested = pn.Row(pn.Column("## Palette", a), b)  # a part whose first part has a heading
    assert heading_of(nested) is None, "only a layout's own first part makes it a section"


def test_a_later_part_is_made_in_its_place_when_its_section_first_opens():
    a, b = pn.pane.Markdown("a"), pn.pane.Markdown("b")
    made: list[str] = []

    def make(name: str) -> pn.pane.Markdown:
        made.append(name)
        return pn.pane.Markdown(name)

    cards = sections(["## First", Later(lambda: make("x")), a, Later(lambda: make("y")), b])
    (sec,) = cards
    told: list[pn.Column] = []
    sec.when_built(told.append)
    assert made == [] and sec.objects == [a, b], "nothing made while the section is closed"
    sec.opened = True
    assert made == ["x", "y"] and told == [sec.body]
    assert [o.object for o in sec.objects] == ["x", "a", "y", "b"], "each in its place"
    sec.opened = False
    sec.opened = True
    assert made == ["x", "y"] and len(told) == 1, "made once"
    sec.append(Later(lambda: make("z")))  # a part added to an opened section: made at once
    assert made == ["x", "y", "z"] and sec.objects[-1].object == "z"


def test_a_titled_later_part_is_a_section_of_its_own_without_its_heading():
    inner = pn.pane.Markdown("inner")
    cards = sections(["## First", "text", Later(lambda: pn.Column("## Own", inner), title="Own")])
    assert [c.title for c in cards] == ["First", "Own"] and cards[1].objects == []
    cards[1].opened = True
    (column,) = cards[1].objects
    assert isinstance(column.objects[0], pn.Spacer) and column.objects[1] is inner
    opened = Section("Open", Later(lambda: pn.pane.Markdown("now")), opened=True)
    assert [o.object for o in opened.objects] == ["now"], "an open section makes it at once"


@pytest.mark.slow
def test_the_recurrent_lessons_closed_views_are_made_when_their_section_opens():
    """The gradient figure, the CEC comparison, packing, the residual comparison and the
    gradient norms are made at their section's first opening, drawn from the model as it is
    then (the norms of the steps trained before too), fitted and described like the rest."""
    view = RecurrentLesson()
    page = view.panel()
    lazy = ("_grad", "_cec", "_packing", "_residual", "_norms")
    assert all(getattr(view, name) is None for name in lazy)
    for _ in range(30):
        view.session.step()
    assert all(getattr(view, name) is None for name in lazy), "training makes none of them"
    by_title = {}
    for layout in [o for o in _walk(page) if getattr(o, "section", None) is not None]:
        by_title[layout.section.title] = layout.section
    grad = by_title["Gradient through time"]
    grad.opened = True
    assert view._grad is not None and view._cec is not None
    assert len(view.grad_current.data["t"]) == view.state.seq_len, "drawn from the model"
    assert view.cec.panel.visible, "the LSTM's CEC comparison, drawn"
    texts = [o for o in grad.body.objects if "pyplay-plot-text" in (o.css_classes or [])]
    assert len(texts) == 1 and "Gradient" in texts[0].object, "described for screen readers"
    norms = by_title["Gradient norm and clipping"]
    norms.opened = True
    steps = list(view.norms.source.data["step"])
    assert steps == list(range(1, 31)), "the steps trained before the plot was made"
    view.session.step()
    assert list(view.norms.source.data["step"])[-1] == 31, "and those after"
    by_title["Padding and packing"].opened = True
    assert "real; packed batch sizes" in view.packing.heading.object
    by_title["Residual connections between layers"].opened = True
    assert view._residual is not None and view.residual.session is not None


@pytest.mark.slow
def test_leaving_a_lesson_pauses_it_and_its_comparisons():
    playground = Playground()
    titles = playground.titles
    rnn = playground.open(titles.index("Recurrent networks"))
    rnn.state.running = True
    rnn.residual.state.running = True
    playground.tabs.active = titles.index("About")
    assert not rnn.state.running and not rnn.residual.state.running
    playground.tabs.active = titles.index("Recurrent networks")
    assert not rnn.state.running, "coming back shows it paused, one click from resuming"


def test_the_gradient_legend_waits_for_the_comparisons_lines():
    rnn = RecurrentLesson()
    shown = [str(i.label.value) for i in rnn.grad_fig.legend[0].items if i.visible]
    assert shown == ["this model"], "no legend for the comparison's undrawn lines"
    rnn.compare()
    assert len([i for i in rnn.grad_fig.legend[0].items if i.visible]) == 3


def test_a_plot_a_button_fills_is_one_line_until_drawn():
    from bokeh.models import ColumnDataSource

    from pyplay.ui.workbench import until_drawn

    source = ColumnDataSource({"x": [], "y": []})
    plot = pn.pane.Markdown("the plot")
    note, view = until_drawn(plot, [source], "*Compare* draws it here.").objects
    assert view is plot and note.visible and not plot.visible, "a line, not empty axes"
    assert "Compare" in note.object
    source.data = {"x": [1.0], "y": [2.0]}
    assert plot.visible and not note.visible
    source.data = {"x": [], "y": []}
    assert note.visible and not plot.visible, "a new comparison clears it again"


@pytest.mark.slow
def test_the_seq2seq_comparisons_wait_as_one_line():
    view = Seq2SeqLesson()
    page = view.panel()
    waiting = [m for m in _walk(page) if "pyplay-waiting" in getattr(m, "css_classes", [])]
    lines = sorted(w.object.split()[0] for w in waiting)
    assert lines == ["*Compare*", "*Train", "Map"], "by length, shared RNN, sentence map"
    assert all(w.visible for w in waiting)


@pytest.mark.slow
def test_the_first_try_this_is_one_click_away_in_the_workbench():
    view = RecurrentLesson()
    view.state.hidden_size = 16  # away from the experiment's settings
    controls = view.panel().objects[0].objects[0]
    picker = [c for c in _walk(controls) if "pyplay-try-first" in getattr(c, "css_classes", [])]
    assert len(picker) == 1
    menu = next(w for w in _walk(picker[0]) if isinstance(w, pn.widgets.Select))
    button = next(w for w in _walk(picker[0]) if isinstance(w, pn.widgets.Button))
    experiments = view.try_this.spec.experiments
    assert menu.name == "Try this" and menu.value == experiments[0].label
    assert menu.options == [e.label for e in experiments]
    button.clicks += 1  # one click sets up the first experiment
    assert view.try_this.note.startswith(f"Set up: {experiments[0].label}.")
    first = dict(experiments[0].settings)
    assert view.state.hidden_size == first.get("hidden_size", 32)
    menu.value = experiments[1].label
    button.clicks += 1
    assert view.try_this.note.startswith(f"Set up: {experiments[1].label}.")


def test_each_lesson_carries_the_course_path_with_its_neighbours_one_click_away():
    from pyplay.ui.landing import course_strip, course_titles

    playground = Playground()
    titles = playground.titles
    course = course_titles()
    assert course == [t for t in titles if t not in ("Start here", "About", "Saved work")]
    rnn = playground.open(titles.index(course[0]))
    strips = [o for o in _walk(rnn.panel()) if "pyplay-course-strip" in o.css_classes]
    assert len(strips) == 1
    text, *buttons = strips[0].objects
    assert text.object == f"Lesson 1 of {len(course)} on the course path"
    assert [b.name for b in buttons] == [f"Next: {course[1]} ›"], "nothing before the first"
    buttons[0].clicks += 1
    assert titles[playground.tabs.active] == course[1]
    last = course_strip(course[-1], playground.show)
    assert [b.name for b in last.objects[1:]] == [f"‹ Before: {course[-2]}"]
    with pytest.raises(ValueError, match="title: expected one of the course's lessons"):
        course_strip("Start here", playground.show)
