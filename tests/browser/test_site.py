"""The built site: offline, pinned, interactive, and faster on a second visit."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from browserkit import PageLog, step_count, visible_button, wait_ready, wait_step

pytestmark = pytest.mark.browser
SHARED_PAGE = "module"  # a page of its own: its tests break callbacks and patches (conftest.py)

# the versions the site must ship, as pyproject.toml declares them (the one place)
_PROJECT = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
PYODIDE = _PROJECT["tool"]["pyplay"]["site"]["pyodide"]
UI = dict(pin.split("==") for pin in _PROJECT["project"]["optional-dependencies"]["ui"])


def test_lock_pins_every_file_by_sha256(site):
    dist, _ = site
    lock = json.loads((dist / "pyplay-lock.json").read_text())
    assert lock["pyodide"] == PYODIDE
    assert {"numpy", "panel", "bokeh", "pyplay"} <= set(lock["packages"])
    assert lock["packages"]["panel"]["version"] == UI["panel"]
    assert lock["packages"]["bokeh"]["version"] == UI["bokeh"]
    for name, entry in lock["files"].items():
        digest = hashlib.sha256((dist / name).read_bytes()).hexdigest()
        assert digest == entry["sha256"], name
    served = json.loads((dist / "pyodide" / "pyodide-lock.json").read_text())
    for name, pin in lock["packages"].items():
        assert served["packages"][name]["sha256"] == pin["sha256"], name


def test_official_wheels_match_npm_lock(site, build):
    dist, _ = site
    official = json.loads((build.pyodide_core() / "pyodide-lock.json").read_text())
    lock = json.loads((dist / "pyplay-lock.json").read_text())
    checked = [n for n, p in lock["packages"].items() if p["source"] == "official"]
    assert "numpy" in checked
    for name in checked:
        assert lock["packages"][name]["sha256"] == official["packages"][name]["sha256"], name


def _hold_build_lock(build, log, seconds: float) -> subprocess.Popen:
    """Another process that holds the build lock for ``seconds``, logging to ``log``."""
    code = (
        "import fcntl, pathlib, sys, time\n"
        "log = pathlib.Path(sys.argv[2])\n"
        "with open(sys.argv[1], 'w') as h:\n"
        "    fcntl.flock(h, fcntl.LOCK_EX)\n"
        "    log.write_text('held\\n')\n"
        "    time.sleep(float(sys.argv[3]))\n"
        "    log.write_text(log.read_text() + 'released\\n')\n"
    )
    lock = build.CACHE / "build.lock"
    holder = subprocess.Popen([sys.executable, "-c", code, str(lock), str(log), str(seconds)])
    for _ in range(600):  # until the other process holds it
        if log.exists():
            return holder
        time.sleep(0.05)
    holder.kill()
    raise AssertionError("the lock holder did not start")


def test_one_build_at_a_time(site, build, tmp_path, monkeypatch):
    """Builds share web/.cache and web/dist.tmp: a second build waits for the first, and when
    that one left the site up to date it builds nothing more."""
    log = tmp_path / "order.txt"
    holder = _hold_build_lock(build, log, 3.0)
    with build.build_lock() as waited:
        log.write_text(log.read_text() + "second\n")
    assert holder.wait(timeout=60) == 0
    assert waited is True and log.read_text().splitlines() == ["held", "released", "second"]

    def must_not_build(dist):
        raise AssertionError("built again although the site was fresh")

    monkeypatch.setattr(build.assemble, "_build", must_not_build)
    holder = _hold_build_lock(build, tmp_path / "again.txt", 3.0)
    assert build.is_fresh() and build.build() == build.DIST
    assert holder.wait(timeout=60) == 0


def test_page_starts_offline_with_stages_and_no_errors(ready_page, page_log, site_url):
    timings = ready_page.evaluate("window.pyplayTimings")
    assert set(timings["stages"]) == {"runtime", "packages", "modules", "app", "draw"}
    assert page_log.external(site_url.rstrip("/")) == []
    assert page_log.failures == []
    assert page_log.errors == []
    # the app, not the loader, is on screen
    assert ready_page.get_by_role("button", name="Train").is_visible()
    assert ready_page.locator("#pyplay-loader").count() == 0


def test_second_visit_is_served_from_the_cache(browser, site_url):
    ctx = browser.new_context()
    try:
        first = PageLog()
        page = ctx.new_page()
        first.attach(page)
        page.goto(site_url)
        wait_ready(page)
        page.wait_for_function("() => navigator.serviceWorker.controller !== null", timeout=60_000)
        page.close()
        second = PageLog()
        page = ctx.new_page()
        second.attach(page)
        from_sw: list[str] = []
        page.on("response", lambda r: r.from_service_worker and from_sw.append(r.url))
        page.goto(site_url)
        wait_ready(page)
        wasm = [u for u in from_sw if u.endswith("pyodide.asm.wasm")]
        assert wasm, "the second visit fetched the runtime from the network"
        assert any(u.endswith(".whl") for u in from_sw)
        assert second.errors == []
    finally:
        ctx.close()


def test_cdn_variant_points_at_pinned_cdns(build, tmp_path):
    dist = build.build_cdn(tmp_path / "cdn")
    page = (dist / "index.html").read_text()
    worker = (dist / "worker.js").read_text()
    assert f"https://cdn.bokeh.org/bokeh/release/bokeh-{UI['bokeh']}.min.js" in page
    assert f"https://cdn.holoviz.org/panel/{UI['panel']}/dist/panel.min.js" in page
    assert f"https://cdn.jsdelivr.net/pyodide/v{PYODIDE}/full/" in worker
    assert f'"panel=={UI["panel"]}"' in worker and f'"bokeh=={UI["bokeh"]}"' in worker
    assert list(dist.glob("pyplay-*.whl"))


BREAK_A_SELECT = """
from bokeh.models import Select
from panel.io.state import state

