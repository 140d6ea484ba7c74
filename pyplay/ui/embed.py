"""Widgets for other people's pages: one lesson, or one look-inside view, on its own.

A course page embeds a widget in one of two ways (see the README, "Embed it"):

- an ``<iframe>`` of the site with ``?embed=<widget>&<settings>`` in its address
  (``web/site/index.html`` then renders only that widget);
- ``<div data-pyplay-widget="attention" data-task="reverse"></div>`` plus one ``<script
  src=".../embed.js">``: every such element of the host page is filled by one shared Python
  runtime (``web/site/embed.js``).

Both end up in :func:`create_embed`, which builds one Panel object per requested widget. The
widget names form a fixed table (:data:`WIDGETS`, read from the lessons' specs); settings are
checked exactly like the page address's (:mod:`pyplay.ui.urlstate`), and anything wrong becomes
a message in the widget, never an exception. Nothing given is evaluated or rendered as HTML.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

import panel as pn

from pyplay.ui import model_walk
from pyplay.ui.lessons import LESSONS, LessonSpec
from pyplay.ui.lessons.spec import load
from pyplay.ui.style import use_page_style
from pyplay.ui.text import Text
from pyplay.ui.training import message_alert
from pyplay.ui.urlstate import apply_settings, parse_query
from pyplay.ui.workbench import fit_width

__all__ = ["MAX_WIDGETS", "WIDGETS", "Widget", "create_embed", "widget_head", "widget_view"]

MAX_WIDGETS = 24  # widgets one host page may ask one runtime for (every kind fits)
HEIGHT_RANGE = (120, 4000)  # pixels, for a host-set height


@dataclass(frozen=True)
class Widget:
    """One embeddable widget: the lesson it comes from (its settings are that lesson's), a
    title, and the ``"module:function"`` (in the lesson's folder) laying out the part of the
    lesson view it shows (None: the whole lesson)."""

    spec: LessonSpec
    title: str
    layout: str | None = None


def widget_head(view: Any, *extra: Any) -> list[Any]:
    """The message, Train/Pause/Step/Reset and the status line every widget starts with."""
    status = Text(view.state.param.status, css_classes=["pyplay-widget-status"])
    return [message_alert(view.state), pn.Row(view.session.buttons(), *extra), status]


# name -> widget: every lesson, then the parts of lessons; a fixed table: a page can only
# pick among these
WIDGETS: dict[str, Widget] = {
    **{spec.key: Widget(spec, spec.title) for spec in LESSONS},
    **{e.name: Widget(spec, e.title, e.layout) for spec in LESSONS for e in spec.widgets},
}


def _problem(text: str) -> pn.viewable.Viewable:
    """A widget that could not be made: its message, as text (never HTML)."""
    return pn.pane.Alert(
        html.escape(text),
        alert_type="danger",
        sizing_mode="stretch_width",
        css_classes=["pyplay-widget", "pyplay-widget-problem"],
    )


def _query(key: str, settings: Mapping[str, Any]) -> str:
    pairs = [("lesson", key)] + [(str(k), str(v)) for k, v in settings.items()]
    return urlencode(pairs, quote_via=quote)


def widget_view(
    name: str, settings: Mapping[str, Any] | None = None, height: int | None = None
) -> tuple[Any, pn.viewable.Viewable]:
    """Build widget ``name`` with ``settings`` (address-style values, checked as the page
    address's are).

    Returns
    -------
    view : the lesson view behind the widget (``view.state`` is its lesson state)
    panel : what the page shows; settings that were not applied are a warning in it

    Raises
    ------
    ValueError
        ``name`` is not one of :data:`WIDGETS`, or ``height`` is out of range.
    """
    if name not in WIDGETS:
        raise ValueError(f"widget must be one of {', '.join(WIDGETS)}, got {name!r}")
    if height is not None and not HEIGHT_RANGE[0] <= height <= HEIGHT_RANGE[1]:
        lo, hi = HEIGHT_RANGE
        raise ValueError(f"height must be from {lo} to {hi} pixels, got {height!r}")
    widget = WIDGETS[name]
    view = widget.spec.view_class()()
    messages: list[str] = []
    settings = dict(settings or {})
    source = settings.pop("src", None)
    if settings or source is not None:
        parsed = parse_query(_query(widget.spec.key, settings))
        messages += [m.replace("Address: ", "") for m in parsed.messages]
        messages += apply_settings(view.state, parsed.settings)
        box = getattr(view, "source_box", None)
        if source is not None and box is not None and widget.spec.source:
            source = str(source)[:200]
            box.param.update(value=source, value_input=source)
    if messages:
        view.state.notify(" ".join(messages), "warning")
    if widget.layout is None:
        body = view.panel()  # its plots described (LessonPage.described)
    else:
        body = view.described(load(widget.layout, widget.spec.key)(view))
    fit_width(body)  # a fixed-width figure shrinks to a narrow container (from 320 px)
    for box in body.select(pn.widgets.TextInput):  # so does a text box (Panel's are 300 px)
        width = box.width or 300
        box.param.update(width=None, sizing_mode="stretch_width", max_width=width)
    options: dict[str, Any] = {"sizing_mode": "stretch_width", "css_classes": ["pyplay-widget"]}
    if height is not None:
        options.update(height=height, scroll=True)
    return view, pn.Column(body, **options)


def _height(raw: Any) -> int | None:
    if raw is None or raw == "":
        return None
    try:
        return int(str(raw).removesuffix("px"))
    except ValueError:
        raise ValueError(f"height must be a number of pixels, got {str(raw)[:40]!r}") from None


def create_embed(widgets: Any = ()) -> list[pn.viewable.Viewable]:
    """One Panel object per requested widget, in order (what ``web/site/embed.js`` and the
    ``?embed=`` page render; each becomes one root of the page's document).

    Parameters
    ----------
    widgets : sequence of mappings
        Each ``{"widget": name, "settings": {key: value, ...}, "height": pixels or None}``;
        ``settings`` are address-style (``{"task": "reverse", "hidden_size": "32"}``). A
        request that cannot be met becomes a message in its place.
    """
    # no signatures for IDEs on Panel's ~280 classes: a page asks for none (0.03 s of its start)
    pn.extension(notifications=False, apply_signatures=False)
    model_walk.install()  # each change of the page's model graph walks it faster
    use_page_style()  # the playground's CSS: readable colours, focus ring, layouts that fit
    if not isinstance(widgets, list | tuple):
        return [_problem(f"widgets must be a list, got {type(widgets).__name__}")]
    out: list[pn.viewable.Viewable] = []
    for k, request in enumerate(widgets):
        if k >= MAX_WIDGETS:
            out.append(_problem(f"At most {MAX_WIDGETS} pyplay widgets on one page."))
            continue
        try:
            if not isinstance(request, Mapping):
                raise TypeError(f"a widget request must be a mapping, got {type(request).__name__}")
            settings = request.get("settings") or {}
            if not isinstance(settings, Mapping):
                raise TypeError(f"settings must be a mapping, got {type(settings).__name__}")
            name = str(request.get("widget", ""))
            out.append(widget_view(name, settings, _height(request.get("height")))[1])
        except (ValueError, TypeError) as err:
            out.append(_problem(f"pyplay widget {k + 1}: {err}"))
    return out
