"""The "Dynamic networks" and "Time series" lessons in the browser."""

from __future__ import annotations

import re

import pytest

from browserkit import wait_for

pytestmark = pytest.mark.browser
SHARED_PAGE = True  # the session's shared page, with new lessons for this module (conftest.py)


def pre(page, css: str) -> str:
    return page.locator(f"{css} pre").inner_text()


def steps_and_loss(page, css: str, what: str) -> tuple[int, float | None]:
    text = pre(page, css)
    loss = re.search(what + r" ([0-9.e-]+)", text)
    return int(re.search(r"Step (\d+)", text).group(1)), float(loss.group(1)) if loss else None


def test_build_run_train_and_the_vanishing_gradient(ready_page, page_log):
    page = ready_page
    page.get_by_text("Dynamic networks", exact=True).first.click()
    wait_for(page, lambda: "0.3333 p¹(t−2)" in pre(page, ".pyplay-lddn-equations"), "equations")
    assert "0.3333" in pre(page, ".pyplay-lddn-values")
    page.locator("select:visible", has_text="Three-tap moving average").select_option(
        label="Focused time-delay network (timedelaynet)"
    )
    wait_for(page, lambda: "IW¹˒¹(2) p¹(t−2)" in pre(page, ".pyplay-lddn-equations"), "TDNN")
    status = ".pyplay-lddn-status"
    page.get_by_role("button", name="Step", exact=True).click()
    wait_for(page, lambda: steps_and_loss(page, status, "error")[0] >= 1, "one step")
    first = steps_and_loss(page, status, "error")[1]
    page.get_by_role("button", name="Train", exact=True).click()
    wait_for(page, lambda: steps_and_loss(page, status, "error")[0] >= 300, "300 steps")
    page.get_by_role("button", name="Pause", exact=True).click()
    _, loss = steps_and_loss(page, status, "error")
    assert first is not None and loss is not None and loss < 0.2 * first, (first, loss)
    # the palette: a feedback connection, then a bad one (a message; nothing changes)
    page.get_by_role("textbox", name="Delays (empty removes)").fill("1")
    page.get_by_role("button", name="Set connection", exact=True).click()
    wait_for(page, lambda: "LW¹˒¹(1) a¹(t−1)" in pre(page, ".pyplay-lddn-equations"), "feedback")
    page.get_by_role("textbox", name="Delays (empty removes)").fill("one")
    page.get_by_role("button", name="Set connection", exact=True).click()
    page.get_by_text(re.compile("delays must be whole numbers")).wait_for(timeout=30_000)
    assert "LW¹˒¹(1) a¹(t−1)" in pre(page, ".pyplay-lddn-equations")
    # the vanishing gradient: lw = 0.5 halves the gradient at every step back
    page.get_by_text("Vanishing gradient", exact=True).first.click()
    wait_for(page, lambda: "multiplies it by 0.500" in pre(page, ".pyplay-gradient-text"), "lw")
    page.locator(".noUi-handle:visible").first.press("ArrowRight")
    wait_for(page, lambda: "multiplies it by 0.550" in pre(page, ".pyplay-gradient-text"), "lw +")
    assert page_log.errors == []


def test_narx_open_then_closed_loop(ready_page, page_log):
    page = ready_page
    page.get_by_text("Time series", exact=True).first.click()
    status = ".pyplay-narx-status"
    page.get_by_role("button", name="Train", exact=True).click()
    wait_for(page, lambda: steps_and_loss(page, status, "MSE")[0] >= 400, "400 steps")
    page.get_by_role("button", name="Pause", exact=True).click()
    page.get_by_role("button", name="Closed loop", exact=True).click()
    wait_for(
        page,
        lambda: "showing: Held-out stretch: closed loop" in pre(page, ".pyplay-narx-scores"),
        "closed",
    )

    def mse(name: str) -> float:
        return float(re.search(name + r"\s*: ([0-9.]+)", pre(page, ".pyplay-narx-scores")).group(1))

    assert mse("closed loop, free run") < 0.5 * mse("predicting the mean")
    # the user's series: a bad CSV is refused with a message and stays in the box
    box = page.get_by_role("textbox", name="Your series (CSV)")
    box.fill("u,y\n1,2\n3")
    page.get_by_role("button", name="Use this series", exact=True).click()
    page.get_by_text(re.compile("Series not used: line 3 must hold 2 value")).wait_for(
        timeout=30_000
    )
    assert box.input_value() == "u,y\n1,2\n3"
    box.fill("\n".join(str(k % 7) for k in range(100)))
    page.get_by_role("button", name="Use this series", exact=True).click()
    page.get_by_text(re.compile(r"Using your series \(100 rows, y only\)")).wait_for(timeout=30_000)
    assert page_log.errors == []


def test_textbook_seq2seq_equations_beside_the_code(ready_page, page_log):
    page = ready_page
    page.get_by_text("Dynamic networks", exact=True).first.click()
    page.get_by_text("Textbook seq2seq", exact=True).first.click()
    page.get_by_role("button", name="General", exact=True).click()
    page.get_by_role("button", name="Step", exact=True).click()
    wait_for(page, lambda: "Step 1" in pre(page, ".pyplay-textbook-status"), "one step")
    page.get_by_role("textbox", name="Source").fill("abcd")
    page.get_by_role("button", name="Explain", exact=True).click()
    steps = ".pyplay-textbook-steps"
    wait_for(page, lambda: "largest difference" in pre(page, steps), "the explanation")
    text = pre(page, steps)
    assert text.startswith("source a b c d")
    assert "code :" in text and "value:" in text
    difference = float(re.search(r"largest difference ([0-9.e+-]+)", text).group(1))
    assert difference < 1e-9
    assert page_log.errors == []
