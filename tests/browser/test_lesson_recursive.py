"""The Recursive networks lesson in the browser: train the recursive net beside the chain LSTM,
type an expression and see its tree; a phrase in the sentiment task; what cannot be read is a
message."""

from __future__ import annotations

import re

import pytest

from browserkit import wait_for

SHARED_PAGE = True  # the session's shared page, with new lessons for this module (conftest.py)

pytestmark = pytest.mark.browser

TREE_NODES = """() => {
  for (const m of window.pyplay.document.all_models) {
    const d = m.data;
    if (d == null || typeof d !== "object") continue;
    const col = d instanceof Map ? d.get("shown") : d["shown"];
    if (col !== undefined) return Array.from(col);
  }
  return null;
}"""


def status(page) -> tuple[int, str]:
    text = page.locator(".pyplay-recursive-status pre").inner_text()
    return int(re.search(r"Step (\d+)", text).group(1)), text


def answer(page) -> str:
    return page.locator(".pyplay-recursive-answer pre").inner_text()


def test_train_beside_a_chain_and_read_a_typed_expression(ready_page, page_log):
    page = ready_page
    page.get_by_text("Recursive networks", exact=True).first.click()
    page.get_by_role("button", name="Step", exact=True).click()
    wait_for(page, lambda: status(page)[0] >= 1, "the first step")
    page.get_by_role("button", name="Train", exact=True).click()
    wait_for(page, lambda: status(page)[0] >= 40, "40 steps", 200)
    page.get_by_role("button", name="Pause", exact=True).click()
    _, text = status(page)
    assert "root accuracy" in text and "chain LSTM loss" in text
    assert answer(page).startswith("read as     : (((3 - 4) * 2) + 7)")
    box = page.get_by_label("Your expression")
    box.fill("2*(3+4)")
    box.press("Enter")
    wait_for(page, lambda: "((2 * (3 + 4)))" not in answer(page)
             and "(2 * (3 + 4))" in answer(page), "the typed expression", 30)  # fmt: skip
    assert "true class  : 4" in answer(page)  # 14 modulo 10
    wait_for(page, lambda: (page.evaluate(TREE_NODES) or []).__len__() == 5, "5 nodes", 30)
    box.fill("2+")
    box.press("Enter")
    page.get_by_text(re.compile(r"Cannot read '2\+'")).wait_for(timeout=30_000)
    page.get_by_role("button", name="Sentiment", exact=True).click()
    wait_for(page, lambda: "((not (very good)) movie)" in answer(page), "the phrase example", 60)
    assert "true class  : 0" in answer(page)
    assert page_log.errors == []
