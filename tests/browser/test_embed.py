"""Embedded widgets: the example course page (web/site/course.html), served from another origin
than the site (itself under a subpath), with two script-tag widgets sharing one runtime and
one iframe widget."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from browserkit import START_TIMEOUT_MS, wait_ready

pytestmark = pytest.mark.browser

STATUS = re.compile(r"Step 1: loss")  # in a status line's <pre>: the page's live region
# for screen readers (web/site/announce.js) repeats it every 5 s, and a text locator found both


@pytest.fixture
def hosted(build: Any, site: tuple[Path, str], tmp_path: Path) -> Iterator[tuple[str, str]]:
    """(site URL, course page URL): the built site under a subpath, as GitHub Pages serves a
    project (``http://127.0.0.1:P/pyplay/``), and web/site/course.html pointed at it, served on
    ``localhost`` (another origin)."""
    dist, _ = site
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "pyplay").symlink_to(dist, target_is_directory=True)
    site_server, root = build.serve_in_thread(tmp_path / "site")
    site_url = root + "pyplay/"
    text = (build.SITE / "course.html").read_text()
    assert 'src="./embed.js"' in text and 'src="./index.html?embed=' in text
    (tmp_path / "host").mkdir()
    (tmp_path / "host" / "course.html").write_text(text.replace('src="./', f'src="{site_url}'))
    host_server, url = build.serve_in_thread(tmp_path / "host")
    yield site_url, url.replace("127.0.0.1", "localhost") + "course.html"
    for server in (host_server, site_server):
        server.shutdown()
        server.server_close()


def _origin(url: str) -> str:
    return "/".join(url.split("/")[:3])


def test_a_course_page_on_another_origin_embeds_three_widgets(hosted, page, page_log):
    # (hosted first: its servers close after the page, which holds connections open to them)
    site_url, course_url = hosted
    page.goto(course_url)
    page.wait_for_function(
        "() => document.documentElement.dataset.pyplayEmbedReady === 'true'",
        timeout=START_TIMEOUT_MS,
    )
    gates = page.locator('[data-pyplay-widget="gates"]')
    attention = page.locator('[data-pyplay-widget="attention"]')

    # 1. the gates widget trains (its settings came from its data- attributes)
    gates.get_by_text("New LSTM with 1,297 parameters", exact=False).wait_for(timeout=60_000)
    gates.get_by_role("button", name="Step", exact=True).click()
    gates.locator("pre", has_text=STATUS).wait_for(timeout=60_000)
    assert gates.locator(".bk-Canvas, canvas").count() >= 5  # the gate heatmaps

    # 2. the attention widget decodes the host's input
    box = attention.get_by_role("textbox", name="Source", exact=True)
    assert box.input_value() == "abcdef"
    attention.get_by_role("button", name="Translate", exact=True).click()
    attention.get_by_text(re.compile(r"^Output: ")).wait_for(timeout=60_000)
    assert gates.locator("pre", has_text=STATUS).is_visible()  # the other widget kept its state

    # 3. the iframe form: a page of the site, on its own
    frame = page.frame_locator("iframe")
    frame.get_by_role("button", name="Compare RNN vs LSTM").wait_for(timeout=START_TIMEOUT_MS)
    frame.get_by_role("button", name="Step", exact=True).click()
    frame.locator("pre", has_text=STATUS).wait_for(timeout=60_000)
    assert frame.locator("h1").count() == 0  # no header, no tabs: only the widget
    assert frame.get_by_role("tab").count() == 0

    # one runtime for the two script-tag widgets (and one in the iframe's page)
    assert page.evaluate("window.pyplayEmbed.runtimes") == 1
    wasm = [u for u in page_log.requests if u.endswith("pyodide.asm.wasm")]
    assert 1 <= len(wasm) <= 2, wasm
    # widths follow the host's layout; the height the host set is kept
    width = page.evaluate("document.querySelector('[data-pyplay-widget=gates]').clientWidth")
    root = gates.locator(".pyplay-root").first.bounding_box()
    assert root is not None and root["width"] >= 0.95 * width
    assert attention.bounding_box()["height"] >= 560

    origins = {_origin(site_url), _origin(course_url)}
    outside = [u for u in page_log.requests if not u.startswith(("blob:", "data:"))]
    outside = [u for u in outside if _origin(u) not in origins]
    assert outside == []
    assert page_log.failures == [] and page_log.errors == []


def test_the_iframe_form_reports_a_bad_widget_as_a_message(page, page_log, site_url):
    page.goto(site_url + "index.html?embed=heads&d_model=7&nhead=4")
    wait_ready(page)
    page.get_by_text("d_model must be an integer from 8 to 64, got '7'").wait_for(timeout=60_000)
    assert page.get_by_role("button", name="Train", exact=True).is_visible()
    page.goto(site_url + "index.html?embed=nothing")
    wait_ready(page)
    page.get_by_text(re.compile(r"widget must be one of rnn, seq2seq")).wait_for(timeout=60_000)
    assert page_log.errors == []


def test_the_build_ships_the_embed_files(site):
    dist, _ = site
    for name in ("embed.js", "client.js", "course.html"):
        assert (dist / name).is_file(), name
