"""Putting new values into a plot's data source, sending the page only what changed.

A live view redraws its plots from the model several times a second, and each redraw becomes a
patch that the page's worker serialises and the page's main thread decodes. Many columns do
not change from one redraw to the next: the token labels of an attention map's cells (shown on
hover), the cells' positions, an image's corner and size. Replacing ``source.data`` whole sends
them again every time; the Transformers lesson's grid of every head's attention sent its two
label columns (about 7,000 strings at its defaults) at every live redraw, about 13% of the
worker's time while it trained (profiled in the page).

:func:`set_data` replaces the columns that changed and leaves the others: when the source has
the same columns as the new data and every column keeps its length, it updates only the
changed columns (Bokeh sends one ``ColumnDataChanged`` event naming them, and BokehJS keeps
the rest); otherwise it replaces the data whole, as before. :func:`set_data_reference` is the
plain version, always whole; both leave the source holding the same values.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from bokeh.core.property.validation import without_property_validation
from bokeh.models import ColumnDataSource

__all__ = ["as_sent", "changed_columns", "set_data", "set_data_reference"]


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


def _length(value: Any) -> int:
    return int(value.shape[0]) if isinstance(value, np.ndarray) and value.ndim else len(value)


def _same(old: Any, new: Any) -> bool:
    """Whether column ``new`` holds exactly the values of ``old`` (NaN equal to NaN)."""
    if isinstance(old, np.ndarray) or isinstance(new, np.ndarray):
        if not (isinstance(old, np.ndarray) and isinstance(new, np.ndarray)):
            return False
        if old.dtype != new.dtype or old.shape != new.shape:
            return False
        if old.dtype.kind not in "fiub":  # object arrays: not compared
            return False
        return bool(np.array_equal(old, new, equal_nan=old.dtype.kind == "f"))
    if isinstance(old, list) and isinstance(new, list):
        try:
            return bool(old == new)
        except ValueError:  # a list of arrays (an image column): not compared
            return False
    return False


def changed_columns(source: ColumnDataSource, data: dict[str, Any]) -> dict[str, Any] | None:
    """The columns of ``data`` (as :func:`as_sent` gives them) whose values differ from
    ``source``'s, or None when only a whole replacement fits: ``data`` names other columns
    than the source holds, or a column changes length. An empty dict: nothing changed."""
    old = source.data
    if set(old) != set(data) or not data:
        return None
    lengths = {_length(v) for v in data.values()} | {_length(v) for v in old.values()}
    if len(lengths) != 1:
        return None
    return {k: v for k, v in data.items() if not _same(old[k], v)}


@without_property_validation
def set_data(source: ColumnDataSource, data: dict[str, Any]) -> None:
    """Give ``source`` the columns ``data`` (numeric columns best as arrays), sending only the
    columns that changed when the shape of the table stays (see the module docstring); nothing
    at all when no value changed."""
    data = as_sent(data)
    changed = changed_columns(source, data)
    if changed is None:
        source.data = data
    elif changed:
        source.data.update(changed)


@without_property_validation
def set_data_reference(source: ColumnDataSource, data: dict[str, Any]) -> None:
    """:func:`set_data` the plain way: the data replaced whole, every column sent."""
    source.data = as_sent(data)
