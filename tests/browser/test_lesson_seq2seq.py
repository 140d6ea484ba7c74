"""The sequence-to-sequence lesson in the browser: train briefly, decode, see the heatmap,
step through beam search."""

from __future__ import annotations

import re
import time

import pytest

from browserkit import wait_for

pytestmark = pytest.mark.browser

WEIGHTS = """() => {
  for (const m of window.pyplay.document.all_models) {
    const d = m.data;
    if (d == null || typeof d !== "object") continue;
    const col = d instanceof Map ? d.get("weight") : d["weight"];
    if (col !== undefined) return Array.from(col);
  }
  return null;
}"""


def status(page) -> tuple[int, float | None]:
    text = page.locator(".pyplay-seq2seq-status pre").inner_text()
    step = int(re.search(r"Step (\d+)", text).group(1))
    loss = re.search(r": loss ([0-9]+\.[0-9]+)", text)
    return step, float(loss.group(1)) if loss else None


def test_train_decode_and_see_the_attention(ready_page, page_log):
    page = ready_page
    page.get_by_text("Sequence to sequence", exact=True).first.click()
    page.get_by_role("button", name="Step", exact=True).click()
    wait_for(page, lambda: status(page)[0] >= 1, "the first step")
    first = status(page)[1]
    assert first is not None and first > 1.0  # untrained: about log(13)
    page.get_by_role("button", name="Train", exact=True).click()
    wait_for(page, lambda: status(page)[0] >= 80, "80 training steps")
    page.get_by_role("button", name="Pause", exact=True).click()
    time.sleep(1.0)
    steps, loss = status(page)
    assert loss is not None and loss < 0.8 * first, (first, loss, steps)
    source = page.get_by_role("textbox", name="Source", exact=True)
    source.fill("abcde")
    page.get_by_role("button", name="Translate").click()
    page.locator(".pyplay-output pre", has_text="Output:").wait_for(timeout=30_000)
    wait_for(page, lambda: len(page.evaluate(WEIGHTS) or []) >= 5, "the first heatmap row", 30)
    wait_for(
        page, lambda: len(page.evaluate(WEIGHTS)) % 5 == 0 and len(page.evaluate(WEIGHTS)) >= 10,
        "more heatmap rows", 30,
    )  # fmt: skip
    weights = page.evaluate(WEIGHTS)
    assert all(0.0 <= w <= 1.0 for w in weights)
    assert abs(sum(weights[:5]) - 1.0) < 1e-3  # each output step's weights sum to one
    # beam search, one step at a time, on the same source
    beam = page.locator(".pyplay-beam pre")
    page.get_by_role("button", name="Beam: Step", exact=True).click()
    beam.filter(has_text="Step 1 of at most").wait_for(timeout=30_000)
    assert "live:" in beam.inner_text() and "greedy:" in beam.inner_text()
    page.get_by_role("button", name="Beam: Step", exact=True).click()
    beam.filter(has_text="Step 2 of at most").wait_for(timeout=30_000)
    page.get_by_role("button", name="Beam: Back").click()
    beam.filter(has_text="Step 1 of at most").wait_for(timeout=30_000)
    page.get_by_role("button", name="Beam: Run").click()
    beam.filter(has_text="done").wait_for(timeout=60_000)
    source.fill("xyz!")  # not in the vocabulary: a message, nothing lost
    page.get_by_role("button", name="Translate").click()
    page.get_by_text(re.compile(r"Cannot translate: the source contains .x.")).wait_for(
        timeout=20_000
    )
    assert status(page)[0] == steps
    assert page_log.errors == []


def test_bahdanau_wiring_trains_and_shows_its_attention(ready_page, page_log):
    page = ready_page
    page.get_by_text("Sequence to sequence", exact=True).first.click()
    page.get_by_role("button", name="Bahdanau", exact=True).click()
    page.get_by_text(re.compile(r"GRU encoder-decoder, Bahdanau attention")).wait_for(
        timeout=30_000
    )
    page.get_by_role("button", name="Train", exact=True).click()
    wait_for(page, lambda: status(page)[0] >= 20, "20 training steps")
    page.get_by_role("button", name="Pause", exact=True).click()
    # typed at once after the click, while the worker may still be busy: nothing is lost
    page.get_by_role("textbox", name="Source", exact=True).fill("abcd")
    page.get_by_role("button", name="Translate").click()
    page.locator(".pyplay-output pre", has_text="Output:").wait_for(timeout=30_000)
    wait_for(page, lambda: len(page.evaluate(WEIGHTS) or []) >= 4, "the first heatmap row", 30)
    weights = page.evaluate(WEIGHTS)
    assert abs(sum(weights[:4]) - 1.0) < 1e-3
    assert page_log.errors == []
