"""The dynamic networks lesson's Adaptive filter, Stability and memory, and RTRL and BPTT
sub-tabs in the browser: each opens, runs or has a control moved, its plotted data changes,
and the console stays free of warnings and errors."""

from __future__ import annotations

import re

import pytest

from browserkit import FINGERPRINT, wait_for

pytestmark = pytest.mark.browser
SHARED_PAGE = True  # the session's shared page, with new lessons for this module (conftest.py)


def pre(page, css: str) -> str:
    return page.locator(f"{css} pre").first.inner_text()


def open_part(page, sub: str, css: str) -> list[str]:
    """Open the sub-tab ``sub`` of the dynamic networks lesson; the console's warnings and
    errors from then on are collected in the returned list."""
    messages: list[str] = []
    page.on(
        "console",
        lambda m: m.type in ("warning", "error") and messages.append(f"{m.type}: {m.text}"),
    )
    page.get_by_text("Dynamic networks", exact=True).first.click()
    page.get_by_text(sub, exact=True).first.click()
    page.locator(f"{css} pre").first.wait_for(timeout=60_000)
    return messages


def button(page, name: str):
    return page.get_by_role("button", name=name, exact=True).locator("visible=true").first


def step_of(page, css: str) -> int:
    found = re.search(r"Step (\d+)", pre(page, css))
    return int(found.group(1)) if found else 0


def test_adaptive_filter_streams_and_restarts_with_a_new_rate(ready_page, page_log):
    page = ready_page
    status = ".pyplay-adaptive-status"
    messages = open_part(page, "Adaptive filter", status)
    assert "Before the first sample" in pre(page, status)
    assert "exact bound for this period-3 noise source: 0 < α < 0.6945" in pre(
        page, ".pyplay-adaptive-bound"
    )
    before = page.evaluate(FINGERPRINT, ["w1", "e"])
    button(page, "Train").click()
    wait_for(page, lambda: step_of(page, status) >= 40, "40 samples streamed")
    live = page.evaluate(FINGERPRINT, ["w1", "e"])
    assert live != before
    wait_for(page, lambda: page.evaluate(FINGERPRINT, ["w1", "e"]) != live, "more samples")
    button(page, "Pause").click()
    page.locator(".noUi-handle:visible").first.press("ArrowRight")  # alpha 0.1 -> 0.105
    wait_for(page, lambda: "α = 0.105 <" in pre(page, ".pyplay-adaptive-bound"), "a new rate")
    wait_for(page, lambda: "Before the first sample" in pre(page, status), "a restart")
    assert messages == [] and page_log.errors == []


def test_stability_radius_past_one_explodes(ready_page, page_log):
    page = ready_page
    text = ".pyplay-stability-text"
    messages = open_part(page, "Stability and memory", text)
    assert "ρ = max|λ| = 0.9000: inside the unit circle" in pre(page, text)
    before = page.evaluate(FINGERPRINT, ["re", "norm_a"])
    handle = page.locator(".noUi-handle:visible").first  # the spectral radius, step 0.01
    for _ in range(15):
        handle.press("ArrowRight")
    wait_for(page, lambda: "1.0500: outside the unit circle: unstable" in pre(page, text), "ρ")
    assert page.evaluate(FINGERPRINT, ["re", "norm_a"]) != before
    button(page, "Step").click()
    wait_for(page, lambda: step_of(page, ".pyplay-stability-status") == 1, "the cursor at t = 1")
    assert messages == [] and page_log.errors == []


def test_rtrl_equals_bptt_and_the_costs_follow_the_hidden_size(ready_page, page_log):
    page = ready_page
    status = ".pyplay-rtrl-status"
    messages = open_part(page, "RTRL and BPTT", status)

    def difference() -> float:
        return float(re.search(r"RTRL − BPTT\| over the \d+ weights = ([0-9.e+-]+)",
                               pre(page, status)).group(1))  # fmt: skip

    assert difference() < 1e-10
    button(page, "Step").click()
    wait_for(page, lambda: step_of(page, status) == 1, "one step")
    assert difference() < 1e-10
    costs = page.evaluate(FINGERPRINT, ["rtrl_ops", "bptt_ops"])
    page.locator(".noUi-handle:visible").first.press("ArrowRight")  # S 3 -> 4
    wait_for(page, lambda: "S = 4 (P = " in pre(page, ".pyplay-rtrl-costs"), "S = 4")
    assert page.evaluate(FINGERPRINT, ["rtrl_ops", "bptt_ops"]) != costs
    assert "LW¹˒¹" in pre(page, ".pyplay-rtrl-gradients")
    assert messages == [] and page_log.errors == []
