"""pyplay.ui.plot_data: a source gets the same values as a whole replacement gives, and the
page is sent only the columns that changed."""

from __future__ import annotations

import numpy as np
import pytest
from bokeh.document import Document
from bokeh.document.events import ColumnDataChangedEvent
from bokeh.models import ColumnDataSource

from pyplay.ui.docsync import document_patch
from pyplay.ui.plot_data import changed_columns, set_data, set_data_reference


def _grid(weight: np.ndarray, tokens: list[str]) -> dict[str, object]:
    n = len(tokens)
    q, k = np.divmod(np.arange(n * n), n)  # (n*n,) each
    return {"x": k, "y": q, "weight": weight, "q": [tokens[i] for i in q],
            "k": [tokens[i] for i in k]}  # fmt: skip


def _watched(source: ColumnDataSource) -> tuple[Document, list[object]]:
    doc = Document()
    doc.add_root(source)
    events: list[object] = []
    doc.on_change(lambda event: events.append(event))
    return doc, events


def _columns(source: ColumnDataSource) -> dict[str, list[object]]:
    return {k: np.asarray(v).tolist() for k, v in source.data.items()}


def test_only_the_changed_column_is_sent_when_the_labels_stay():
    rng = np.random.default_rng(0)
    tokens = list("abcdefgh")
    source = ColumnDataSource()
    set_data(source, _grid(rng.random(64), tokens))
    doc, events = _watched(source)
    new = _grid(rng.random(64), tokens)
    set_data(source, new)
    (event,) = events
    assert isinstance(event, ColumnDataChangedEvent) and event.cols == ["weight"]
    twin = ColumnDataSource(_grid(np.zeros(64), tokens))
    set_data_reference(twin, new)
    assert _columns(source) == _columns(twin)
    patch, _ = document_patch(doc, events)
    sent = str(patch)
    assert "'q'" not in sent and "'k'" not in sent and "weight" in sent


def test_a_new_length_or_new_columns_replace_the_data_whole():
    rng = np.random.default_rng(1)
    source = ColumnDataSource()
    set_data(source, _grid(rng.random(16), list("abcd")))
    _, events = _watched(source)
    set_data(source, _grid(rng.random(25), list("abcde")))  # every column longer
    set_data(source, {"x": np.arange(3), "y": np.arange(3)})  # other columns
    assert [(type(e), e.cols) for e in events] == [(ColumnDataChangedEvent, None)] * 2  # all
    assert _columns(source) == {"x": [0, 1, 2], "y": [0, 1, 2]}


def test_nothing_is_sent_when_no_value_changed_and_nan_equals_nan():
    source = ColumnDataSource()
    set_data(source, {"t": np.arange(3), "norm": np.array([np.nan, 0.5, 1.0])})
    _, events = _watched(source)
    set_data(source, {"t": np.arange(3), "norm": np.array([np.nan, 0.5, 1.0])})
    assert events == []
    set_data(source, {"t": np.arange(3), "norm": np.array([np.nan, 0.5, 2.0])})
    (event,) = events
    assert isinstance(event, ColumnDataChangedEvent) and event.cols == ["norm"]


@pytest.mark.parametrize(
    ("old", "new", "changed"),
    [
        ({"a": [1, 2]}, {"a": [1, 2]}, {}),
        ({"a": [1, 2]}, {"a": np.array([1, 2])}, {"a": [1, 2]}),  # list -> array: sent
        ({"a": np.array([1.0, 2.0])}, {"a": np.array([1, 2])}, {"a": [1, 2]}),  # new dtype
        ({"a": [np.zeros((2, 2))]}, {"a": [np.zeros((2, 2))]}, {"a": [[[0, 0], [0, 0]]]}),
        ({"a": [[1, 2]]}, {"a": [[1, 2]]}, {"a": [[1, 2]]}),  # nested lists: always sent
        ({"a": ["x", "y"]}, {"a": ["x", "z"]}, {"a": ["x", "z"]}),
        ({"a": [1, 2], "b": [3, 4]}, {"a": [1, 2, 3], "b": [3, 4, 5]}, None),
        ({"a": [1, 2]}, {"b": [1, 2]}, None),
    ],
)
def test_changed_columns(old, new, changed):
    source = ColumnDataSource()
    set_data(source, old)
    found = changed_columns(source, new)
    if changed is None:
        assert found is None
    else:
        assert found is not None
        assert {k: np.asarray(v).tolist() for k, v in found.items()} == changed


def test_a_column_changed_in_place_and_given_again_is_sent():
    values, labels, image = np.array([1, 2]), ["a", "b"], [np.zeros((2, 2))] * 2
    source = ColumnDataSource()
    set_data(source, {"v": values, "s": labels, "image": image})
    _, events = _watched(source)
    values[0], labels[0], image[0][0, 0] = 5, "c", 7.0  # the caller's own, changed in place
    set_data(source, {"v": values, "s": labels, "image": image})
    (event,) = events
    assert isinstance(event, ColumnDataChangedEvent)
    assert sorted(event.cols) == ["image", "s", "v"]
    assert _columns(source)["v"] == [5, 2] and _columns(source)["s"] == ["c", "b"]


def test_a_source_set_some_other_way_is_replaced_whole():
    source = ColumnDataSource()
    set_data(source, {"x": [1, 2], "s": ["a", "b"]})
    source.data = {"x": [1, 2], "s": ["a", "z"]}  # not through set_data
    _, events = _watched(source)
    set_data(source, {"x": [1, 2], "s": ["a", "b"]})
    (event,) = events
    assert event.cols is None and _columns(source)["s"] == ["a", "b"]


def test_set_data_matches_the_whole_replacement_over_random_updates():
    rng = np.random.default_rng(2)
    fast, plain = ColumnDataSource({"x": [], "s": []}), ColumnDataSource({"x": [], "s": []})
    for _ in range(40):
        n = int(rng.integers(1, 4))
        labels = [str(v) for v in rng.integers(0, 2, n)]
        data = {"x": rng.integers(0, 2, n).astype(float), "s": labels}
        set_data(fast, data)
        set_data_reference(plain, data)
        assert _columns(fast) == _columns(plain)
