"""The recurrent-networks lesson in the browser, clicked as a person would (the gradient
norm with its clipping line, the truncated-BPTT switch of the character model and its
embeddings)."""

from __future__ import annotations

import re
import time

import pytest
from test_lesson_rnn_variants import set_checkbox  # Bokeh's checkbox, seen in the address

from browserkit import (
    fresh_model,
    settled_step,
    show_character_table,
    source_columns,
    wait_for,
    wait_step,
)

pytestmark = pytest.mark.browser
SHARED_PAGE = True  # the session's shared page, with new lessons for this module (conftest.py)

# read what Bokeh draws: lengths of data columns in the page's document
COLUMNS = """(name) => {
  const out = [];
  for (const m of window.pyplay.document.all_models) {
    const d = m.data;
    if (d == null || typeof d !== "object") continue;
    const col = d instanceof Map ? d.get(name) : d[name];
    if (col !== undefined) out.push(col);
  }
  return out;
}"""
COLUMN_LENGTHS = "(name) => (" + COLUMNS + ")(name).map((c) => c.length)"
# where the gradient-norm plot draws its clipping threshold (shown ones only)
CLIP_LINES = """() => [...window.pyplay.document.all_models]
  .filter((m) => m.name === "clip-threshold" && m.visible).map((m) => m.location)"""
# an image column holds one (H, T) array: Bokeh ships it as an NDArray with a shape
IMAGES = (
    "() => ("
    + COLUMNS
    + """)("image").map((c) => {
  const img = c[0];
  return img.shape !== undefined ? Array.from(img.shape) : [img.length, img[0].length];
})"""
)


def status(page) -> tuple[int, float | None]:
    text = page.locator(".pyplay-status pre").inner_text()
    step = int(re.search(r"Step (\d+)", text).group(1))
    loss = re.search(r": loss ([0-9]+\.[0-9]+)", text)
    return step, float(loss.group(1)) if loss else None


def test_train_makes_the_loss_fall_and_the_gates_render(ready_page, page_log):
    page = ready_page
    assert status(page)[0] == 0
    page.get_by_role("button", name="Step").click()
    wait_step(page, 1)
    first_loss = status(page)[1]
    assert first_loss is not None and first_loss > 0.05  # an untrained model
    page.get_by_role("button", name="Train").click()
    wait_step(page, 300)
    page.get_by_role("button", name="Pause", exact=True).click()  # not "Pause comparison"
    settled_step(page)  # the slice under way at the click may still end
    paused_at, loss = status(page)
    time.sleep(2.0)
    assert status(page)[0] == paused_at, "training went on after Pause"
    assert loss is not None and loss < 0.05, f"loss {loss} after {paused_at} steps"
    assert max(page.evaluate(COLUMN_LENGTHS, "loss")) == paused_at  # the curve grew
    # the gradient norm of every step, live beside it (issue 19), with the clip line at 1
    assert page.evaluate(COLUMN_LENGTHS, "grad_norm") == [paused_at]
    assert page.evaluate(CLIP_LINES) == [1.0]
    images = page.evaluate(IMAGES)  # LSTM: i, f, g, o, c, h, each (H units x T steps)
    assert [tuple(shape) for shape in images].count((32, 10)) == 6  # other lessons' images too
    assert page_log.errors == []


def test_bad_learning_rate_is_a_message_and_the_model_stays(ready_page, page_log):
    page = ready_page
    fresh_model(page)  # the shared page's model trained in the test before
    page.get_by_role("button", name="Step").click()
    wait_step(page, 1)
    field = page.get_by_role("textbox", name="Learning rate")  # the visible tab's field
    field.fill("-1")
    field.press("Enter")
    refused = r"Learning rate: expected a number from 1e-06 to 10; got -1\. Kept 0\.02\."
    page.get_by_text(re.compile(refused)).wait_for(timeout=20_000)  # next to the box
    # put back to the last good value, once the event that brought the text is handled
    # (inputs.NumberBox._refuse: the note may reach the page a moment before the box's value)
    wait_for(page, lambda: field.input_value() == "0.02", "the box put back to 0.02", 20)
    assert status(page)[0] == 1  # the trained model is still there
    # issue 19's embeddings section: a line for the adding model, no map (issue 22's start)
    page.get_by_text(re.compile(r"The Character model learns one vector")).wait_for()
    assert source_columns(page, "word", "x", "y") is None
    page.get_by_role("button", name="Step").click()
    wait_step(page, 2)
    # issue 19's truncated-BPTT control: shown for the character model only, on by default,
    # and unticked it reaches the address and keeps the model (the steps stay)
    tbptt = "Truncated BPTT (carry the state across chunks)"
    assert page.get_by_text(tbptt, exact=True).locator("visible=true").count() == 0
    page.locator("select:visible").filter(has_text="Character model").first.select_option(
        label="Character model"
    )
    box = page.get_by_text(tbptt, exact=True).locator("visible=true").first
    box.wait_for(timeout=60_000)
    wait_for(page, lambda: status(page)[0] == 0, "the new character model")
    assert box.evaluate("e => e.getRootNode().querySelector('input').checked")
    page.get_by_role("button", name="Step").click()
    wait_step(page, 1)
    # ... and the character model's table in it, one row per character, as it trains
    shown = show_character_table(page, 65)
    at = status(page)[0]
    set_checkbox(page, tbptt, False, "tbptt=false")
    page.get_by_role("button", name="Step").click()
    wait_step(page, at + 1)  # the same model, trained on from a zero state each window
    wait_for(page, lambda: source_columns(page, "word", "x")["x"] != shown["x"], "the table moved")
    assert page_log.errors == []