def broken(attr, old, new):
    raise RuntimeError("deliberately broken callback")

selects = [
    m for m in state.curdoc.models if isinstance(m, Select) and "Character model" in str(m.options)
]
for select in selects:
    select.on_change("value", broken)
"ok" if selects else "no select"
"""


def test_a_failing_python_callback_shows_a_notice_and_logs_an_error(ready_page, page_log):
    page = ready_page
    assert page.evaluate("c => window.pyplay.runPython(c)", BREAK_A_SELECT) == "ok"
    page.locator("select:visible", has_text="Character model").select_option(label="Parity")
    notice = page.locator("#pyplay-notice")
    notice.wait_for(timeout=30_000)
    assert "deliberately broken callback" in notice.inner_text()
    assert "What you trained and typed is kept" in notice.inner_text()
    assert any("deliberately broken callback" in e for e in page_log.errors)
    notice.click()  # dismissed
    notice.wait_for(state="detached", timeout=5_000)


# a document patch the page cannot apply (a change to a model it does not hold), sent from the
# worker as Panel's link sends every change
BAD_PATCH = """
import js
from pyodide.ffi import to_js
event = {"kind": "ModelChanged", "model": {"id": "p-not-in-the-page"}, "attr": "visible",
         "new": False}
sendPatch(to_js({"events": [event]}, dict_converter=js.Object.fromEntries), js.Map.new(), None)
"sent"
"""


def test_a_patch_the_page_cannot_apply_shows_a_notice_and_logs_an_error(ready_page, page_log):
    """An error applying a patch is said (console and notice), not an unhandled rejection of
    the worker's message handler that no one sees; later patches still apply."""
    page = ready_page
    assert page.evaluate("c => window.pyplay.runPython(c)", BAD_PATCH) == "sent"
    notice = page.locator("#pyplay-notice")
    notice.wait_for(timeout=30_000)
    assert "could not be redrawn" in notice.inner_text()
    assert "What you trained and typed is kept" in notice.inner_text()
    assert any("a change from Python could not be drawn" in e for e in page_log.errors)
    notice.click()
    notice.wait_for(state="detached", timeout=5_000)
    before = step_count(page)
    visible_button(page, "Step").click()  # the next patches (the step's status) are drawn
    assert wait_step(page, before + 1, timeout_s=30) == before + 1


def test_benchmarks_are_not_shipped_but_run_in_the_page(ready_page):
    """The site's pyplay leaves out pyplay.bench (a developer's tool); web/measure.py copies it
    into the page, where it runs unchanged."""
    from pagemeasure import install_bench

    page = ready_page
    spec = "import importlib.util; str(importlib.util.find_spec('pyplay.bench') is None)"
    assert page.evaluate("c => window.pyplay.runPython(c)", spec) == "True"
    assert install_bench(page) == "ok"
    run = "c => window.pyplay.runPython(c)"
    names = page.evaluate(run, "import pyplay.bench.report as b; b.prepare_steps(warmup=1)")
    assert names.split() == ["lstm_b32", "lstm_b1", "seq2seq", "beam"]
    for name in names.split():  # what web/measure.py times, one step at a time
        once = f"import pyplay.bench.report as b; str(b.time_once({name!r}))"
        ms = float(page.evaluate(run, once))
        assert 0 < ms < 60_000, (name, ms)


# four animation-frame callbacks of about 10 ms each (a plot's paint), a fifth cancelled:
# [callback, frame time] in the order they ran
FRAMES = """() => new Promise((resolve) => {
  const ran = [];
  const paint = (k) => (t) => {
    const until = performance.now() + 10;
    while (performance.now() < until) {}
    ran.push([k, t]);
    if (ran.length === 4) setTimeout(() => resolve(ran), 100);
  };
  for (const k of [1, 2, 3]) requestAnimationFrame(paint(k));
  cancelAnimationFrame(requestAnimationFrame(paint(5)));
  requestAnimationFrame(paint(4));
})"""


def test_paints_are_spread_over_frames_in_order(ready_page):
    """The page runs a frame's callbacks (BokehJS paints each plot in one) while they took
    under 16 ms and the rest in the next frame, in order (web/site/client.js): a live
    redraw's plots no longer paint in one long task. Each callback here takes 10 ms, so at
    most two share a frame; the cancelled one never runs."""
    ran = ready_page.evaluate(FRAMES)
    assert [k for k, _ in ran] == [1, 2, 3, 4]
    frames = [t for _, t in ran]
    assert frames == sorted(frames) and len(set(frames)) >= 2, ran
    assert all(frames.count(t) <= 2 for t in frames), ran
