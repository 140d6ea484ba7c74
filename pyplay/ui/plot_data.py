"""Putting new values into a plot's data source, sending the page only what changed.

A live view redraws its plots from the model several times a second, and each redraw becomes a
patch that the page's worker serialises and the page's main thread decodes. Many columns do
not change from one redraw to the next: the token labels of an attention map's cells (shown on
hover), the cells' positions, an image's corner and size. Replacing ``source.data`` whole sends
them again every time; the Transformers lesson's grid of every head's attention sent its two
label columns (10,000 strings at its defaults: 2 layers x 4 heads x 25 x 25 cells) at every
live redraw, about 13% of the worker's time while it trained (profiled in the page).

:func:`set_data` replaces the columns that changed and leaves the others: when the source holds
the columns it last gave it (copies of its own, so a caller's array changed in place is still
seen as changed), the new data has the same columns and every column keeps its length, it
updates only the changed columns (Bokeh sends one ``ColumnDataChanged`` event naming them, and
BokehJS keeps the rest); otherwise it replaces the data whole, as before. Flat columns of
numbers and strings are compared; nested ones (images, multi-line coordinates) are always
sent. :func:`set_data_reference` is the plain version, always whole; both leave the source
holding the same values.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np
from bokeh.core.property.validation import without_property_validation
from bokeh.models import ColumnDataSource

__all__ = ["as_sent", "changed_columns", "set_data", "set_data_reference"]

_SCALARS = (str, int, float, np.number, np.bool_, type(None))  # a flat column's values


def as_sent(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with numeric arrays as Bokeh sends them best: float arrays as float64 (sent as
    binary buffers, validated as one value), other numeric arrays as they are; lists stay."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, np.ndarray) and value.dtype.kind in "fiub":
            out[key] = value.astype(np.float64) if value.dtype.kind == "f" else value
        else:
            out[key] = value
    return out


def _own_copy(value: Any) -> Any:
    """A copy of a column that no caller holds (arrays and lists; other values as they are)."""
    if isinstance(value, np.ndarray):
        return value.copy()
    return list(value) if isinstance(value, list) else value


def _length(value: Any) -> int:
    return int(value.shape[0]) if isinstance(value, np.ndarray) and value.ndim else len(value)


def _same(old: Any, new: Any) -> bool:
    """Whether column ``new`` holds exactly the values of ``old`` (NaN equal to NaN); only flat
    columns of numbers or strings are compared."""
    if isinstance(old, np.ndarray) or isinstance(new, np.ndarray):
        if not (isinstance(old, np.ndarray) and isinstance(new, np.ndarray)):
            return False
        if old.dtype != new.dtype or old.shape != new.shape:
            return False
        if old.dtype.kind not in "fiub":  # object arrays: not compared
            return False
        return bool(np.array_equal(old, new, equal_nan=old.dtype.kind == "f"))
    if isinstance(old, list) and isinstance(new, list):
        if new and not isinstance(new[0], _SCALARS):  # images, multi-line coordinates
            return False
        try:
            return bool(old == new)
        except ValueError:  # arrays after all: not compared
            return False
    return False


# the columns set_data last gave each source: its own copies, which no caller can change in
# place; a source whose columns are not these any more (set some other way) is replaced whole
_GIVEN: weakref.WeakKeyDictionary[ColumnDataSource, dict[str, Any]] = weakref.WeakKeyDictionary()


def changed_columns(source: ColumnDataSource, data: dict[str, Any]) -> dict[str, Any] | None:
    """The columns of ``data`` (as :func:`as_sent` gives them) whose values differ from those
    :func:`set_data` last gave ``source``, or None when only a whole replacement fits: the
    source's columns were not given by :func:`set_data` (or were set since), ``data`` names
    other columns, or a column changes length. An empty dict: nothing changed."""
    given = _GIVEN.get(source)
    held = source.data
    if given is None or not data or set(given) != set(held) or set(data) != set(given):
        return None
    if any(held[k] is not v for k, v in given.items()):  # set some other way since
        return None
    if len({_length(v) for v in data.values()} | {_length(v) for v in given.values()}) != 1:
        return None
    return {k: v for k, v in data.items() if not _same(given[k], v)}


@without_property_validation
def set_data(source: ColumnDataSource, data: dict[str, Any]) -> None:
    """Give ``source`` the columns ``data`` (numeric columns best as arrays), sending only the
    columns that changed when the shape of the table stays (see the module docstring); nothing
    at all when no value changed. The source keeps copies of the columns it is sent, so a
    caller may change its own arrays in place and give them again."""
    sent = as_sent(data)  # (float arrays already new copies there)
    data = {k: _own_copy(v) if v is data[k] else v for k, v in sent.items()}
    changed = changed_columns(source, data)
    if changed is None:
        source.data = data
    elif changed:
        source.data.update(changed)
    else:
        return
    _GIVEN[source] = {k: source.data[k] for k in data}


@without_property_validation
def set_data_reference(source: ColumnDataSource, data: dict[str, Any]) -> None:
    """:func:`set_data` the plain way: the data replaced whole, every column sent."""
    source.data = as_sent(data)
