"""Document changes to the page at a cost that does not grow with the page.

In the browser, Panel's worker link (``panel.io.pyodide._link_docs_worker``) turns every change
of the Bokeh document into a patch for the page. For each single change it builds a
``bokeh.core.serialization.Serializer`` with ``references=doc.models.synced_references``:
a set of every model of the document, and a ``Ref`` for each. With every lesson drawn into
its tab (``pyplay.ui.app.Playground.draw_ahead``) the document holds about 4,300 models, so
each change of a live redraw paid for all of them: a redraw of the recurrent lesson took
140-200 ms in the page instead of about 50 ms.

:class:`DocumentSerializer` answers the same question (is this model already in the page?)
for the models a patch actually meets, when it meets them: a model is referenced, not sent
whole, when the document holds it and it is not new since the last patch, exactly Bokeh's
``synced_references``. :func:`document_patch` is Panel's ``_process_document_events``
without the browser's buffer conversion (``web/site/boot.py`` adds it and puts the result in
Panel's place); a test checks that both give the same patch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bokeh.core.serialization import Ref, Serializer
from bokeh.document import Document
from bokeh.document.json import PatchJson
from bokeh.model import Model

__all__ = ["DocumentSerializer", "document_patch"]


class DocumentSerializer(Serializer):
    """A ``Serializer`` whose references are ``doc``'s synced models (those in the document
    and not new since the last patch), looked up per model met instead of listed up front.

    Parameters
    ----------
    doc : bokeh.document.Document
        The document whose changes are serialised.
    """

    def __init__(self, doc: Document) -> None:
        super().__init__()
        self._models = doc.models

    def _synced(self, obj: Any) -> Ref | None:
        """``obj``'s reference when the page has it already (recorded for the next ask)."""
        if not isinstance(obj, Model):
            return None
        models = self._models
        if models.get_by_id(obj.id) is not obj or obj in models._new_models:
            return None
        ref = self._references[id(obj)] = obj.ref
        return ref

    def has_ref(self, obj: Any) -> bool:
        return id(obj) in self._references or self._synced(obj) is not None

    def get_ref(self, obj: Any) -> Ref | None:
        return self._references.get(id(obj)) or self._synced(obj)


def document_patch(doc: Document, events: Sequence[Any]) -> tuple[PatchJson, Serializer]:
    """The patch of ``events`` (Bokeh document change events) for the page, and the
    serializer that made it (its ``buffers`` hold the binary parts). As Panel's
    ``_process_document_events``: the new models the patch carries are synced afterwards."""
    serializer = DocumentSerializer(doc)
    patch = PatchJson(events=serializer.encode(list(events)))
    doc.models.flush_synced(lambda model: not serializer.has_ref(model))
    return patch, serializer
