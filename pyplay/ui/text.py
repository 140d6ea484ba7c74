"""Text that stays text: :class:`Text`, the pane every lesson uses for status lines, outputs,
samples and names.

Panel 1.7's ``pn.pane.Str`` wraps its text in ``<pre>`` and hands it to the page as HTML
without escaping it, so a learner's prompt, a decoded output or a saved model's name holding
``<img src=x onerror=...>`` would be rendered (and run) as HTML. :class:`Text` escapes first;
otherwise it is a ``Str`` (same model, same look, bound parameters and functions work).
"""

from __future__ import annotations

import html
from typing import Any, ClassVar

import panel as pn
from panel.util import escape

__all__ = ["Text"]


class Text(pn.pane.Str):
    """A ``pn.pane.Str`` that shows ``object`` as plain, escaped text.

    Examples
    --------
    >>> Text("<b>not bold</b>")._transform_object("<b>x</b>")["object"]
    '&lt;pre&gt;&amp;lt;b&amp;gt;x&amp;lt;/b&amp;gt;&lt;/pre&gt;'
    """

    priority: ClassVar[float] = 0  # never picked by pn.panel() for arbitrary objects

    def _transform_object(self, obj: Any) -> dict[str, Any]:
        if obj is None or (isinstance(obj, str) and obj == ""):
            inner = " "
        else:
            inner = html.escape(str(obj))
        return {"object": escape(f"<pre>{inner}</pre>")}  # escape(): Panel's transport form
