"""Figures of the built playground in headless Chromium: ``python web/measure.py`` runs this.

Prints, measured in one browser run of ``ROUNDS`` rounds (medians, and the range of the
ratios): bare Pyodide + NumPy start (``baseline.html``), time to first paint and to interactive
for the playground cold (fresh profile, empty cache) and on a second visit (service worker),
each ratio against the same round's bare start, bytes transferred (gzip where the server
compresses, as static hosts do), the seconds from clicking a lesson's tab to its plots (the
last lesson right after the start, and every lesson once the page has settled), the start-up
stages of the last round, and the time of one
pyplay training step in the page (``pyplay.bench.report.page_steps``, once the page has
settled) against the same step natively, one step at a time by turns
(:func:`interleaved_steps_ms`). The site's wheel leaves the
benchmarks out (they are a developer's tool): :func:`install_bench` copies ``pyplay/bench/``
into the page's Python first. ``python web/measure.py tabs``: the lesson tabs' figures alone
(:func:`tabs_only`); ``python web/measure.py steps``: the step figures alone (:func:`steps_only`);
``python web/measure.py first``: a learner's first minute, cold, to a falling loss
(:mod:`firstminute`); ``python web/measure.py memory [minutes]``: the memory of the page while
a lesson trains (:mod:`memorymeasure`); ``python web/measure.py transformer [REV]``: the
Transformers lesson's steps per second against the site of an earlier commit, by turns
(:mod:`transformermeasure`).
Prints figures; asserts nothing (tests do the asserting).
"""

from __future__ import annotations

import base64
import json
import re
import statistics
import subprocess
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

import memorymeasure
import transformermeasure

import livemeasure
import sitebuild

ROOT = sitebuild.ROOT
# headless Chromium's flags here and in the browser tests (tests/browser/conftest.py)
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ROUNDS = 3
COLD_MB_TARGET = 0.6 * 42.1  # issue 22: at most 60% of the 42.1 MB a cold visit took before
READY = "document.documentElement.dataset.pyplayReady === 'true'"
SETTLED = "document.documentElement.dataset.pyplaySettled === 'true'"


def lesson_titles() -> list[str]:
    """The playground's lesson tabs, in order (the first is open at start)."""
    if str(ROOT) not in sys.path:  # ``python web/measure.py`` puts web/ first, not the root
        sys.path.insert(0, str(ROOT))
    from pyplay.ui.lessons import LESSONS

    return [spec.title for spec in LESSONS if spec.parent is None]


STEP = re.compile(r"^\s*Step\s*$")
# in the page, before the click: note the click's time, then check at every animation frame
# whether one of the given Step buttons and one of the given plots not shown before are shown;
# the time is taken in the task after that frame, once the browser has drawn it
WATCH_OPENING = """([buttons, canvases]) => {
  const shown = (el) => el.isConnected && el.checkVisibility();
  const before = new Set([...buttons, ...canvases].filter(shown));
  const fresh = (els) => els.some((el) => !before.has(el) && shown(el));
  const watch = (window.pyplayTabOpening = {clicked: null, shown: null});
  document.addEventListener("click", () => { watch.clicked = performance.now(); },
                            {capture: true, once: true});
  const frame = () => {
    if (window.pyplayTabOpening !== watch) return;  // a later opening is watched instead
    if (watch.clicked !== null && fresh(buttons) && fresh(canvases)) {
      setTimeout(() => { watch.shown = performance.now(); });  // once this frame is drawn
    } else {
      requestAnimationFrame(frame);
    }
  };
  requestAnimationFrame(frame);
}"""


