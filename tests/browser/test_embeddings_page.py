"""The embeddings view in the Sequence to sequence lesson, in the browser: the bundled table's
analogy, neighbours and PCA map, a typed word answered beside its box, and the trained model's own
tables offered once it trains."""

from __future__ import annotations

import pytest

from browserkit import source_columns, wait_for
from pyplay.word_vectors import PEOPLE

SHARED_PAGE = True  # the session's shared page, with new lessons for this module (conftest.py)

pytestmark = pytest.mark.browser

ANALOGY = ".pyplay-emb-analogy pre"
NEAREST = ".pyplay-emb-nearest pre"


def test_analogies_neighbours_and_the_models_tables(ready_page, page_log):
    page = ready_page
    page.get_by_text("Sequence to sequence", exact=True).first.click()
    page.locator(ANALOGY).first.wait_for(timeout=60_000)
    assert page.locator(ANALOGY).inner_text().startswith("king − man + woman ≈ queen (cosine")
    assert page.locator(NEAREST).inner_text().startswith("Nearest to king: ")
    # the 2-D PCA map of the bundled table: its eight person words, spread on both axes
    shown = source_columns(page, "word", "x", "y")
    assert shown is not None and sorted(shown["word"]) == sorted(PEOPLE)
    assert max(shown["x"]) - min(shown["x"]) > 0.1 and max(shown["y"]) - min(shown["y"]) > 0.1
    c = page.get_by_role("textbox", name="+ c")
    c.fill("girl")
    c.press("Enter")
    page.locator(ANALOGY, has_text="king − man + girl ≈ princess").wait_for(timeout=30_000)
    word = page.get_by_role("textbox", name="Nearest to")
    word.fill("<i>dragon</i>")
    word.press("Enter")
    page.locator(NEAREST, has_text="word '<i>dragon</i>' is not in the table").wait_for(
        timeout=30_000
    )
    assert page.locator(".pyplay-emb-nearest i").count() == 0  # text, never HTML

    table = page.get_by_role("combobox", name="Table")
    page.locator("button:visible", has_text="Train").first.click()
    wait_for(page, lambda: len(table.locator("option").all_inner_texts()) == 3, "model tables", 60)
    page.locator("button:visible", has_text="Pause").first.click()
    source = next(o for o in table.locator("option").all_inner_texts() if "source" in o)
    table.select_option(source)
    page.locator(".pyplay-emb-title pre", has_text=source).wait_for(timeout=30_000)
    wait_for(
        page,
        lambda: sorted(source_columns(page, "word", "x", "y")["word"]) != sorted(PEOPLE),
        "the model's map",
    )
    assert page_log.errors == []
