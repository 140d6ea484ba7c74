"""The "Image attention" lesson in the browser: train the two captioners, the attention
maps over the scene (one lit copy per word) change while training runs, no click in between;
switch to glimpses, train, and the glimpse path moves; the console stays free of warnings and
errors."""

from __future__ import annotations

import re

import pytest
from test_lesson_glimpse import SOURCE

from browserkit import visible_button, wait_for

SHARED_PAGE = True  # the session's shared page, with new lessons for this module (conftest.py)

pytestmark = pytest.mark.browser

CSS = "pyplay-images-status"


def status(page) -> tuple[int, str]:
    text = page.locator(f".{CSS} pre").inner_text()
    return int(re.search(r"Step (\d+)", text).group(1)), text


def fingerprint(page, name: str, column: str) -> str:
    data = page.evaluate(SOURCE, name)
    assert data is not None, name
    return repr(data[column])


def test_train_and_watch_where_each_word_looks_then_the_glimpses(ready_page, page_log):
    page = ready_page
    warnings: list[str] = []
    page.on("console", lambda m: m.type == "warning" and warnings.append(m.text))
    page.get_by_text("Image attention", exact=True).first.click()
    page.locator(f".{CSS} pre").wait_for(timeout=60_000)
    tiles = page.evaluate(SOURCE, "images-captions")
    assert tiles is not None and len(tiles["x"]) >= 2  # a tile per word, two captioners
    first = fingerprint(page, "images-captions", "image")
    visible_button(page, "Train").click()
    wait_for(page, lambda: status(page)[0] >= 3, "three training steps", 120)
    wait_for(
        page,
        lambda: fingerprint(page, "images-captions", "image") != first,
        "the attention maps changing while training",
        60,
    )
    visible_button(page, "Pause").click()
    _, text = status(page)
    assert "soft loss" in text and "hard loss" in text and "accuracy" in text
    visible_button(page, "Glimpses").click()
    wait_for(page, lambda: status(page)[0] == 0, "a new glimpse model", 60)
    path = fingerprint(page, "images-glimpses", "x")
    visible_button(page, "Train").click()
    wait_for(page, lambda: status(page)[0] >= 100, "100 glimpse steps", 200)
    wait_for(
        page,
        lambda: fingerprint(page, "images-glimpses", "x") != path,
        "the glimpse path moving while training",
        60,
    )
    visible_button(page, "Pause").click()
    assert "last glimpse on the digit" in status(page)[1]
    assert page_log.errors == [] and warnings == [], warnings[:5]
