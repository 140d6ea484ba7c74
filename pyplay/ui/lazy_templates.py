"""Jinja2 templates compiled when first used, not when a module that names them is imported.

Panel compiles about twenty Jinja2 templates when it is imported (``panel.io.resources``,
``panel.io.notebook``, ``panel.io.convert``: the HTML page, the notebook's JavaScript, the
login and error pages, the service worker of ``panel convert``). The playground's page uses
none of them: its worker hands the document to the page as JSON. Compiling them is about
0.12 s of the page's import stage in Pyodide (measured in Node, eight runs by turns: 1.50 s
against 1.62 s, medians). Bokeh already loads its own templates lazily
(``bokeh.core.templates``); :func:`compiled_when_used` does the same for Panel's during the
start's import (``web/site/boot.py``).

Inside the ``with`` block, ``jinja2.Environment.get_template`` returns a
:class:`LazyTemplate`, which loads and compiles the template (with the arguments given) on the
first attribute asked of it and then hands every attribute on: ``render``, ``module``,
``blocks``. The one difference a caller can see is *when* a missing or broken template
raises: at first use instead of at ``get_template``. After the block ``get_template`` is
Jinja2's own again.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import jinja2


class LazyTemplate:
    """A stand-in for ``environment.get_template(name, parent, globals)`` that makes it when
    an attribute is first asked for, and from then on is that template.

    Parameters
    ----------
    environment : jinja2.Environment
        The environment whose ``get_template`` was called.
    name, parent, globals
        ``get_template``'s arguments, passed on unchanged.
    """

    __slots__ = ("_call", "_template")

    def __init__(
        self,
        environment: jinja2.Environment,
        name: Any,
        parent: str | None = None,
        globals: Any = None,
    ) -> None:
        self._call = (environment, name, parent, globals)
        self._template: jinja2.Template | None = None

    @property
    def compiled(self) -> bool:
        """Whether the template was made (an attribute of it was asked for)."""
        return self._template is not None

    def template(self) -> jinja2.Template:
        """The template itself, made now if it was not yet."""
        if self._template is None:
            environment, name, parent, globals_ = self._call
            self._template = _JINJA_GET_TEMPLATE(environment, name, parent, globals_)
        return self._template

    def __getattr__(self, name: str) -> Any:  # only attributes not of this class
        return getattr(self.template(), name)

    def __repr__(self) -> str:
        state = "compiled" if self.compiled else "not compiled yet"
        return f"<LazyTemplate {self._call[1]!r} ({state})>"


_JINJA_GET_TEMPLATE = jinja2.Environment.get_template


def _get_template_later(
    self: jinja2.Environment, name: Any, parent: str | None = None, globals: Any = None
) -> Any:
    """``Environment.get_template`` inside :func:`compiled_when_used`: a template object
    already made (Jinja2 passes those through) stays itself; a name becomes a
    :class:`LazyTemplate`."""
    if isinstance(name, jinja2.Template | LazyTemplate):
        return name
    return LazyTemplate(self, name, parent, globals)


@contextmanager
def compiled_when_used() -> Iterator[None]:
    """Within the block, templates asked of any ``jinja2.Environment`` by name are compiled
    when first used (:class:`LazyTemplate`); Jinja2's ``get_template`` is put back after it,
    also when the block raises."""
    jinja2.Environment.get_template = _get_template_later  # type: ignore[method-assign]
    try:
        yield
    finally:
        jinja2.Environment.get_template = _JINJA_GET_TEMPLATE  # type: ignore[method-assign]
