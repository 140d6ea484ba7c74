"""The Sequence to sequence lesson's "Attention and long sentences" section in the browser:
the training lengths from the address, a short comparison, the plot drawn live, Pause."""

from __future__ import annotations

import re

import pytest

from browserkit import wait_for, wait_ready

pytestmark = pytest.mark.browser

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


def test_a_short_comparison_draws_exact_match_by_length(page, page_log, site_url):
    warnings: list[str] = []
    page.on("console", lambda m: m.type == "warning" and warnings.append(m.text))
    page.goto(site_url + "?lesson=seq2seq&hidden_size=8&batch_size=8&min_len=2&max_len=4")
    wait_ready(page)
    page.get_by_text("Attention and long sentences").wait_for(timeout=120_000)
    page.get_by_text("Reversal: read 2-4 letters").first.wait_for(timeout=30_000)
    page.get_by_role("button", name="Compare", exact=True).click()
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
    assert page_log.errors == [] and warnings == [], (page_log.errors, warnings)
