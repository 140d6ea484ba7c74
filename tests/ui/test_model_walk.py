"""pyplay.ui.model_walk: Bokeh's document walk, faster, finds the same models in the same order
(on the playground's own document with every section of two lessons open, on models whose
defaults are not made yet, and under a theme that sets a property holding a model)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from bokeh.core.property.descriptors import UnsetValueError
from bokeh.document import Document
from bokeh.model import util as model_util
from bokeh.models import ColumnDataSource, DataRange1d, Plot
from bokeh.models.renderers import GlyphRenderer
from bokeh.plotting import figure
from bokeh.themes import Theme

from pyplay.ui import model_walk

pytestmark = pytest.mark.slow


@contextmanager
def walking(fast: bool) -> Iterator[None]:
    """The fast walk (``fast``) or Bokeh's own in force inside; the fast one after."""
    if fast:
        model_walk.install()
    else:
        model_walk.uninstall()
    try:
        yield
    finally:
        model_walk.install()


def walk(*roots: Any, fast: bool) -> list[Any]:
    """Every model reached from ``roots``, in the order found, by the fast or Bokeh's walk."""
    with walking(fast):
        return model_util.collect_models(*roots)


def test_install_and_uninstall_swap_the_visitors() -> None:
    model_walk.uninstall()
    assert not model_walk.installed()
    assert model_util.visit_immediate_value_references is model_walk.BOKEH_VISIT_REFERENCES
    model_walk.install()
    model_walk.install()  # idempotent
    assert model_walk.installed()
    assert model_util.visit_value_and_its_immediate_references is model_walk.visit_value


def test_the_playground_document_walks_to_the_same_models_in_the_same_order() -> None:
    from pyplay.ui.app import create_app
    from pyplay.ui.workbench import SectionLayout

    app: Any = create_app(ahead=False)  # installs the fast walk
    assert model_walk.installed()
    doc = Document()
    app.server_doc(doc)
    app.objects[-1].active = 1  # a second lesson built and drawn
    layouts: list[Any] = app.select(SectionLayout)
    for layout in layouts:  # every section of both opened: views drawn
        if layout.held is not None:
            layout.objects[0].value = True
    roots = list(doc.roots)
    fast = walk(*roots, fast=True)
    bokeh = walk(*roots, fast=False)
    assert len(fast) > 900  # the whole document (972 models), not a part of it
    assert [m.id for m in fast] == [m.id for m in bokeh]
    assert {m.id for m in fast} == {m.id for m in doc.models}  # what recompute keeps


def test_defaults_not_made_yet_are_made_and_found_as_bokeh_does() -> None:
    # a plot's toolbar, ranges and scales are unstable defaults made on first read: one copy
    # walked by Bokeh's walk, an identical fresh copy by the fast one
    def fresh() -> list[Any]:
        source = ColumnDataSource(data={"x": [1, 2], "y": [3, 4]})
        fig = figure(width=200, height=100)
        fig.line("x", "y", source=source)
        return [fig, Plot()]

    bokeh = walk(*fresh(), fast=False)
    fast = walk(*fresh(), fast=True)
    assert [type(m).__name__ for m in fast] == [type(m).__name__ for m in bokeh]
    assert "Toolbar" in {type(m).__name__ for m in fast}


def test_a_required_property_left_unset_raises_in_both_walks() -> None:
    for fast in (False, True):
        with pytest.raises(UnsetValueError, match="data_source"):
            walk(GlyphRenderer(), fast=fast)


def test_a_theme_that_sets_a_model_property_is_read_through_bokehs_getter() -> None:
    # the theme gives every Plot a fresh x range (a model) where the class default is made
    # otherwise: the walk must find the themed one, as Bokeh's getter returns it
    theme = Theme(json={"attrs": {"Plot": {"x_range": DataRange1d(start=0, end=5)}}})
    found = {}
    for fast in (False, True):
        doc = Document(theme=theme)
        plot = Plot()
        doc.add_root(plot)
        models = walk(plot, fast=fast)
        ranges = [m for m in models if isinstance(m, DataRange1d)]
        assert plot.x_range in ranges
        found[fast] = [type(m).__name__ for m in models]
    assert found[True] == found[False]


def test_an_unset_stable_default_is_looked_into_once_per_class_and_property() -> None:
    model_walk.visit_references(Plot(), lambda m: None)
    keys = {k for k in model_walk._SKIP_UNSET if k[0] is Plot}
    assert keys  # the stable defaults without a model, e.g. the title's default None
    model_walk.visit_references(Plot(), lambda m: None)
    assert {k for k in model_walk._SKIP_UNSET if k[0] is Plot} == keys


def test_recompute_keeps_the_same_models_and_finds_them_by_name() -> None:
    from bokeh.models.widgets import Div

    kept = {}
    for fast in (False, True):
        with walking(fast):
            doc = Document()
            fig = figure(width=200, height=100, name="the plot")
            fig.line([1, 2], [3, 4], name="the line")
            doc.add_root(fig)
            doc.add_root(Div(text="a"))
            fig.renderers[0].visible = False  # a change after the roots joined
            doc.models.recompute()
            kept[fast] = (
                sorted(type(m).__name__ for m in doc.models),
                doc.get_model_by_name("the line") is fig.renderers[0],
                doc.get_model_by_name("the plot") is fig,
            )
    assert kept[True] == kept[False]
    assert kept[True][1] and kept[True][2]


def test_name_of_reads_a_set_name_a_default_and_a_themed_one() -> None:
    plot = Plot()
    assert model_walk.name_of(plot) is None
    plot.name = "p"
    assert model_walk.name_of(plot) == "p"
    doc = Document(theme=Theme(json={"attrs": {"Plot": {"name": "themed"}}}))
    themed = Plot()
    doc.add_root(themed)
    assert model_walk.name_of(themed) == themed.name == "themed"


def test_themed_values_are_bokehs() -> None:
    plot = Plot()
    assert model_walk.themed_values(plot) is plot.themed_values() is None
    doc = Document(theme=Theme(json={"attrs": {"Plot": {"name": "themed"}}}))
    doc.add_root(plot)
    assert model_walk.themed_values(plot) is plot.themed_values()
    assert model_walk.themed_values(plot) == {"name": "themed"}
