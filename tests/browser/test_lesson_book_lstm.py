"""The dynamic networks lesson's "LSTM and GRU (lecture 8)" sub-tab in the browser: each network
is picked, its diagram and equations appear and follow the variant (peepholes, no forget gate),
a bad forget-gate bias is named next to its control, a training step runs, and the console
stays free of warnings and errors."""

from __future__ import annotations

import pytest
from test_dynamic_views import open_part, pre  # the sub-tab opened, the console watched
from test_lesson_rnn_variants import set_checkbox  # Bokeh's checkbox, set and seen in the address

from browserkit import FINGERPRINT, wait_for

SHARED_PAGE = True  # the session's shared page, with new lessons for this module (conftest.py)

pytestmark = pytest.mark.browser

EQUATIONS = ".pyplay-book-equations"
STATUS = ".pyplay-book-status"
PEEPHOLES = "Peepholes LWᵐ˒⁵ (m = 2, 3, 4)"  # the checkboxes' labels
FORGET = "Forget gate, layer 3 (off: the original LSTM)"
BIAS = "Forget-gate bias b³ at start (1+ helps)"  # the typed input's label

# the "detail" column of every diagram's node source: what each box says under its number
DIAGRAM_DETAILS = """() => {
  const out = [];
  for (const m of window.pyplay.document.all_models) {
    const d = m.data;
    if (d == null || typeof d !== "object") continue;
    const col = d instanceof Map ? d.get("detail") : d["detail"];
    if (col !== undefined) out.push(Array.from(col).join("|"));
  }
  return out;
}"""


def details(page) -> str:
    return "\n".join(page.evaluate(DIAGRAM_DETAILS))


def test_lstm_and_gru_diagrams_and_equations_follow_the_variant(ready_page, page_log):
    page = ready_page
    messages = open_part(page, "LSTM and GRU (lecture 8)", EQUATIONS)
    # the LSTM: CEC, gates as layers, the Hadamard product, the forget gate's bias b3
    text = pre(page, EQUATIONS)
    assert "a⁵(t) = a³(t) ∘ [LW⁵˒⁵ a⁵(t−1)] + a²(t) ∘ a¹(t)" in text
    assert "a³(t) = logsig(IW³˒¹ p(t) + LW³˒⁶ a⁶(t−1) + b³)" in text
    assert "a⁶(t) = a⁴(t) ∘ tansig(a⁵(t))" in text and "LW²˒⁵" not in text
    wait_for(page, lambda: "CEC, purelin" in details(page), "the LSTM's diagram")
    assert "|forget gate|" in details(page)
    assert "b³ = 1 at the start" in pre(page, STATUS)
    drawn = page.evaluate(FINGERPRINT, ["x0", "cx0"])
    # peepholes: the gates see a5, three more feedback arcs
    set_checkbox(page, PEEPHOLES, True, "peephole=true")
    wait_for(page, lambda: "LW²˒⁵ a⁵(t−1)" in pre(page, EQUATIONS), "peephole equations")
    assert "LW⁴˒⁵ a⁵(t)" in pre(page, EQUATIONS)
    wait_for(page, lambda: page.evaluate(FINGERPRINT, ["x0", "cx0"]) != drawn, "peephole arcs")
    # no forget gate: the original LSTM, no layer 3
    set_checkbox(page, FORGET, False, "forget_gate=false")
    wait_for(page, lambda: "no forget gate" in pre(page, EQUATIONS), "no forget gate")
    assert "a³(t) = logsig(" not in pre(page, EQUATIONS)
    wait_for(page, lambda: "|forget gate|" not in details(page), "layer 3 gone")
    set_checkbox(page, FORGET, True, "forget_gate=true")
    wait_for(page, lambda: "a³(t) = logsig(" in pre(page, EQUATIONS), "the forget gate back")
    # a bad bias: named next to its control, the network kept
    box = page.get_by_role("textbox", name=BIAS, exact=True).locator("visible=true").first
    box.fill("50")
    box.press("Enter")
    note = page.locator(".pyplay-book-problem pre").first
    wait_for(page, lambda: note.is_visible() and "got 50" in note.inner_text(), "the note")
    assert "b³ = 1 at the start" in pre(page, STATUS)
    box.fill("2")
    box.press("Enter")
    wait_for(page, lambda: "b³ = 2 at the start" in pre(page, STATUS), "bias 2")
    assert "forget_bias=2" in page.url  # the address follows
    assert not note.is_visible()
    # one training step through the network's own BPTT
    page.get_by_role("button", name="Step", exact=True).locator("visible=true").first.click()
    wait_for(page, lambda: "Step 1: mean squared error" in pre(page, STATUS), "one step")
    # the GRU: reset gate before the input layer, update gate, differencing layer
    page.locator("select:visible", has_text="LSTM (lecture 8's notation)").select_option(
        label="GRU (lecture 8's notation)"
    )
    wait_for(page, lambda: "differencing layer" in pre(page, EQUATIONS), "the GRU's equations")
    text = pre(page, EQUATIONS)
    assert "a³(t) = a²(t) ∘ a⁶(t−1)" in text
    assert "a¹(t) = tansig(IW¹˒¹ p(t) + LW¹˒³ a³(t) + b¹)" in text
    assert "a⁶(t) = a⁴(t) ∘ a⁵(t) + a⁶(t−1) = a⁴(t) ∘ a¹(t) + [1 − a⁴(t)] ∘ a⁶(t−1)" in text
    wait_for(page, lambda: "a¹ − a⁶(t−1)" in details(page), "the GRU's diagram")
    assert not page.get_by_text(PEEPHOLES, exact=True).first.is_visible()
    assert "BookGRU" in pre(page, STATUS)
    assert page.get_by_text(
        "The GRU of lecture 8 of an NLP course is not PyTorch's"
    ).first.is_visible()
    assert messages == [] and page_log.errors == []
