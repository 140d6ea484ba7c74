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
    and Panel: a stage of its own in the page's loader. The Jinja2 templates Panel compiles
    when imported are compiled when first used instead (:mod:`pyplay.ui.lazy_templates`)."""
    from pyplay.ui.lazy_templates import compiled_when_used

    with compiled_when_used():
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


def apply_patch(patch: Any) -> None:
    """Apply a document patch from the page (a JS object) at once.

    The worker calls this synchronously for every message, so two patches that arrive close
    together are applied one after the other, each exactly once (passing them through a shared
    global and ``runPythonAsync``, which yields before running, could apply the second twice
    and lose the first: a click lost while the worker was busy).
    """
    from panel.io.pyodide import _convert_json_patch
    from panel.io.state import state

    state.curdoc.apply_json_patch(_convert_json_patch(patch), setter="js")


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
    return later.pending()


def draw_ahead() -> bool:
    """Draw the next lesson built into its hidden tab (:func:`pyplay.ui.later.draw_next`)
    in the app's document; False when there was none left. The page's worker paces the
    calls (one at a time, when the page is idle and nothing else is going on)."""
    from panel.io.state import set_curdoc

    from pyplay.ui import later

    with set_curdoc(_DOCUMENT[0] if _DOCUMENT else None):
        return later.draw_next() is not None
