"""The transformer lesson's encoder-decoder in the browser: switch to it, train it beside the
LSTM with attention, see the cross-attention map follow the model without another click, pick
another head, decode a typed source with both models; no console warning or error."""

from __future__ import annotations

import re
import time

import pytest

from browserkit import BUTTON_PROBLEMS, follow_link, section_header, wait_for

SHARED_PAGE = True  # the session's shared page, with new lessons for this module (conftest.py)

pytestmark = pytest.mark.browser

MAP = """(name) => {
  for (const m of window.pyplay.document.all_models) {
    if (m.name !== name) continue;
    const d = m.data;
    return Array.from(d instanceof Map ? d.get("weight") : d["weight"]);
  }
  return null;
}"""


def status(page) -> tuple[int, bool]:
    """The step and whether the LSTM beside it has a loss."""
    text = page.locator(".pyplay-transformer-status pre").inner_text()
    found = re.search(r"Step (\d+)", text)
    return (int(found.group(1)) if found else 0), "LSTM" in text


def test_encoder_decoder_attention_follows_training(ready_page, page_log):
    page = ready_page
    warnings: list[str] = []
    page.on("console", lambda m: m.type in ("warning", "error") and warnings.append(m.text))
    page.get_by_text("Transformers", exact=True).first.click()
    arch = page.locator("select:visible", has_text="Encoder-decoder (pairs)")
    arch.wait_for(timeout=60_000)  # the lesson is built when its tab is first opened
    arch.select_option(label="Encoder-decoder (pairs)")
    page.get_by_text(re.compile(r"New transformer encoder-decoder")).wait_for(timeout=60_000)
    assert page.locator("select:visible", has_text="Dates to ISO").count() == 1  # the pair task
    section_header(page, "Encoder-decoder attention").wait_for(timeout=30_000)
    wait_for(page, lambda: page.evaluate(MAP, "tf-cross-attention"), "the cross-attention map")
    untrained = page.evaluate(MAP, "tf-cross-attention")
    assert page.evaluate(MAP, "tf-encoder-attention") and page.evaluate(MAP, "tf-decoder-attention")
    page.get_by_role("button", name="Train", exact=True).click()
    wait_for(page, lambda: status(page)[0] >= 3, "three training steps", 120)
    at = status(page)[0]
    wait_for(
        page,
        lambda: page.evaluate(MAP, "tf-cross-attention") != untrained,
        "the cross-attention map changing while training",
        60,
    )
    assert status(page)[0] >= at  # the same run: no click in between
    assert status(page)[1]  # the LSTM beside it trains too
    page.get_by_role("button", name="Pause", exact=True).click()
    time.sleep(1.0)
    four = page.locator("option", has_text=re.compile(r"^4$"))
    head = page.locator("select:visible").filter(has=four)  # 4 heads: the Head menu
    assert head.count() == 1
    head.select_option(label="2")
    title = page.locator(".pyplay-pairs-title pre")
    wait_for(page, lambda: title.inner_text().startswith("Layer 1, head 2, pair 0"), "head 2")
    page.get_by_role("button", name="Decode", exact=True).click()
    out = page.locator(".pyplay-pairs-output pre")
    wait_for(page, lambda: "LSTM with attention:" in out.inner_text(), "both outputs", 30)
    assert out.inner_text().startswith("Transformer:")
    assert page_log.errors == [] and warnings == []


@pytest.mark.parametrize(("width", "height"), [(1280, 800), (768, 1024)])
def test_the_encoder_decoder_view_fits_the_window(ready_page, page_log, width, height):
    page = ready_page
    page.set_viewport_size({"width": width, "height": height})
    follow_link(page, "?lesson=transformer&arch=encoder_decoder&pair_task=dates")
    section_header(page, "Encoder-decoder attention").wait_for(timeout=150_000)
    wait_for(page, lambda: page.evaluate(MAP, "tf-cross-attention"), "the cross-attention map")
    found: list[str] = []
    total = page.evaluate("document.documentElement.scrollHeight")
    for y in range(0, total, height):  # every button fully visible, nothing wider than the page
        page.evaluate(f"window.scrollTo(0, {y})")
        result = page.evaluate(BUTTON_PROBLEMS)
        found += result["problems"]
        assert result["scrollWidth"] <= result["innerWidth"], result
    assert found == [] and page_log.errors == []