def open_tab_s(page: Any, title: str) -> float:
    """Seconds from the click on lesson tab ``title`` to the first frame that shows its Step
    button and a plot, timed in the page (:data:`WATCH_OPENING`) when they were drawn ahead
    into the hidden tab; Playwright's own wait then confirms both are on screen.

    Timing the opening by that wait alone (as before) added its polling to the figure: it
    scans the page's every element (~4,300 Bokeh views, through their shadow roots) at every
    frame, on the main thread the opening needs; in one run 0.5-0.7 s of the 1.6 s it gave
    the Transformers tab. A lesson whose views are made at the click (not drawn ahead: right
    after the start) is timed by the wait, from the click on.
    """
    tab = page.get_by_text(title, exact=True).first
    step = page.locator("button:visible").filter(has_text=STEP).first
    buttons = page.locator("button").filter(has_text=STEP).element_handles()
    canvases = page.locator("canvas").element_handles()
    page.evaluate(WATCH_OPENING, [buttons, canvases])
    start = time.perf_counter()
    tab.click()
    step.wait_for(timeout=120_000)
    page.locator("canvas:visible").first.wait_for(timeout=120_000)
    waited = time.perf_counter() - start
    watch = page.evaluate(
        """() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(
             () => done(window.pyplayTabOpening))))"""
    )
    if watch["clicked"] is None or watch["shown"] is None:
        return waited  # made at the click: timed from outside
    return (watch["shown"] - watch["clicked"]) / 1000


def _visit(context: Any, url: str, ready: str, timeout_ms: int = 240_000) -> dict[str, float]:
    """Load ``url`` until ``ready``; bytes are counted by the server (page and worker alike)."""
    handler = sitebuild.Handler
    page = context.new_page()
    print(f"  loading {url} ...", flush=True)
    sent_before = handler.bytes_sent
    start = time.perf_counter()
    page.goto(url)
    page.wait_for_function(f"() => {ready}", timeout=timeout_ms)
    wall = time.perf_counter() - start
    paint = page.evaluate(
        "(performance.getEntriesByName('first-contentful-paint')[0] || {startTime: NaN}).startTime"
    )
    time.sleep(0.5)
    sent = handler.bytes_sent - sent_before
    result = {"interactive_s": wall, "first_paint_s": paint / 1000, "bytes": float(sent)}
    result["page"] = page  # type: ignore[assignment]
    return result


STEP_SAMPLES = {"lstm_b32": 30, "lstm_b1": 30, "seq2seq": 30, "beam": 10}


def interleaved_steps_ms(page: Any) -> dict[str, tuple[list[float], list[float]]]:
    """Per step of :func:`pyplay.bench.report.page_steps`: ``STEP_SAMPLES`` single steps in
    the page's Python worker and as many natively, one after the other (which side goes first
    alternates), as lists of milliseconds ``(page, native)``.

    The machine's speed changes from second to second here (the same step, natively or in
    Pyodide, takes 1.0x or 1.6x its best time for seconds at a stretch, all of its functions
    alike); timed step by step, both sides see the same spells.
    """
    from pyplay.bench import report

    run = "c => window.pyplay.runPython(c)"
    names = report.prepare_steps().split()
    page.evaluate(run, "import pyplay.bench.report as b; b.prepare_steps()")
    out: dict[str, tuple[list[float], list[float]]] = {}
    for name in names:
        in_page: list[float] = []
        native: list[float] = []
        once = f"import pyplay.bench.report as b; b.time_once({name!r})"
        for i in range(STEP_SAMPLES[name]):
            if i % 2:
                native.append(report.time_once(name))
            in_page.append(float(page.evaluate(run, once)))
            if not i % 2:
                native.append(report.time_once(name))
        out[name] = (in_page, native)
    return out


