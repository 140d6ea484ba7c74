"""The lecture's prefix-tree beam search in the page (Sequence to sequence lesson): step it,
read the accumulated probabilities the tree and its listing show (the slide's numbers), run it
to the result, and see greedy lose to a wider beam on DOCK BUYS MAN / DOG BITES MAN, with no
console warning or error."""

from __future__ import annotations

import re
import time

import pytest

from browserkit import wait_for

pytestmark = pytest.mark.browser
SHARED_PAGE = True  # the session's shared page, with new lessons for this module (conftest.py)

NODES = """() => {
  for (const m of window.pyplay.document.all_models) {
    if (m.name !== "prefix-tree-nodes") continue;
    const d = m.data;
    const get = (name) => Array.from(d instanceof Map ? d.get(name) : d[name]);
    const out = {};
    const value = get("value"), ended = get("ended");
    get("node").forEach((node, i) => { out[node] = `${value[i]} ${ended[i]}`.trim(); });
    return out;
  }
  return null;
}"""


def shown(page) -> dict[str, str]:
    """Node -> the probability labels the tree figure draws (and the one after EOS)."""
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
    assert shown(page)["A N D"] == "0.096 EOS 0.0864"
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


PAIRS = "the cat\tle chat\nthe dog\tle chien\na cat\tun chat\na dog\tun chien\nthe cats\tles chats"
TARGET_WORDS = {"le", "un", "les", "chat", "chien", "chats"}


def test_beam_held_to_the_words_of_your_targets(ready_page, page_log):
    page = ready_page
    messages: list[str] = []
    page.on("console", lambda m: m.type == "warning" and messages.append(m.text))
    page.get_by_text("Sequence to sequence", exact=True).first.click()
    box = page.get_by_role("textbox", name="Your pairs (source<TAB>target per line)")
    box.fill(PAIRS)
    page.get_by_role("button", name="Use these pairs", exact=True).click()
    page.get_by_text("Using your 5 pairs.").first.wait_for(timeout=60_000)
    page.get_by_role("textbox", name="Source", exact=True).fill("a dog")
    # Bokeh's checkbox: its label is a div beside the input, in the same shadow root
    label = page.get_by_text("Only words of your targets (lexicon)", exact=True).first
    label.evaluate("e => e.getRootNode().querySelector('input').click()")
    assert label.evaluate("e => e.getRootNode().querySelector('input').checked")
    time.sleep(0.5)  # the value reaches Python before the click on Run
    page.get_by_role("button", name="Beam: Run", exact=True).click()
    beam = page.locator(".pyplay-beam pre")
    beam.filter(has_text="done").wait_for(timeout=60_000)
    text = beam.inner_text()
    assert "only the 6 words of the targets (lexicon)" in text, text
    best = re.search(r"done: best '([^']*)'", text)
    assert best is not None, text
    words = best.group(1).removesuffix(" <eos>").split(" ")
    assert words and set(words) <= TARGET_WORDS, words  # untrained, yet only lexicon words
    assert page_log.errors == []
    assert messages == []
