"""The LSTM's variants in the "Recurrent networks" tab of the built page: the forget gate,
peephole controls build the model they name, the settings go to the address,
and after a few training steps the gradient view shows the CEC-only gradient beside the true
one; then, bidirectional, the backward direction picked while it trains titles the heatmaps
and shows at once (issue 19), with no console warning or error."""

from __future__ import annotations

import re

import pytest

from browserkit import wait_for, wait_step

SHARED_PAGE = True  # the session's shared page, with new lessons for this module (conftest.py)

pytestmark = pytest.mark.browser
FORGET = "Forget gate (off: the 1997 LSTM)"

# the numbers of the data source that holds both gradients: [full..., cec...] or null
PAIR = """() => {
  for (const m of window.pyplay.document.all_models) {
    const d = m.data;
    if (d == null || typeof d !== "object") continue;
    const get = (c) => (d instanceof Map ? d.get(c) : d[c]);
    const full = get("full"), cec = get("cec");
    if (full === undefined || cec === undefined) continue;
    return [Array.from(full), Array.from(cec)];
  }
  return null;
}"""


# the texts of the page's document (figure titles among them)
TITLES = """() => [...window.pyplay.document.all_models]
  .filter((m) => typeof m.text === "string").map((m) => m.text)"""


def steps_shown(page) -> int:
    found = re.search(r"Step (\d+)", page.locator(".pyplay-status pre").first.inner_text())
    return int(found.group(1)) if found else 0


def visible(page, role: str, name: str):
    return page.get_by_role(role, name=name, exact=True).locator("visible=true").first


def set_checkbox(page, label: str, on: bool, address: str) -> None:
    """Bokeh's checkbox: its label is a div beside the input, in the same shadow root. Set it
    to ``on`` and wait for the page address to show ``address`` (a checkbox drawn again
    while the lesson was still being set up is set again)."""
    text = page.get_by_text(label, exact=True).locator("visible=true").first
    checked = "e => e.getRootNode().querySelector('input').checked"

    def done() -> bool:
        if text.evaluate(checked) != on:
            text.evaluate("e => e.getRootNode().querySelector('input').click()")
        return address in page.url

    wait_for(page, done, f"the address showing {address}")


def test_the_variant_controls_train_and_show_the_cec_gradient(ready_page, page_log):
    page = ready_page
    warnings: list[str] = []
    page.on("console", lambda m: m.type == "warning" and warnings.append(m.text))
    set_checkbox(page, FORGET, False, "forget_gate=false")
    set_checkbox(page, "Peepholes", True, "peephole=true")
    visible(page, "button", "Train").click()
    wait_step(page, 5)
    visible(page, "button", "Pause").click()
    summary = page.get_by_text(re.compile(r"cosine between the CEC-only and the true gradient"))
    summary.first.wait_for(timeout=60_000)  # the line under the plot (in a shadow root)
    pair = page.evaluate(PAIR)
    assert pair is not None
    full, cec = pair
    assert len(full) == len(cec) == 10  # the lesson's sequence length
    assert any(isinstance(v, (int, float)) and v > 0 for v in cec)
    assert full != cec  # the truncated gradient is drawn, not the true one twice
    # bidirectional: pick the backward direction while training; the heatmaps follow
    set_checkbox(page, "Bidirectional (not for next-step prediction)", True, "bidirectional=true")
    visible(page, "button", "Train").click()
    wait_step(page, 3)
    visible(page, "button", "backward").click()
    wanted = "Layer 1, backward direction: input gate i_t"  # (no forget gate here)
    wait_for(page, lambda: wanted in page.evaluate(TITLES), f"the title {wanted!r}", 60)
    assert steps_shown(page) >= 3  # answered while training: no pause in between
    visible(page, "button", "Pause").click()
    assert page_log.errors == []
    assert warnings == []
