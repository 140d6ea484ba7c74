"""The Sequence to sequence lesson's "Attention and long sentences" section in the browser:
the training lengths from the address, a short comparison, the plot drawn live, Pause; in the
same page, a deep bidirectional encoder from the address with its states by layer and
direction, and the "One shared RNN or two" curves drawn live."""

from __future__ import annotations

import re

import pytest

from browserkit import follow_link, wait_for

pytestmark = pytest.mark.browser
SHARED_PAGE = True  # the session's shared page, with new lessons for this module (conftest.py)

PLOT = """() => {
  for (const m of window.pyplay.document.all_models) {
    if (m.name !== "seq2seq-bylength") continue;  // the by-length plot's source
    const d = m.data;
    const get = (name) => (d instanceof Map ? d.get(name) : d[name]);
    return {length: Array.from(get("length")), init: Array.from(get("init")),
            attention: Array.from(get("attention"))};
  }
  return null;
}"""


def progress(page) -> str:
    return page.locator(".pyplay-bylength-progress pre").inner_text()


def test_a_short_comparison_draws_exact_match_by_length(ready_page, page_log):
    page = ready_page
    warnings: list[str] = []
    page.on("console", lambda m: m.type == "warning" and warnings.append(m.text))
    follow_link(
        page,
        "?lesson=seq2seq&hidden_size=8&batch_size=8&min_len=2&max_len=4"
        "&num_layers=2&bidirectional=true",
    )
    page.get_by_text("Attention and long sentences").wait_for(timeout=120_000)
    page.get_by_text("Reversal: read 2-4 letters").first.wait_for(timeout=30_000)
    # the lesson the address opened is still being drawn: under load its first draw kept the
    # main thread from taking the click for over 30 s (Playwright's default timeout)
    page.get_by_role("button", name="Compare", exact=True).click(timeout=120_000)
    setting = page.locator(".pyplay-bylength-setting pre")
    setting.filter(has_text="GRU cells of 8 units").wait_for(timeout=30_000)
    assert "Reversal of 2-4 letters" in setting.inner_text()
    wait_for(page, lambda: (page.evaluate(PLOT) or {}).get("length"), "the plot's first curves")
    shown = page.evaluate(PLOT)
    assert shown["length"] == [2, 3, 4, 5, 6, 7, 8]  # shortest trained to twice the longest
    assert all(0.0 <= v <= 1.0 for v in shown["init"] + shown["attention"])
    assert re.search(r"Training: step \d+ of 500", progress(page)), progress(page)
    page.get_by_role("button", name="Pause comparison").click()
    wait_for(page, lambda: progress(page).startswith("Paused: step"), "the pause")
    paused = progress(page)
    assert re.search(r"After \d+ steps, exact match at length 4: plain", paused), paused
    page.wait_for_timeout(1500)
    assert progress(page) == paused  # it stays paused
    assert "after" in page.evaluate(
        "() => Array.from(window.pyplay.document.all_models).map(m => m.text)"
        ".find(t => typeof t === 'string' && t.startsWith('Exact match by source')) || ''"
    )
    shared_and_states(page)
    assert page_log.errors == [] and warnings == [], (page_log.errors, warnings)


SHARED = """() => {
  const found = {titles: [], steps: 0, labels: []};
  for (const m of window.pyplay.document.all_models) {
    if (m.name === "seq2seq-shared") {
      const d = m.data;
      found.steps = Array.from(d instanceof Map ? d.get("step") : d.step).length;
    }
    const text = typeof m.text === "string" ? m.text : "";
    if (text.includes(" states ")) found.titles.push(text);
    const label = m.label && typeof m.label === "object" ? m.label.value : m.label;
    if (typeof label === "string" && label.includes("recurrent")) found.labels.push(label);
  }
  return found;
}"""


def shared_and_states(page) -> None:
    """Layers and the bidirectional encoder from the address; the shared comparison live."""
    page.get_by_text("2 layers, bidirectional encoder").first.wait_for(timeout=30_000)
    picker = page.locator("select").filter(has_text="layer 2, backward")
    assert picker.count() == 1
    assert "Encoder states h, layer 1, forward" in page.evaluate(SHARED)["titles"]
    picker.select_option(label="layer 2, backward")
    wait_for(
        page,
        lambda: "Encoder states h, layer 2, backward" in page.evaluate(SHARED)["titles"],
        "the encoder map's title following the picker",
    )
    page.get_by_role("button", name="Train both", exact=True).click()
    wait_for(page, lambda: page.evaluate(SHARED)["steps"] >= 3, "the shared comparison's curves")
    page.get_by_role("button", name="Pause both", exact=True).click()
    shown = page.evaluate(SHARED)
    assert len(shown["labels"]) >= 2, shown  # both curves named with their parameter counts
    progress = page.locator(".pyplay-shared-progress pre").inner_text()
    assert "One shared RNN:" in progress and "recurrent" in progress, progress