def install_bench(page: Any) -> str:
    """Copy ``pyplay/bench/`` from the working tree into the page's pyplay (its Python
    worker's site-packages), which the site's wheel leaves out; returns ``"ok"``."""
    files = {p.name: p.read_text() for p in sorted((ROOT / "pyplay" / "bench").glob("*.py"))}
    payload = base64.b64encode(json.dumps(files).encode()).decode()
    code = (
        "import base64, importlib, json, os, pyplay\n"
        "folder = os.path.join(os.path.dirname(pyplay.__file__), 'bench')\n"
        "os.makedirs(folder, exist_ok=True)\n"
        f"for name, text in json.loads(base64.b64decode('{payload}')).items():\n"
        "    with open(os.path.join(folder, name), 'w') as f:\n"
        "        f.write(text)\n"
        "importlib.invalidate_caches()\n"
        "'ok'\n"
    )
    return str(page.evaluate("c => window.pyplay.runPython(c)", code))


def step_report(steps: dict[str, tuple[list[float], list[float]]]) -> list[str]:
    """Lines of :func:`interleaved_steps_ms`'s figures: medians, their ratio, the ratio in
    each of ``ROUNDS`` consecutive parts of the samples (its range), and the median of the
    per-step ratios (each page step over the native step timed right beside it, which a slow
    spell of the machine hits alike)."""
    lines = ["  steps, one at a time, in the page and natively by turns (medians):"]
    for name, (in_page, native) in steps.items():
        ms, native_ms = statistics.median(in_page), statistics.median(native)
        n = len(in_page) // ROUNDS  # the ratio in each third of the samples
        ratios = sorted(
            statistics.median(in_page[i : i + n]) / statistics.median(native[i : i + n])
            for i in range(0, n * ROUNDS, n)
        )
        paired = statistics.median(a / b for a, b in zip(in_page, native, strict=True))
        what = "beam decode" if name == "beam" else "training step"
        target = " (target 8.2x)" if name == "lstm_b32" else ""
        lines.append(
            f"  {what} {name}: in page {ms:7.2f} ms, native {native_ms:6.2f} ms, "
            f"ratio {ms / native_ms:4.1f}x{target}, thirds {ratios[0]:.1f}-{ratios[-1]:.1f}x, "
            f"per step {paired:.1f}x ({len(in_page)} steps each)"
        )
    return lines


def steps_only(url: str) -> int:
    """``python web/measure.py steps``: only the in-page against native step figures
    (:func:`interleaved_steps_ms`), once the page has settled."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS
        )
        page = browser.new_context().new_page()
        page.goto(url)
        page.wait_for_function(f"() => {SETTLED}", timeout=240_000)
        time.sleep(1.0)
        install_bench(page)
        steps = interleaved_steps_ms(page)
        browser.close()
    print("pyplay playground: training steps in the page against natively (this machine)")
    print("\n".join(step_report(steps)))
    return 0


def first_only(url: str) -> int:
    """``python web/measure.py first [REV]``: a learner's first minute, cold and on a second
    visit (:mod:`firstminute`); with ``REV``, this site's and the site of commit ``REV`` by turns
    in each round (built once: :func:`transformermeasure.site_at`)."""
    import firstminute
    from playwright.sync_api import sync_playwright

    then = None
    if sys.argv[2:3]:
        server, then = sitebuild.serve_in_thread(transformermeasure.site_at(sys.argv[2]))
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS
            )
            lines = firstminute.first_minute(browser, url, bare_start_s, then)
            browser.close()
    finally:
        if then is not None:
            server.shutdown()
            server.server_close()
    print("\n".join(lines))
    return 0


def live_only(url: str) -> int:
    """``python web/measure.py live``: only the live views' figures (:mod:`livemeasure`),
    then the main thread's long tasks while each lesson trains, on the quiet machine and with
    a second browser training beside it (:func:`busy_only` in a process of its own)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS
        )
        page = browser.new_context(viewport={"width": 1440, "height": 900}).new_page()
        page.goto(url)
        page.wait_for_function(f"() => {SETTLED}", timeout=240_000)
        print("pyplay playground: live views (headless Chromium, this machine)", flush=True)
        lines = livemeasure.report(page)
        print("\n".join(lines), flush=True)
        lines += livemeasure.main_thread_report(page, "quiet machine")
        busy = subprocess.Popen([sys.executable, str(MEASURE), "busy", url])
        try:
            time.sleep(BUSY_START_S)  # its start, then its first lesson training
            lines += livemeasure.main_thread_report(page, "a second browser training beside it")
        finally:
            busy.terminate()
            busy.wait(timeout=60)
        browser.close()
    print("\n".join(lines))
    return 0


