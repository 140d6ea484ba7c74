"""Issue 17, "plots a class can read", in the browser: the shared loss plot's log / linear
switch. After a few training steps, a click on "linear scale" puts the linear figure in the
page in place of the log one, over the very data source the log figure reads, with the rows
trained so far; "log scale" switches back; nothing is logged to the console on the way."""

from __future__ import annotations

import pytest

from browserkit import CANVASES, settled_step, wait_for, wait_step

SHARED_PAGE = True  # the session's shared page, with new lessons for this module (conftest.py)

pytestmark = pytest.mark.browser

# the loss plots in the page: per plot (the Column holding the shown figure above the
# switch), the shown figure's y scale, the id of the source its loss line reads and that
# source's rows; only plots whose curve has rows (the lesson trained here)
LOSS_PLOT = """() => {
  const out = [];
  for (const m of window.pyplay.document.all_models) {
    const kids = m.children;
    if (!Array.isArray(kids) || kids.length !== 2) continue;
    const [fig, scale] = kids;
    if (!(scale.css_classes || []).includes("pyplay-loss-scale") || !fig.renderers) continue;
    const line = fig.renderers.find((r) => r.glyph && r.glyph.y && r.glyph.y.field === "loss"
                                          && r.name == null);
    const rows = line.data_source.get_length();
    if (rows) out.push({scale: fig.y_scale.type, source: line.data_source.id, rows,
                        figure: fig.id, visible: fig.visible});
  }
  return out;
}"""


def scale_button(page, label: str):
    return (
        page.locator(".pyplay-loss-scale")
        .locator("visible=true")
        .first.get_by_role("button", name=label, exact=True)
    )


def shown(page) -> dict:
    plots = page.evaluate(LOSS_PLOT)
    assert len(plots) == 1, plots  # the lesson trained here
    return plots[0]


def test_the_loss_switch_shows_the_linear_figure_of_the_same_data(ready_page, page_log):
    page = ready_page
    warnings: list[str] = []
    page.on("console", lambda m: m.type in ("warning", "error") and warnings.append(m.text))
    page.get_by_role("button", name="Train", exact=True).locator("visible=true").first.click()
    wait_step(page, 20)
    page.get_by_role("button", name="Pause", exact=True).locator("visible=true").first.click()
    at = settled_step(page)  # the slice under way at the click ends first
    before = shown(page)
    assert before["scale"] == "LogScale"  # log by default: the loss falls by decades

    scale_button(page, "linear scale").click()
    wait_for(page, lambda: shown(page)["scale"] == "LinearScale", "the linear figure shown")
    after = shown(page)
    assert after["figure"] != before["figure"] and after["visible"]
    assert after["source"] == before["source"]  # one source: the same data
    assert after["rows"] == before["rows"] >= at  # every step trained so far
    wait_for(page, lambda: bool(page.evaluate(CANVASES)), "a drawn canvas")

    scale_button(page, "log scale").click()
    wait_for(page, lambda: shown(page)["figure"] == before["figure"], "the log figure back")
    assert warnings == [], warnings[:10]
    assert page_log.errors == []
