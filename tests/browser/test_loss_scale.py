"""Issue 17, "plots a class can read", in the browser: the shared loss plot's log / linear
switch. After a few training steps, a click on "linear scale" shows the linear figure (its
holder visible, its canvas drawn) over the very data source the log figure reads, with the
rows trained so far, and hides the log one; "log scale" switches back; nothing is logged to
the console on the way (a hidden figure's ranges made BokehJS warn)."""

from __future__ import annotations

import pytest

from browserkit import step_count, wait_for, wait_step

pytestmark = pytest.mark.browser

# the loss plot of the lesson on screen: per figure (log, linear) whether its holder is
# visible in the document, its canvas shown on the page, its y scale, the id of the source
# its loss line reads and that source's number of rows
LOSS_PLOT = """() => {
  const doc = window.pyplay.document;
  const holders = {};
  for (const m of doc.all_models) {
    const classes = m.css_classes || [];
    for (const name of ["log", "linear"])
      if (classes.includes(`pyplay-loss-${name}`)) (holders[name] = holders[name] || []).push(m);
  }
  const shown = (el) => el && el.checkVisibility();
  const out = {};
  for (const [name, models] of Object.entries(holders)) {
    for (const holder of models) {
      // the holder's element on the page: Panel gives it the model's CSS class
      const fig = holder.children[0];
      const line = fig.renderers.find((r) => r.glyph && r.glyph.y && r.glyph.y.field === "loss"
                                            && r.name == null);
      const rows = line.data_source.get_length();
      if (!rows) continue;  // another lesson's plot, not trained
      out[name] = {visible: holder.visible, figure_visible: fig.visible,
                   scale: fig.y_scale.type, source: line.data_source.id, rows,
                   holder: holder.id};
    }
  }
  return out;
}"""

# per figure (log, linear): whether a canvas of it is displayed on the page (any lesson's)
CANVAS_SHOWN = """() => {
  const out = {};
  const walk = (root, inside) => {
    for (const el of root.querySelectorAll('*')) {
      let here = inside;
      for (const name of ['log', 'linear'])
        if (el.classList.contains(`pyplay-loss-${name}`)) here = name;
      if (el.classList.contains('bk-Canvas') && here) {
        const r = el.getBoundingClientRect();
        const drawn = el.checkVisibility() && r.width > 100 && r.height > 100;
        out[here] = (out[here] || false) || drawn;
      }
      if (el.shadowRoot) walk(el.shadowRoot, here);
    }
  };
  walk(document, null);
  return out;
}"""


def scale_button(page, label: str):
    return (
        page.locator(".pyplay-loss-scale")
        .locator("visible=true")
        .first.get_by_role("button", name=label, exact=True)
    )


def test_the_loss_switch_shows_the_linear_figure_of_the_same_data(ready_page, page_log):
    page = ready_page
    warnings: list[str] = []
    page.on("console", lambda m: m.type in ("warning", "error") and warnings.append(m.text))
    page.get_by_role("button", name="Train", exact=True).locator("visible=true").first.click()
    wait_step(page, 20)
    page.get_by_role("button", name="Pause", exact=True).locator("visible=true").first.click()
    at = step_count(page)
    scale_button(page, "log scale").click()
    wait_for(page, lambda: page.evaluate(LOSS_PLOT).get("log", {}).get("visible"), "log shown")
    before = page.evaluate(LOSS_PLOT)
    assert before["log"]["scale"] == "LogScale" and before["linear"]["scale"] == "LinearScale"
    assert not before["linear"]["visible"]

    scale_button(page, "linear scale").click()
    wait_for(page, lambda: page.evaluate(LOSS_PLOT)["linear"]["visible"], "the linear figure shown")
    wait_for(page, lambda: page.evaluate(CANVAS_SHOWN).get("linear"), "its canvas drawn")
    after = page.evaluate(LOSS_PLOT)
    log, linear = after["log"], after["linear"]
    assert not log["visible"] and linear["figure_visible"]
    assert linear["source"] == log["source"]  # one source: the same data
    assert linear["rows"] == log["rows"] >= at  # every step trained so far
    # the log figure's canvas is on the page, not shown
    assert page.evaluate(CANVAS_SHOWN) == {"log": False, "linear": True}

    scale_button(page, "log scale").click()
    wait_for(page, lambda: page.evaluate(LOSS_PLOT)["log"]["visible"], "the log figure back")
    assert warnings == [], warnings[:10]
    assert page_log.errors == []