BUSY_START_S = 45.0  # a second browser's cold start and first training steps, on this machine
MEASURE = Path(__file__).resolve().parents[1] / "measure.py"


def busy_only(url: str) -> int:
    """``python web/measure.py busy [url]``: a second browser that keeps the machine busy, as
    other tabs on a learner's laptop do: the playground's first lesson training until this
    process is stopped (the main thread figures of :func:`live_only`)."""
    from playwright.sync_api import sync_playwright

    url = sys.argv[2] if sys.argv[2:3] else url
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS
        )
        page = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
        page.goto(url)
        train = page.get_by_role("button", name="Train", exact=True).locator("visible=true")
        train.first.wait_for(timeout=240_000)
        train.first.click()
        while True:  # until terminated
            time.sleep(5.0)


def bare_start_s(browser: Any, url: str) -> float:
    """Seconds bare Pyodide + NumPy takes to start in a fresh context (``baseline.html``)."""
    ctx = browser.new_context()
    base = _visit(
        ctx, url + "baseline.html", "document.documentElement.dataset.baselineReady === 'true'"
    )
    bare = float(base["page"].evaluate("window.baselineMs")) / 1000
    ctx.close()
    return bare


def tabs_only(url: str) -> int:
    """``python web/measure.py tabs``: only the seconds to open each lesson's tab once the
    page has settled (the lessons drawn into their hidden tabs: ``web/site/worker.js``), in
    ``ROUNDS`` fresh contexts, each beside a bare start of its own (the machine's speed of the
    moment)."""
    from playwright.sync_api import sync_playwright

    rounds = []
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS
        )
        for _ in range(ROUNDS):
            bare = bare_start_s(browser, url)
            ctx = browser.new_context(viewport={"width": 1280, "height": 800})
            page = _visit(ctx, url, SETTLED)["page"]
            time.sleep(1.0)
            tabs = {t: open_tab_s(page, t) for t in lesson_titles()[1:]}
            ctx.close()
            rounds.append((bare, tabs))
            print(f"  bare {bare:.2f} s; " + ", ".join(f"{t} {s:.2f}" for t, s in tabs.items()))
        browser.close()
    print(f"pyplay playground: opening each lesson's tab once settled ({ROUNDS} rounds)")
    print(f"  bare Pyodide + NumPy start: median {statistics.median(b for b, _ in rounds):.2f} s")
    for title in rounds[0][1]:
        runs = sorted(tabs[title] for _, tabs in rounds)
        print(
            f"  {title}: median {statistics.median(runs):.2f} s "
            f"(rounds {runs[0]:.2f}-{runs[-1]:.2f})"
        )
    worst = max(statistics.median(tabs[t] for _, tabs in rounds) for t in rounds[0][1])
    print(f"  slowest tab (median): {worst:.2f} s (target 1.5 s)")
    return 0


