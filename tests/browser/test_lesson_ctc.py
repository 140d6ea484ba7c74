"""The CTC lesson in the browser: train briefly, see the probabilities and the paths."""

from __future__ import annotations

import re
import time

import pytest

from browserkit import settled

pytestmark = pytest.mark.browser
SHARED_PAGE = True  # the session's shared page, with new lessons for this module (conftest.py)

IMAGE_ROWS = """() => {
  const out = [];
  for (const m of window.pyplay.document.all_models) {
    const d = m.data;
    if (d == null || typeof d !== "object") continue;
    const col = d instanceof Map ? d.get("image") : d["image"];
    if (col !== undefined) {
      const img = col[0];
      out.push(img.shape !== undefined ? img.shape[0] : img.length);
    }
  }
  return out;
}"""


def status(page) -> tuple[int, float | None]:
    text = page.locator(".pyplay-ctc-status pre").inner_text()
    loss = re.search(r"CTC loss ([0-9.]+)", text)
    return int(re.search(r"Step (\d+)", text).group(1)), float(loss.group(1)) if loss else None


def test_train_and_read_the_frames(ready_page, page_log):
    page = ready_page
    page.get_by_text("CTC", exact=True).first.click()
    page.get_by_role("button", name="Step", exact=True).click()
    deadline = time.time() + 60
    while status(page)[0] < 1 and time.time() < deadline:
        time.sleep(0.5)
    first = status(page)[1]
    assert first is not None and first > 1.0
    page.get_by_role("button", name="Train", exact=True).click()
    deadline = time.time() + 150
    while status(page)[0] < 60 and time.time() < deadline:
        time.sleep(0.5)
    page.get_by_role("button", name="Pause", exact=True).click()
    steps, loss = settled(lambda: status(page))  # the slice under way at the click ends
    assert steps >= 60 and loss is not None and loss < 0.6 * first, (steps, first, loss)
    paths = page.locator(".pyplay-ctc-paths pre")
    paths.filter(has_text="best path").wait_for(timeout=30_000)
    text = paths.inner_text()
    assert "collapse" in text and "target" in text
    assert 5 in page.evaluate(IMAGE_ROWS)  # blank + 4 symbols, one heatmap row each
    # the decoding panel: three decoders of the example on screen; a bad lexicon is explained
    lexicon = page.locator(".pyplay-ctc-lexicon pre")
    lexicon.filter(has_text="lexicon beam search").wait_for(timeout=30_000)
    assert re.search(r"-?\d+\.\d{3}  [A-D]+", lexicon.inner_text())
    assert "prefix beam search" in page.locator(".pyplay-ctc-beam pre").inner_text()
    box = page.get_by_label("Lexicon (words over the symbols)")
    box.fill("AB XY")
    box.press("Enter")
    note = page.locator(".pyplay-ctc-lexicon-note pre")
    note.filter(has_text="uses X, Y").wait_for(timeout=30_000)
    assert box.input_value() == "AB XY"  # what was typed stays
    assert page_log.errors == []


def test_the_lattice_and_the_paths_of_a_typed_label(ready_page, page_log):
    page = ready_page
    page.get_by_text("CTC", exact=True).first.click()
    listed = page.locator(".pyplay-ctc-path-list pre")
    listed.filter(has_text="forward algorithm p").wait_for(timeout=60_000)
    # the untrained model's lattice: a row per position of the extended label l'
    rows = page.evaluate(IMAGE_ROWS)
    page.get_by_role("button", name="Step", exact=True).click()
    label = page.get_by_role("textbox", name=re.compile("Label"))
    label.fill("ab")
    label.press("Enter")
    listed.filter(has_text="collapse to AB:").wait_for(timeout=30_000)
    text = listed.inner_text()
    total = float(re.search(r"sum over the \d+ paths : (\S+)", text).group(1))
    forward = float(re.search(r"forward algorithm p\s+: (\S+)", text).group(1))
    assert total == pytest.approx(forward, rel=1e-5)  # printed to 7 significant digits
    assert any(r >= 5 and r % 2 == 1 for r in rows)  # 2S + 1 rows of the lattice
    label.fill("ab<b>z")
    label.press("Enter")
    note = page.locator(".pyplay-ctc-path-note pre")
    note.filter(has_text="label must be at most 4 of the symbols").wait_for(timeout=30_000)
    assert "<b>" in note.inner_text()  # shown as typed, never as HTML
    assert "collapse to AB:" in listed.inner_text()  # the list stays
    # Wand's example in place of the list; typing a label brings the list back
    page.get_by_role("button", name="Wand's example: H EH L OU").click()
    lecture = page.locator(".pyplay-ctc-lecture-paths pre")
    lecture.filter(has_text="45 paths of 6 frames collapse to H EH L OU:").wait_for(timeout=30_000)
    text = lecture.inner_text()
    assert "H H EH L OU OU" in text and "- - H EH L OU" in text and "H EH L - L OU" in text
    total = float(re.search(r"sum over the 45 paths : (\S+)", text).group(1))
    forward = float(re.search(r"forward algorithm p\s+: (\S+)", text).group(1))
    assert total == pytest.approx(forward, rel=1e-6) and total > 0
    listed.wait_for(state="hidden", timeout=30_000)
    label.fill("ba")
    label.press("Enter")
    listed.filter(has_text="collapse to BA:").wait_for(timeout=30_000)
    lecture.wait_for(state="hidden", timeout=30_000)
    assert page_log.errors == []
