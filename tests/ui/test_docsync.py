"""The page's document patches (pyplay.ui.docsync) are Bokeh's own, made without listing every
model of the document for each change."""

from __future__ import annotations

import json
from typing import Any

import pytest
from bokeh.core.serialization import Serializer
from bokeh.document import Document
from bokeh.document.json import PatchJson
from bokeh.layouts import column
from bokeh.model import Model
from bokeh.models import ColumnDataSource, Span, Title
from bokeh.plotting import figure

from pyplay.ui.docsync import DocumentSerializer, document_patch


def _document(figures: int) -> tuple[Document, list[Any], list[ColumnDataSource]]:
    doc, figs, sources = Document(), [], []
    for k in range(figures):
        source = ColumnDataSource({"x": [0, 1, 2], "y": [k, k + 1, k + 2]})
        fig = figure(title=f"figure {k}", width=200, height=150)
        fig.line("x", "y", source=source)
        figs.append(fig)
        sources.append(source)
    doc.add_root(column(*figs))
    doc.models.flush_synced()  # as after the first render: the page has every model
    return doc, figs, sources


def _bokeh_patch(doc: Document, events: list[Any]) -> str:
    """Panel's _process_document_events, without flushing (so ours can run on the same state)."""
    serializer = Serializer(references=doc.models.synced_references)
    return json.dumps(PatchJson(events=serializer.encode(events)), sort_keys=True)


def _changes(doc: Document, change: Any) -> list[Any]:
    events: list[Any] = []
    doc.on_change(events.append)
    change()
    doc.callbacks._change_callbacks.clear()
    return events


@pytest.mark.parametrize("kind", ["property", "data", "stream", "new model", "new renderer"])
def test_the_patch_is_bokehs(kind: str) -> None:
    doc, figs, sources = _document(3)
    changes = {
        "property": lambda: setattr(figs[1].title, "text", "renamed"),
        "data": lambda: setattr(sources[0], "data", {"x": [5, 6], "y": [7, 8]}),
        "stream": lambda: sources[2].stream({"x": [3], "y": [9]}),
        "new model": lambda: setattr(figs[0], "title", Title(text="a new title model")),
        "new renderer": lambda: figs[2].add_layout(Span(location=1.0, dimension="width")),
    }
    events = _changes(doc, changes[kind])
    assert events, kind
    for event in events:
        expected = _bokeh_patch(doc, [event])
        patch, _ = document_patch(doc, [event])
        assert json.dumps(patch, sort_keys=True) == expected, kind
    if kind.startswith("new"):  # sent whole once, then referenced like the others
        assert not doc.models._new_models


@pytest.mark.slow
def test_a_change_looks_up_only_the_models_it_meets(monkeypatch: pytest.MonkeyPatch) -> None:
    doc, figs, _ = _document(40)
    assert len(doc.models) > 400
    calls = {"ref": 0}
    ref = Model.ref

    def counted(self: Model) -> Any:
        calls["ref"] += 1
        return ref.fget(self)  # type: ignore[attr-defined]

    monkeypatch.setattr(Model, "ref", property(counted))
    (event,) = _changes(doc, lambda: setattr(figs[7].title, "text", "renamed"))
    document_patch(doc, [event])
    assert calls["ref"] <= 2, calls  # the changed title (and nothing else)
    calls["ref"] = 0
    _bokeh_patch(doc, [event])
    assert calls["ref"] >= len(doc.models), calls  # Bokeh's: one for every model


def test_a_model_not_in_the_document_is_sent_whole() -> None:
    doc, _, _ = _document(1)
    outsider = Span(location=2.0)
    serializer = DocumentSerializer(doc)
    assert not serializer.has_ref(outsider) and serializer.get_ref(outsider) is None
    assert serializer.has_ref(doc.roots[0])
    assert serializer.get_ref(doc.roots[0]) == doc.roots[0].ref
