"""A shared link: the address carries the lesson, its settings and the decode input; opening
it shows the same setup, and changing a setting changes the address."""

from __future__ import annotations

import re

import pytest

from browserkit import wait_for, wait_ready

pytestmark = pytest.mark.browser


def test_a_shared_link_reproduces_the_setup(page, page_log, site_url):
    page.goto(site_url + "?lesson=seq2seq&wiring=bahdanau&hidden_size=24&seed=5&src=abca")
    wait_ready(page)
    page.get_by_text(re.compile(r"GRU encoder-decoder, Bahdanau attention")).wait_for(
        timeout=60_000
    )
    assert page.get_by_role("textbox", name="Source", exact=True).input_value() == "abca"
    wait_for(page, lambda: "hidden_size=24" in page.url, "the address keeps the settings", 30)
    assert "wiring=bahdanau" in page.url and "seed=5" in page.url
    page.get_by_role("button", name="Luong", exact=True).click()
    wait_for(page, lambda: "wiring=attention" in page.url, "the address follows a change", 30)
    assert "hidden_size=24" in page.url
    assert page_log.errors == [] and page_log.external(site_url) == []


def test_a_bad_value_in_the_link_is_a_message(page, page_log, site_url):
    page.goto(site_url + "?lesson=ctc&hidden_size=lots&seed=2")
    wait_ready(page)
    message = re.compile(r"Address: hidden_size must be an integer from 4 to 96, got .lots.")
    page.get_by_text(message).wait_for(timeout=60_000)
    wait_for(page, lambda: "hidden_size=lots" not in page.url, "the address rewritten", 30)
    assert "lesson=ctc" in page.url and "seed=2" in page.url
    assert page.get_by_role("button", name="Step", exact=True).is_visible()  # CTC is open
    assert page_log.errors == []
