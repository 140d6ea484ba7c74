"""Issue 36, colour-blind readers: a line's meaning is never carried by colour alone
(WCAG 2.1, 1.4.1). :func:`pyplay.ui.plot_styles.distinguish_lines` gives legend entries that
differ only in colour a dash or a marker of their own, and every figure of every lesson goes
through it."""

from __future__ import annotations

import pytest

pn = pytest.importorskip("panel")

from bokeh.models import ColumnDataSource, Plot  # noqa: E402
from bokeh.plotting import figure  # noqa: E402

from pyplay.ui.lessons import LESSONS  # noqa: E402
from pyplay.ui.plot_describe import legend_items as _items  # noqa: E402
from pyplay.ui.plot_styles import DASHES, MARKERS, distinguish_lines, style_of  # noqa: E402
from pyplay.ui.plots import keep_legend_samples  # noqa: E402


def _lines(n: int, **style) -> tuple[figure, list]:
    fig = figure()
    source = ColumnDataSource({"x": [0, 1], "y": [0, 1]})
    colours = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e")
    made = [
        fig.line("x", "y", source=source, color=colours[k % 5], legend_label=f"l{k}", **style)
        for k in range(n)
    ]
    return fig, made


def test_lines_told_apart_by_colour_alone_get_dashes_and_their_legend_samples_too():
    fig, made = _lines(3)
    keep_legend_samples(fig)  # a NaN sample beside each line, in its legend entry
    assert len({style_of(i) for i in _items(fig)}) == 1, "before: colour alone"
    distinguish_lines(fig)
    styles = [style_of(i) for i in _items(fig)]
    assert len(set(styles)) == 3
    assert [r.glyph.line_dash for r in made] == [[], [6], [2, 4]]  # solid, dashed, dotted
    assert DASHES[1:3] == ("dashed", "dotted")
    for item in _items(fig):  # the sample drawn in the legend has its line's dash
        assert len({str(r.glyph.line_dash) for r in item.renderers}) == 1


def test_an_entry_that_already_differs_keeps_its_style_and_markers_get_shapes():
    fig, made = _lines(1)
    dashed = fig.line([0, 1], [1, 0], line_dash="dotted", legend_label="other")
    distinguish_lines(fig)
    assert made[0].glyph.line_dash == [] and dashed.glyph.line_dash == [2, 4]  # untouched
    dots = figure()
    for k in range(len(MARKERS)):
        dots.scatter([0], [k], marker="circle", color="#1f77b4", legend_label=f"m{k}")
    distinguish_lines(dots)
    assert [style_of(i)[2] for i in _items(dots)] == [(m,) for m in MARKERS]


def test_more_entries_than_dashes_still_differ_with_markers_on_their_lines():
    fig = figure()
    for k in range(len(DASHES) + 3):
        fig.line([0, 1], [k, k], legend_label=f"l{k}")
        fig.scatter([0, 1], [k, k], marker="circle", legend_label=f"l{k}")
    distinguish_lines(fig)
    styles = [style_of(i) for i in _items(fig)]
    assert len(set(styles)) == len(styles) == len(DASHES) + 3


@pytest.mark.slow
@pytest.mark.parametrize("spec", LESSONS, ids=[s.key for s in LESSONS])
def test_no_legend_of_any_lesson_tells_its_lines_apart_by_colour_alone(spec):
    view = spec.view_class()()
    page = view.panel()
    checked = 0
    for pg in getattr(view, "_pages", None) or [page]:
        for pane in pg.select(pn.pane.Bokeh):
            if not isinstance(pane.object, Plot):
                continue
            styles = [s for s in map(style_of, _items(pane.object)) if s != ((), (), ())]
            assert len(set(styles)) == len(styles), (spec.key, pane.object.title.text)
            checked += len(styles) > 1
    assert checked or spec.key in {"stability", "textbook"}, "a lesson whose plots have legends"
