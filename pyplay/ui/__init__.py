"""The Panel + Bokeh face of pyplay (the core never imports this package).

In a notebook, for models trained natively (see :mod:`pyplay.ui.notebook`)::

    import panel as pn
    import pyplay.ui

    pn.extension()
    pyplay.ui.gates(model, x)                  # gates and states of a recurrent model
    pyplay.ui.attention(model, "abc", task=task)  # where an encoder-decoder looks
    pyplay.ui.beam(model, "abc", beam_size=3, task=task)  # beam search, step by step

Importing ``pyplay.ui`` itself is light: Panel and Bokeh are imported on first use.
"""

from __future__ import annotations

from typing import Any

__all__ = ["attention", "beam", "gates"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from pyplay.ui import notebook

        return getattr(notebook, name)
    raise AttributeError(f"module 'pyplay.ui' has no attribute {name!r}")
