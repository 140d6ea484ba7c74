"""The lectures' options in the page (issues 19 and 20), in one page session: feed-forward layers
before the recurrent stack, set by the page address, train in the recurrent lesson, and its
residual comparison trains a plain and a residual stack; the CTC lesson trains one-way,
time-delay and bidirectional nets beside its model, with their label error rates; every
positional encoding the Transformers lesson offers draws its panel under its own title, and
the concatenated one trains; no console warning or error."""

from __future__ import annotations

import re

import pytest
from test_lesson_rnn_variants import set_checkbox  # Bokeh's checkbox, set and seen in the address

from browserkit import follow_link, wait_for, wait_step
from pyplay.ui.lessons.transformer.view import POSITION_TEXT

pytestmark = pytest.mark.browser
SHARED_PAGE = True  # the session's shared page, with new lessons for this module (conftest.py)

TEXTS = """() => Array.from(window.pyplay.document.all_models)
  .map((m) => m.text).filter((t) => typeof t === "string")"""


def visible_button(page, name: str):
    return page.get_by_role("button", name=name, exact=True).locator("visible=true").first


def transformer_step(page) -> int:
    found = re.search(r"Step (\d+)", page.locator(".pyplay-transformer-status pre").inner_text())
    return int(found.group(1)) if found else 0


def test_feedforward_layers_and_every_positional_encoding(ready_page, page_log):
    page = ready_page
    warnings: list[str] = []
    page.on("console", lambda m: m.type == "warning" and warnings.append(m.text))
    follow_link(page, "?lesson=rnn&feedforward_layers=2&num_layers=3&hidden_size=8&task=copy")
    note = "It reads the input through 2 feed-forward tanh layer(s) first."
    page.get_by_text(note).first.wait_for(timeout=120_000)
    visible_button(page, "Step").click()
    wait_step(page, 1)
    visible_button(page, "Compare").click()  # the residual comparison
    progress = page.locator(".pyplay-residual-progress pre")
    wait_for(page, lambda: re.search(r"step ([1-9]\d*) of 150\. Loss over", progress.inner_text()),
             "the residual comparison training", 120)  # fmt: skip
    visible_button(page, "Pause comparison").click()
    wait_for(page, lambda: progress.inner_text().startswith("Paused"), "the comparison paused")
    assert "Loss of 3 layers, plain and residual" in page.evaluate(TEXTS)

    page.locator(".bk-tab", has_text="CTC").first.click()
    race = "Train one-way, time-delay and bidirectional nets beside it"
    page.get_by_text(race).first.wait_for(timeout=150_000)  # the lesson built
    set_checkbox(page, race, True, "compare=true")
    visible_button(page, "Train").click()
    note = page.locator(".pyplay-ctc-race-note pre")
    wait_for(
        page, lambda: "label error rate one-way" in note.inner_text(), "the race's errors", 120
    )
    visible_button(page, "Pause").click()
    assert "CTC loss on each batch (time delay D = 3)" in page.evaluate(TEXTS)

    page.locator(".bk-tab", has_text="Transformers").first.click()
    positions = page.get_by_role("combobox", name="Positions")
    positions.wait_for(timeout=150_000)  # the lesson is built when its tab is first opened
    for kind, (title, _) in POSITION_TEXT.items():
        if kind == "none":
            continue
        positions.select_option(label=title.split(" (")[0])
        wait_for(page, lambda t=title: t in page.evaluate(TEXTS), f"the {kind} panel", 60)
    assert list(POSITION_TEXT)[-2:] == ["concat", "none"]  # the loop ended on "concat"
    visible_button(page, "Step").click()
    wait_for(page, lambda: transformer_step(page) >= 1, "one step of the concatenated model", 120)
    assert page_log.errors == [] and warnings == [], (page_log.errors, warnings)
