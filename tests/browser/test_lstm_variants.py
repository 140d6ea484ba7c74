"""The LSTM's variants in the "Recurrent networks" tab of the built page: the forget gate,
peephole and forget-bias controls build the model they name, the settings go to the address,
and after a few training steps the gradient view shows the CEC-only gradient beside the true
one, with no console warning or error."""

from __future__ import annotations

import pytest

from browserkit import wait_for, wait_step

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


def visible(page, role: str, name: str):
    return page.get_by_role(role, name=name, exact=True).locator("visible=true").first


def set_checkbox(page, label: str, on: bool) -> None:
    """Bokeh's checkbox: its label is a div beside the input, in the same shadow root."""
    text = page.get_by_text(label, exact=True).locator("visible=true").first
    if text.evaluate("e => e.getRootNode().querySelector('input').checked") != on:
        text.evaluate("e => e.getRootNode().querySelector('input').click()")


def test_the_variant_controls_train_and_show_the_cec_gradient(ready_page, page_log):
    page = ready_page
    warnings: list[str] = []
    page.on("console", lambda m: m.type == "warning" and warnings.append(m.text))
    set_checkbox(page, FORGET, False)
    wait_for(page, lambda: "forget_gate=false" in page.url, "the address naming no forget gate")
    set_checkbox(page, "Peepholes", True)
    wait_for(page, lambda: "peephole=true" in page.url, "the address naming the peepholes")
    visible(page, "button", "Train").click()
    wait_step(page, 5)
    visible(page, "button", "Pause").click()
    summary = page.locator(".pyplay-cec-summary").locator("visible=true").first
    summary.wait_for(timeout=60_000)
    wait_for(page, lambda: "cosine" in summary.inner_text(), "the CEC-only summary line")
    pair = page.evaluate(PAIR)
    assert pair is not None
    full, cec = pair
    assert len(full) == len(cec) == 10  # the lesson's sequence length
    assert any(isinstance(v, (int, float)) and v > 0 for v in cec)
    assert full != cec  # the truncated gradient is drawn, not the true one twice
    # the forget gate back on: its bias can be set, and the address carries it
    set_checkbox(page, FORGET, True)
    box = visible(page, "textbox", "Forget-gate bias at start (1+ helps)")
    box.fill("1.5")
    box.press("Enter")
    wait_for(page, lambda: "forget_bias=1.5" in page.url, "the address naming the bias")
    # a GRU has no such controls and no CEC view
    page.get_by_role("button", name="GRU", exact=True).first.click()
    wait_for(page, lambda: summary.is_hidden(), "the CEC view hiding for the GRU")
    assert page.get_by_text("Peepholes", exact=True).locator("visible=true").count() == 0
    assert page_log.errors == []
    assert warnings == []
