"""The values a "show as code" script may hold, written safely: :func:`literal` (plain
numbers, strings, booleans, None and lists of them, with ``repr``), :func:`identifier` (a
Python name), :func:`keyword_args` and :func:`call_lines` (a call on one line or one argument a
line). Nothing the learner typed can become code: anything else is refused with a
``ValueError`` naming what it was. Used by :mod:`pyplay.ui.export`, its PyTorch twin
(:mod:`pyplay.ui.export_torch`) and the lessons' ``code.py``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["call_lines", "identifier", "keyword_args", "literal"]

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def literal(value: Any, what: str) -> str:
    """``repr`` of a plain value, refusing anything else (ValueError naming ``what``)."""
    if value is None or isinstance(value, bool | str):
        return repr(value)
    if isinstance(value, int):
        return repr(int(value))
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{what} must be a finite number, got {value!r}")
        return repr(float(value))
    if hasattr(value, "item") and getattr(value, "ndim", None) == 0:  # a NumPy scalar
        return literal(value.item(), what)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(literal(v, what) for v in value) + "]"
    raise ValueError(f"{what} must be a number, text, True/False or None, got {type(value)}")


def identifier(name: str, what: str) -> str:
    """``name`` when it is a Python name, else a ValueError naming ``what``."""
    if not isinstance(name, str) or not _IDENT.fullmatch(name):
        raise ValueError(f"{what} must be a Python name, got {name!r}")
    return name


def keyword_args(items: Mapping[str, Any], what: str) -> list[str]:
    """``name=value`` for each item, names checked (:func:`identifier`) and values written
    by :func:`literal`."""
    return [f"{identifier(k, what)}={literal(v, f'{what} {k}')}" for k, v in items.items()]


def call_lines(head: str, args: list[str]) -> list[str]:
    """``head(args)`` on one line if it fits in 99 characters, else one argument a line."""
    line = f"{head}({', '.join(args)})"
    if len(line) <= 99:
        return [line]
    return [f"{head}(", *[f"    {a}," for a in args], ")"]
