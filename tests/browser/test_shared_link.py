"""A shared link: the address carries the lesson, its settings and the decode input; opening
it shows the same setup, and the address follows every change made in the page."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl

import pytest

from browserkit import follow_link, wait_ready
from pyplay.ui.lessons.seq2seq.state import Seq2SeqState

pytestmark = pytest.mark.browser
SHARED_PAGE = True  # the session's shared page, with new lessons for this module (conftest.py)


def test_a_shared_link_reproduces_the_setup(page, page_log, site_url):
    page.goto(site_url + "?lesson=seq2seq&wiring=bahdanau&hidden_size=24&seed=5&src=abca")
    wait_ready(page)
    expected = Seq2SeqState(wiring="bahdanau", hidden_size=24, seed=5).message  # same model
    assert "Bahdanau attention" in expected
    page.get_by_text(expected.split(".")[0]).wait_for(timeout=60_000)  # "... N parameters"
    assert page.get_by_role("textbox", name="Source", exact=True).input_value() == "abca"
    assert page_log.errors == [] and page_log.external(site_url) == []


def _address(page) -> dict[str, str]:
    return dict(parse_qsl(page.evaluate("window.location.search").lstrip("?")))


def test_the_address_follows_each_change(ready_page, page_log):
    page = ready_page
    follow_link(page, "?lesson=seq2seq&cell=gru&seed=5")
    page.wait_for_function("() => window.location.search.includes('wiring=')", timeout=60_000)
    entries = page.evaluate("window.history.length")
    for label, cell in (("LSTM", "lstm"), ("RNN", "rnn"), ("GRU", "gru")):  # one change each
        page.get_by_role("button", name=label, exact=True).click()
        page.wait_for_function(
            f"() => window.location.search.includes('cell={cell}&')", timeout=30_000
        )
    box = page.get_by_role("textbox", name="Source", exact=True)
    box.fill("bcd")
    box.press("Enter")
    page.wait_for_function("() => window.location.search.endsWith('src=bcd')", timeout=30_000)
    address = _address(page)
    assert (address["lesson"], address["cell"], address["seed"]) == ("seq2seq", "gru", "5")
    page.get_by_text("Recurrent networks", exact=True).first.click()  # the open lesson
    page.wait_for_function("() => window.location.search.includes('lesson=rnn')", timeout=60_000)
    assert "src" not in _address(page)
    # each change replaced the page's history entry: Back leaves the page, it does not step
    # through the settings
    assert page.evaluate("window.history.length") == entries
    assert page_log.errors == []


def test_a_bad_value_in_the_link_is_a_message(ready_page, page_log):
    page = ready_page
    follow_link(page, "?lesson=ctc&hidden_size=lots&seed=2")
    message = re.compile(r"Address: hidden_size must be an integer from 4 to 96, got .lots.")
    page.get_by_text(message).wait_for(timeout=60_000)
    assert page.get_by_role("button", name="Step", exact=True).is_visible()  # CTC is open
    assert page_log.errors == []
