"""A live redraw changes values, never the set of models: in the page's document, which holds
every lesson once they are drawn ahead, a new model makes Bokeh walk all of them again
(``DocumentModelManager.recompute``), about 2 s in the page for the seq2seq lesson's first
redraw when its axes got their FixedTickers then."""

from __future__ import annotations

from typing import Any

import pytest
from bokeh.document import Document
from bokeh.document import models as document_models
from panel.io.state import set_curdoc

from pyplay.ui import app


@pytest.mark.slow
def test_no_lesson_adds_models_to_the_page_while_it_trains(monkeypatch: pytest.MonkeyPatch) -> None:
    recomputed: list[str] = []
    current = ["start"]
    original = document_models.DocumentModelManager.recompute

    def counted(self: Any) -> None:
        recomputed.append(current[0])
        original(self)

    monkeypatch.setattr(document_models.DocumentModelManager, "recompute", counted)
    playground = app.Playground()
    doc = Document()
    with set_curdoc(doc):
        doc.add_root(playground.tabs.get_root(doc))
        for title in app.LESSONS:  # as the page does after its first render
            playground.prepare(title)
        while playground.draw_ahead() is not None:
            pass
        assert playground.drawn == set(app.LESSONS)  # every lesson in the document
        for title in app.LESSONS:
            view = playground.open(playground.titles.index(title))
            if not hasattr(view, "after_training"):
                continue
            current[0] = title
            recomputed.clear()
            for _ in range(2):  # the first redraw and the next
                view.state.train(steps=2)
                view.after_training()
            assert recomputed == [], f"{title}: a redraw added models {len(recomputed)} times"
