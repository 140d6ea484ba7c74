"""The sequence-to-sequence lesson in the browser: train briefly, decode, see the heatmap,
step through beam search."""

from __future__ import annotations

import re

import pytest

from browserkit import settled, wait_for

pytestmark = pytest.mark.browser
SHARED_PAGE = True  # the session's shared page, with new lessons for this module (conftest.py)

MAP = """() => {
  for (const m of window.pyplay.document.all_models) {
    if (m.name !== "seq2seq-attention") continue;  // the lesson's map (others have weights too)
    const d = m.data;
    const get = (name) => Array.from(d instanceof Map ? d.get(name) : d[name]);
    return {weight: get("weight"), y: get("y"), src: get("src")};
  }
  return null;
}"""


def rows(page, source: str) -> list[list[float]]:
    """The heatmap's rows once it shows a decoding of ``source`` (while training it shows a
    training example: then, and before the first row, no rows)."""
    shown = page.evaluate(MAP)
    if not shown or not shown["weight"]:
        return []
    cells = list(zip(shown["y"], shown["src"], shown["weight"], strict=True))
    if "".join(src for y, src, _ in cells if y == 0)[: len(source)] != source:
        return []
    return [[w for y, _, w in cells if y == row] for row in sorted(set(shown["y"]))]


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
    # issue 19: the term "teacher forcing" is shown, on the scheduled-sampling slider
    sampling = page.get_by_text(re.compile(r"Scheduled sampling \(0 = teacher forcing\)"))
    # in "More settings", which the test page opens as it is drawn (browserkit.OPEN_SECTIONS)
    sampling.locator("visible=true").first.wait_for(timeout=30_000)
    assert sampling.locator("visible=true").count() == 1
    page.get_by_role("button", name="Train", exact=True).click()
    wait_for(page, lambda: status(page)[0] >= 80, "80 training steps")
    page.get_by_role("button", name="Pause", exact=True).click()
    steps, loss = settled(lambda: status(page))  # the slice under way at the click ends
    assert loss is not None and loss < 0.8 * first, (first, loss, steps)
    source = page.get_by_role("textbox", name="Source", exact=True)
    source.fill("abcde")
    page.get_by_role("button", name="Translate").click()
    page.locator(".pyplay-output pre", has_text="Output:").wait_for(timeout=30_000)
    wait_for(page, lambda: len(rows(page, "abcde")) >= 2, "two heatmap rows", 30)
    shown = rows(page, "abcde")
    assert all(0.0 <= w <= 1.0 for row in shown for w in row)
    assert all(abs(sum(row) - 1.0) < 1e-3 for row in shown)  # each step's weights sum to one
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
    wait_for(page, lambda: len(rows(page, "abcd")) >= 1, "the first heatmap row", 30)
    assert abs(sum(rows(page, "abcd")[0]) - 1.0) < 1e-3
    assert page_log.errors == []
