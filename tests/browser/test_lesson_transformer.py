"""The transformer lesson in the browser: train beside the LSTM, open the heads, switch the
heads count, read the cost of attention against T, sample, and look at the character
model's embedding table."""

from __future__ import annotations

import re

import pytest

from browserkit import settled, show_character_table, source_columns, wait_for

pytestmark = pytest.mark.browser
SHARED_PAGE = True  # the session's shared page, with new lessons for this module (conftest.py)

CELLS = """() => {
  const out = [];
  for (const m of window.pyplay.document.all_models) {
    const d = m.data;
    if (d == null || typeof d !== "object") continue;
    const col = d instanceof Map ? d.get("head") : d["head"];
    if (col !== undefined) out.push(Array.from(col).length);
  }
  return out;
}"""


def status(page) -> tuple[int, float | None, float | None]:
    text = page.locator(".pyplay-transformer-status pre").inner_text()
    step = int(re.search(r"Step (\d+)", text).group(1))
    ours = re.search(r"transformer loss ([0-9.]+)", text)
    lstm = re.search(r"LSTM ([0-9.]+)", text)
    return step, *(float(m.group(1)) if m else None for m in (ours, lstm))


def test_train_beside_the_lstm_and_open_the_heads(ready_page, page_log):
    page = ready_page
    page.get_by_text("Transformers", exact=True).first.click()
    page.get_by_role("button", name="Step", exact=True).click()
    wait_for(page, lambda: status(page)[0] >= 1, "the first step")
    _, first, first_lstm = status(page)
    assert first is not None and first_lstm is not None
    page.get_by_role("button", name="Train", exact=True).click()
    wait_for(page, lambda: status(page)[0] >= 60, "60 training steps")
    page.get_by_role("button", name="Pause", exact=True).click()
    steps, loss, lstm = settled(lambda: status(page))  # the slice under way ends first
    assert loss is not None and loss < 0.8 * first, (first, loss, steps)
    assert lstm is not None
    # issue 19, attention's cost against T: 2T²d grows four times when T doubles, an LSTM
    # layer's 8Td² twice, and they cross at T = 4d + 1 (d_model = 32)
    page.locator(".pyplay-cost-note pre", has_text="From T = 129 on (T > 4d)").wait_for(
        timeout=30_000
    )
    cost = source_columns(page, "T", "scores", "lstm")  # the cost plot
    assert cost is not None and cost["T"][:2] == [1, 2] and len(cost["T"]) == 1024
    assert cost["scores"][199] == 4 * cost["scores"][99] == 4 * 2 * 100**2 * 32
    assert cost["lstm"][199] == 2 * cost["lstm"][99]
    assert cost["scores"][127] <= cost["lstm"][127] < cost["lstm"][128] < cost["scores"][128]
    # the grid holds layers x heads x T x T cells; two heads instead of four halves it
    wait_for(page, lambda: any(n > 0 for n in page.evaluate(CELLS)), "the head grid", 30)
    before = max(page.evaluate(CELLS))
    page.get_by_role("button", name="2 heads", exact=True).click()
    page.get_by_text(re.compile(r"2 layers x 2 heads")).wait_for(timeout=30_000)
    wait_for(page, lambda: max(page.evaluate(CELLS)) == before // 2, "the smaller grid", 30)
    assert status(page)[0] == 0  # a new model
    # Bokeh's checkbox: its label is a div beside the input, in the same shadow root
    label = page.get_by_text("Causal mask", exact=True)
    assert label.evaluate("e => e.getRootNode().querySelector('input').checked")
    label.evaluate("e => e.getRootNode().querySelector('input').click()")
    page.get_by_text(re.compile(r"NOT causal")).wait_for(timeout=30_000)
    assert page_log.errors == []


def test_sample_from_the_character_model(ready_page, page_log):
    page = ready_page
    page.get_by_text("Transformers", exact=True).first.click()
    task = page.locator("select:visible", has_text="Character model")
    task.wait_for(timeout=60_000)  # the lesson is built when its tab is first opened
    assert task.count() == 1  # the other lessons' task menus are on hidden tabs
    task.select_option(label="Character model")
    page.get_by_text(re.compile(r"Character model: read")).wait_for(timeout=30_000)
    # sampling needs the causal mask (the module's tests share one page: the test before
    # turned it off)
    causal = page.get_by_text("Causal mask", exact=True)
    if not causal.evaluate("e => e.getRootNode().querySelector('input').checked"):
        causal.evaluate("e => e.getRootNode().querySelector('input').click()")
        page.get_by_text(re.compile(r"New transformer: .*, causal[;,]")).wait_for(timeout=30_000)
    page.get_by_role("button", name="Generate", exact=True).click()
    out = page.locator(".pyplay-transformer-sample pre")
    wait_for(page, lambda: len(out.inner_text()) >= 200, "a sample of 200 characters", 60)
    assert out.inner_text().startswith("Alice ")
    # issue 19: the embeddings view offers the character model's table; its map shows it
    show_character_table(page, 65)
    assert page_log.errors == []
