"""The lecture's prefix-tree beam search in the page (Sequence to sequence lesson): step it,
read the accumulated probabilities the tree and its listing show (the slide's numbers), run it
to the result, and see greedy lose to a wider beam on DOCK BUYS MAN / DOG BITES MAN, with no
console warning or error."""

from __future__ import annotations

import re

import pytest

from browserkit import wait_for

pytestmark = pytest.mark.browser

NODES = """() => {
  for (const m of window.pyplay.document.all_models) {
    if (m.name !== "prefix-tree-nodes") continue;
    const d = m.data;
    const get = (name) => Array.from(d instanceof Map ? d.get(name) : d[name]);
    const out = {};
    get("node").forEach((node, i) => { out[node] = get("value")[i]; });
    return out;
  }
  return null;
}"""


def shown(page) -> dict[str, str]:
    """Node -> the probability label the tree figure draws."""
    return page.evaluate(NODES) or {}


def test_step_the_prefix_tree_and_compare_greedy_with_beam(ready_page, page_log):
    page = ready_page
    messages: list[str] = []
    page.on(
        "console",
        lambda m: m.type in ("warning", "error") and messages.append(f"{m.type}: {m.text}"),
    )
    page.get_by_text("Sequence to sequence", exact=True).first.click()
    step = page.get_by_role("button", name="Tree: Step", exact=True)
    step.wait_for(timeout=90_000)
    listing = page.locator(".pyplay-prefix-tree pre")
    listing.filter(has_text="Frame 0 of 4").wait_for(timeout=30_000)
    step.click()
    listing.filter(has_text="Frame 1 of 4").wait_for(timeout=30_000)
    wait_for(page, lambda: shown(page).get("A") == "0.4", "frame 1 in the tree", 30)
    nodes = shown(page)
    assert (nodes["A"], nodes["AE"], nodes["B"]) == ("0.4", "0.06", "0.34")  # the slide's table
    step.click()
    listing.filter(has_text="Frame 2 of 4").wait_for(timeout=30_000)
    wait_for(page, lambda: shown(page).get("A N") == "0.16", "frame 2 in the tree", 30)
    nodes = shown(page)
    assert (nodes["A R"], nodes["A N"], nodes["AE N"]) == ("0.08", "0.16", "0.03")
    text = listing.inner_text()
    for node, p in (("A R", "0.08"), ("A N", "0.16"), ("AE N", "0.03")):
        assert re.search(rf"^{node} +{re.escape(p)}  ", text, re.M), (node, p, text)
    page.get_by_role("button", name="Tree: Back", exact=True).click()
    listing.filter(has_text="Frame 1 of 4").wait_for(timeout=30_000)
    page.get_by_role("button", name="Tree: Run", exact=True).click()
    listing.filter(has_text="Result (best of the final nodes): A N D, p = 0.0864").wait_for(
        timeout=30_000
    )
    assert shown(page)["A N D"] == "0.096, EOS 0.0864"
    # greedy against beam on the DOCK / DOG decoder
    sentences = page.locator(".pyplay-dock-dog pre")
    assert "result: DOCK BUYS MAN  p = 0.168" in sentences.inner_text()
    slider = page.locator(".bk-input-group", has_text="Sentence beam width").locator(".noUi-handle")
    slider.first.focus()
    page.keyboard.press("ArrowRight")  # width 2
    sentences.filter(has_text="result: DOG BITES MAN  p = 0.288").wait_for(timeout=30_000)
    assert "greedy (beam width 1)" in sentences.inner_text()
    assert page_log.errors == []
    assert messages == []