def main() -> int:
    from playwright.sync_api import sync_playwright

    if not sitebuild.is_fresh():
        sitebuild.build()
    server, url = sitebuild.serve_in_thread()
    only = {"live": live_only, "tabs": tabs_only, "steps": steps_only, "first": first_only,
            "busy": busy_only,
            "memory": partial(memorymeasure.memory_only, args=CHROMIUM_ARGS),
            "transformer": partial(transformermeasure.transformer_only,
                                   args=CHROMIUM_ARGS)}  # fmt: skip
    if sys.argv[1:2] and sys.argv[1] in only:
        try:
            return only[sys.argv[1]](url)
        finally:
            server.shutdown()
            server.server_close()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS
            )
            visits = []  # per round: bare start, then the playground cold and again
            for _ in range(ROUNDS):
                bare = bare_start_s(browser, url)
                if visits:
                    visits[-1][2]["page"].context.close()  # the previous round's playground
                ctx = browser.new_context()
                cold = _visit(ctx, url, READY)
                stages = cold["page"].evaluate("window.pyplayTimings")
                # the last lesson at once: the work after the first render is under way
                cold["tab_now_s"] = open_tab_s(cold["page"], lesson_titles()[-1])
                cold["page"].wait_for_function(
                    "() => navigator.serviceWorker.controller !== null", timeout=60_000
                )
                cold["page"].close()
                warm = _visit(ctx, url, READY)
                warm_stages = warm["page"].evaluate("window.pyplayTimings")
                visits.append((bare, cold, warm))
            # time the step only once the deferred packages have loaded, so the worker and
            # the page's main thread are idle (not timing a step that shares the CPU)
            warm["page"].wait_for_function(f"() => {SETTLED}", timeout=120_000)
            time.sleep(1.0)
            warm_stages = warm["page"].evaluate("window.pyplayTimings")
            tabs = {t: open_tab_s(warm["page"], t) for t in lesson_titles()[1:]}
            open_tab_s(warm["page"], lesson_titles()[0])
            install_bench(warm["page"])
            steps = interleaved_steps_ms(warm["page"])
            live = livemeasure.report(warm["page"])
            ctx.close()
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
    print(f"pyplay playground figures (headless Chromium, this machine; {ROUNDS} rounds)")
    bare_s = statistics.median(b for b, _, _ in visits)
    print(f"  bare Pyodide + NumPy start (worker):     {bare_s:6.2f} s (median)")
    for label, index, target in (("cold", 1, 2.0), ("second visit", 2, 1.5)):
        runs = [(v[index], v[0]) for v in visits]
        ratios = sorted(run["interactive_s"] / b for run, b in runs)
        wall = statistics.median(run["interactive_s"] for run, _ in runs)
        paint = statistics.median(run["first_paint_s"] for run, _ in runs)
        mb = statistics.median(run["bytes"] for run, _ in runs) / 1e6
        print(
            f"  {label}: first paint {paint:5.2f} s, interactive {wall:6.2f} s = "
            f"{statistics.median(ratios):4.1f}x bare (target {target}x; rounds "
            f"{ratios[0]:.1f}-{ratios[-1]:.1f}x), {mb:5.1f} MB over the network"
            + (f" (target {COLD_MB_TARGET:.1f} MB)" if label == "cold" else "")
        )
    now = sorted(v[1]["tab_now_s"] for v in visits)
    print(
        f"  opening the last lesson's tab right after the start: median "
        f"{statistics.median(now):.2f} s (rounds {now[0]:.2f}-{now[-1]:.2f} s)"
    )
    print(
        f"  opening each other lesson's tab once settled (target 1.5 s): max "
        f"{max(tabs.values()):.2f} s; " + ", ".join(f"{t} {s:.2f}" for t, s in tabs.items())
    )
    print("  stages of the last round:")
    for visit, timings in (("cold", stages), ("second visit", warm_stages)):
        marks = timings["stages"]
        worker = timings.get("worker", {})
        print(
            f"  {visit} stages (s since page start): "
            + ", ".join(f"{k} {v / 1000:.1f}" for k, v in marks.items())
            + f", ready {timings['ready'] / 1000:.1f}"
            + f" (service worker control after {timings.get('serviceWorker', 0) / 1000:.1f})"
        )
        print(
            "    worker (s since worker start): "
            + ", ".join(f"{k} done {v / 1000:.1f}" for k, v in worker.items())
        )
    print("\n".join(step_report(steps)))
    print("\n".join(live))
    return 0


if __name__ == "__main__":
    sys.exit(main())
