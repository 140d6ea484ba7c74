"""Model files in the browser (recurrent lesson): a corrupt or foreign upload is a clear
message and changes nothing; the downloaded model loads natively; the metrics download is the
loss curve as CSV."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from browserkit import fresh_model, wait_for
from pyplay.io import load_model
from pyplay.ui.lessons.ctc.state import CTCState

pytestmark = pytest.mark.browser
SHARED_PAGE = True  # the session's shared page, with new lessons for this module (conftest.py)

UPLOAD = "input[type=file][accept='.npz']"


def status_text(page) -> str:
    return page.locator(".pyplay-status pre").inner_text()


def test_a_corrupt_or_foreign_file_is_a_message_and_nothing_changes(
    ready_page, page_log, tmp_path: Path
):
    page = ready_page
    fresh_model(page)  # the module's tests share one page
    page.get_by_role("button", name="Step", exact=True).click()
    wait_for(page, lambda: status_text(page).startswith("Step 1:"), "the first step")
    before = status_text(page)

    junk = tmp_path / "x.npz"
    junk.write_bytes(np.random.default_rng(0).bytes(3000))
    page.locator(UPLOAD).set_input_files(str(junk))
    message = page.get_by_text(re.compile(r"Not loaded: this is not a model file"))
    message.wait_for(timeout=60_000)
    assert status_text(page) == before

    foreign = tmp_path / "ctc.npz"
    foreign.write_bytes(CTCState(hidden_size=4).save_bytes().getvalue())
    page.locator(UPLOAD).set_input_files(str(foreign))
    page.get_by_text(
        re.compile(r"Not loaded: this file is a model of the CTC lesson, not of the Recurrent")
    ).wait_for(timeout=60_000)
    assert status_text(page) == before
    assert page_log.errors == []


def test_downloads_load_natively_and_hold_the_steps(ready_page, page_log):
    page = ready_page
    fresh_model(page)  # the module's tests share one page: the metrics start at step 1
    for _ in range(3):
        step = int(re.search(r"Step (\d+)", status_text(page)).group(1))
        page.get_by_role("button", name="Step", exact=True).click()
        wait_for(page, lambda s=step: status_text(page).startswith(f"Step {s + 1}:"), "a step")

    with page.expect_download(timeout=60_000) as info:
        page.get_by_text("Download model (.npz)").click()
    model = load_model(Path(info.value.path()).read_bytes())  # natively, one call
    assert type(model).__name__ == "SequenceModel" and model.cell == "lstm"

    with page.expect_download(timeout=60_000) as info:
        page.get_by_text("Download metrics (.csv)").click()
    rows = Path(info.value.path()).read_text().splitlines()
    assert rows[0] == "step,loss" and [r.split(",")[0] for r in rows[1:]] == ["1", "2", "3"]
    assert all(float(r.split(",")[1]) > 0 for r in rows[1:])
    assert page_log.errors == []
