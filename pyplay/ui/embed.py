"""Widgets for other people's pages: one lesson, or one look-inside view, on its own.

A course page embeds a widget in one of two ways (see the README, "Embed it"):

- an ``<iframe>`` of the site with ``?embed=<widget>&<settings>`` in its address
  (``web/index.html`` then renders only that widget);
- ``<div data-pyplay-widget="attention" data-task="reverse"></div>`` plus one
  ``<script src=".../embed.js">``: every such element of the host page is filled by one shared
  Python runtime (``web/embed.js``).

Both end up in :func:`create_embed`, which builds one Panel object per requested widget. The
widget names form a fixed table (:data:`WIDGETS`); settings are checked exactly like the
page address's (:mod:`pyplay.ui.urlstate`), and anything wrong becomes a message in the
widget, never an exception. Nothing given is evaluated or rendered as HTML.
"""

from __future__ import annotations

import html
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

import panel as pn

from pyplay.ui.text import Text
from pyplay.ui.training import message_alert
from pyplay.ui.urlstate import LESSON_SPECS, apply_settings, parse_query

__all__ = ["MAX_WIDGETS", "WIDGETS", "Widget", "create_embed", "widget_view"]

MAX_WIDGETS = 16  # widgets one host page may ask one runtime for (every kind fits)
HEIGHT_RANGE = (120, 4000)  # pixels, for a host-set height


@dataclass(frozen=True)
class Widget:
    """One embeddable widget: the lesson view it comes from (``"module:Class"``), the key of
    its settings in :data:`pyplay.ui.urlstate.LESSON_SPECS`, a title, and the function that
    lays out the part of the lesson view it shows (None: the whole lesson)."""

    view: str
    settings: str
    title: str
    layout: Callable[[Any], pn.viewable.Viewable] | None = None


def _head(view: Any, *extra: Any) -> list[Any]:
    """The message, Train/Pause/Step/Reset and the status line every widget starts with."""
    status = Text(view.state.param.status, css_classes=["pyplay-widget-status"])
    return [message_alert(view.state), pn.Row(view.buttons(), *extra), status]


def _gates(view: Any) -> pn.viewable.Viewable:
    refresh = pn.widgets.Button(name="Refresh", width=100)
    refresh.on_click(view.refresh_inside)
    return pn.Column(
        *_head(view),
        pn.Row(view.example, refresh),
        view.heatmaps,
        sizing_mode="stretch_width",
    )


def _gradient(view: Any) -> pn.viewable.Viewable:
    compare = pn.widgets.Button(name="Compare RNN vs LSTM", width=200)
    compare.on_click(view.compare)
    return pn.Column(
        *_head(view, compare),
        pn.pane.Bokeh(view.grad_fig, sizing_mode="stretch_width"),
        sizing_mode="stretch_width",
    )


def _decode_row(view: Any) -> pn.Row:
    translate = pn.widgets.Button(name="Translate", button_type="primary", width=100)
    translate.on_click(view.translate)
    example = pn.widgets.Button(name="New example", width=120)
    example.on_click(view.new_example)
    return pn.Row(view.source_box, translate, example)


def _attention(view: Any) -> pn.viewable.Viewable:
    return pn.Column(
        *_head(view),
        _decode_row(view),
        view.output,
        pn.pane.Bokeh(view.attn_fig),
        sizing_mode="stretch_width",
    )


def _beam(view: Any) -> pn.viewable.Viewable:
    buttons = []
    for label, how in (("Start", ""), ("Step", "step"), ("Back", "back"), ("Run", "run")):
        button = pn.widgets.Button(name=f"Beam: {label}", width=110)
        button.on_click(view._beam_action(how))
        buttons.append(button)
    return pn.Column(
        *_head(view),
        _decode_row(view),
        pn.Row(view.beam_width, view.alpha),
        pn.Row(*buttons),
        view.beam_text,
        pn.pane.Bokeh(view.tree_fig, sizing_mode="stretch_width"),
        sizing_mode="stretch_width",
    )


def _heads(view: Any) -> pn.viewable.Viewable:
    return pn.Column(
        *_head(view),
        pn.Row(view.layer, view.head, view.example),
        view.head_title,
        pn.Row(pn.pane.Bokeh(view.head_fig), pn.pane.Bokeh(view.grid_fig)),
        sizing_mode="stretch_width",
    )


_RNN = "pyplay.ui.lesson_rnn:RecurrentLesson"
_SEQ2SEQ = "pyplay.ui.lesson_seq2seq:Seq2SeqLesson"
_TRANSFORMER = "pyplay.ui.lesson_transformer:TransformerLesson"

# name -> widget; a fixed table: a page can only pick among these
WIDGETS: dict[str, Widget] = {
    "rnn": Widget(_RNN, "rnn", "Recurrent networks"),
    "seq2seq": Widget(_SEQ2SEQ, "seq2seq", "Sequence to sequence"),
    "transformer": Widget(_TRANSFORMER, "transformer", "Transformers"),
    "ctc": Widget("pyplay.ui.lesson_ctc:CTCLesson", "ctc", "CTC"),
    "dynamic": Widget("pyplay.ui.lesson_dynamic:DynamicLesson", "dynamic", "Dynamic networks"),
    "textbook": Widget(  # the sub-tab of "Dynamic networks" on its own
        "pyplay.ui.textbook_seq2seq_view:TextbookSeq2SeqView", "textbook", "Textbook seq2seq"
    ),
    "timeseries": Widget(
        "pyplay.ui.lesson_timeseries:TimeSeriesLesson", "timeseries", "Time series"
    ),
    "memory": Widget("pyplay.ui.lesson_memory:MemoryLesson", "memory", "Memory"),
    "gates": Widget(_RNN, "rnn", "Gates and states over time", _gates),
    "gradient": Widget(_RNN, "rnn", "Gradient through time", _gradient),
    "attention": Widget(_SEQ2SEQ, "seq2seq", "Attention heatmap", _attention),
    "beam": Widget(_SEQ2SEQ, "seq2seq", "Beam search, step by step", _beam),
    "heads": Widget(_TRANSFORMER, "transformer", "Every attention head", _heads),
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
    module, _, cls = widget.view.partition(":")
    view = getattr(importlib.import_module(module), cls)()
    messages: list[str] = []
    settings = dict(settings or {})
    source = settings.pop("src", None)
    if settings or source is not None:
        parsed = parse_query(_query(widget.settings, settings))
        messages += [m.replace("Address: ", "") for m in parsed.messages]
        messages += apply_settings(view.state, parsed.settings)
        box = getattr(view, "source_box", None)
        if source is not None and box is not None and LESSON_SPECS[widget.settings].source:
            source = str(source)[:200]
            box.param.update(value=source, value_input=source)
    if messages:
        view.state.notify(" ".join(messages), "warning")
    body = view.panel() if widget.layout is None else widget.layout(view)
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
    """One Panel object per requested widget, in order (what ``web/embed.js`` and the
    ``?embed=`` page render; each becomes one root of the page's document).

    Parameters
    ----------
    widgets : sequence of mappings
        Each ``{"widget": name, "settings": {key: value, ...}, "height": pixels or None}``;
        ``settings`` are address-style (``{"task": "reverse", "hidden_size": "32"}``). A
        request that cannot be met becomes a message in its place.
    """
    pn.extension(notifications=False)
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
