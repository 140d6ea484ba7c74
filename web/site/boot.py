"""Start the playground's Panel app inside Pyodide.

The page's Web Worker runs this file, and so does the build's profile run in Node
(``web/tools/profile.mjs``), which starts the app exactly as the page will and compiles the
bytecode of every module the start imports. Keep it free of anything that only one of the two
has.
"""

from __future__ import annotations

import importlib
import json
from typing import Any

_DOCUMENT: list[Any] = []  # the app's Bokeh document, once start_app made it


def import_app(app_spec: str) -> None:
    """Import the module of ``app_spec`` (``"module:function"``), and with it NumPy, Bokeh
    and Panel: a stage of its own in the page's loader."""
    importlib.import_module(app_spec.partition(":")[0])


async def start_app(app_spec: str, dist_url: str | None, options: str = "{}") -> Any:
    """Create the app named by ``app_spec`` (``"module:function"``) in a fresh Bokeh document
    and return what ``panel.io.pyodide.write_doc`` returns (docs JSON, render items, root ids).

    ``options`` is a JSON object of keyword arguments for that function (the page's embedded
    widgets, for ``pyplay.ui.embed:create_embed``). The function returns one Panel object or a
    list of them; each becomes one root of the document, which the page renders into its own
    element.

    ``dist_url`` is where Panel's CSS is served; Panel's components otherwise point their
    stylesheets at its CDN (``panel.io.resources.CDN_DIST``), which the offline site never uses.
    """
    from panel.io.pyodide import init_doc, write_doc
    from panel.io.state import state

    _patch_without_listing_every_model()
    init_doc()
    _DOCUMENT[:] = [state.curdoc]
    if dist_url:
        state.curdoc._template_variables["dist_url"] = dist_url
    module_name, _, function_name = app_spec.partition(":")
    create = getattr(importlib.import_module(module_name), function_name)
    made = create(**json.loads(options))
    for obj in made if isinstance(made, list) else [made]:
        obj.servable()
    return await write_doc()


def _patch_without_listing_every_model() -> None:
    """Panel's worker link serialises each document change with a reference for every model
    of the document (O(models) per change: a live redraw of the recurrent lesson took 140-200
    ms with every lesson drawn). Put :func:`pyplay.ui.docsync.document_patch`, the same patch
    made from the models the change meets, in place of ``_process_document_events``."""
    import panel.io.pyodide as worker_link
    import pyodide  # type: ignore[import-not-found]

    from pyplay.ui.docsync import document_patch

    def process_document_events(doc: Any, events: list[Any]) -> tuple[Any, dict[str, Any]]:
        patch, serializer = document_patch(doc, events)
        buffer_map = {b.id: pyodide.ffi.to_js(b.to_bytes()).buffer for b in serializer.buffers}
        return worker_link._serialize_buffers(patch, buffers=buffer_map), buffer_map

    worker_link._process_document_events = process_document_events


_PENDING: list[tuple[list[Any], dict[str, Any]]] = []  # changes made, not yet sent: (events,
# buffers), each serialised when it was made (a later change must not alter an earlier one:
# a curve's data replaced and then streamed into would reach the page twice)


def link_document(doc: Any, send: Any, setter: str | None = None) -> None:
    """Send ``doc``'s changes to the page through ``send(patch, buffers, msg_id)``, as
    Panel's ``_link_docs_worker`` does, but the changes one piece of work makes as one patch
    (:func:`flush_patches`): a live redraw's six heatmaps were 18 messages, each with its own
    repaint in the page. Changes made by the page itself (``setter``) are not sent back."""
    import asyncio

    import panel.io.pyodide as worker_link
    from bokeh.events import DocumentReady

    def on_change(event: Any) -> None:
        if setter is not None and getattr(event, "setter", None) == setter:
            return
        patch, buffers = worker_link._process_document_events(doc, [event])
        if not _PENDING:  # the first change since the last patch: send after this work
            asyncio.get_event_loop().call_soon(flush_patches)
        _PENDING.append((list(patch["events"]), buffers))

    _SEND[:] = [send]
    doc.on_change(on_change)
    doc.unhold()
    doc.callbacks.trigger_event(DocumentReady())


_SEND: list[Any] = []  # the page's ``sendPatch``, once linked


def flush_patches() -> None:
    """Send the changes made since the last patch as one patch, in the order they were made.
    The worker calls it after each message from the page it handled (so the page's change
    is answered before the worker says it is idle); otherwise the event loop does, once the
    work under way (a slice of training, a job) hands it back."""
    if not _PENDING or not _SEND:
        return
    import js  # type: ignore[import-not-found]
    import panel.io.pyodide as worker_link
    import pyodide  # type: ignore[import-not-found]

    events = [e for part, _ in _PENDING for e in part]
    buffers = {k: v for _, part in _PENDING for k, v in part.items()}
    _PENDING.clear()
    patch = pyodide.ffi.to_js({"events": events}, dict_converter=worker_link._dict_converter)
    _SEND[0](patch, js.Map.new(pyodide.ffi.to_js(buffers)), None)


def apply_patch(patch: Any) -> None:
    """Apply a document patch from the page (a JS object) at once.

    The worker calls this synchronously for every message, so two patches that arrive close
    together are applied one after the other, each exactly once (passing them through a shared
    global and ``runPythonAsync``, which yields before running, could apply the second twice
    and lose the first: a click lost while the worker was busy).
    """
    from panel.io.pyodide import _convert_json_patch
    from panel.io.state import state

    try:
        state.curdoc.apply_json_patch(_convert_json_patch(patch), setter="js")
    finally:
        flush_patches()  # what the change made, before the worker says it is idle


def run_later() -> int:
    """Run the next job the app queued for after the first render (:mod:`pyplay.ui.later`)
    in the app's document, and return how many remain (0: all done).

    The page's worker calls it after the page reported 'rendered', one job at a time (each
    after the first once the page is quiet): Panel's worker link sends the changes a job makes
    to the page, and messages from the page (a click) are handled between two jobs.
    """
    from panel.io.state import set_curdoc

    from pyplay.ui import later

    with set_curdoc(_DOCUMENT[0] if _DOCUMENT else None):
        later.run_next()
    flush_patches()
    return later.pending()


def draw_ahead() -> bool:
    """Draw the next lesson built into its hidden tab (:func:`pyplay.ui.later.draw_next`)
    in the app's document; False when there was none left. The page's worker paces the
    calls (one at a time, when the page is idle and nothing else is going on)."""
    from panel.io.state import set_curdoc

    from pyplay.ui import later

    with set_curdoc(_DOCUMENT[0] if _DOCUMENT else None):
        drawn = later.draw_next() is not None
    flush_patches()
    return drawn
