"""The Transformers lesson's training speed in the page against an earlier commit's, same
settings, same machine, same run (issue 35): ``python web/measure.py transformer [REV]``.

The earlier code is built as the site it was: a git worktree of ``REV`` (default
:data:`BASELINE_REV`, the code when issue 35 measured the lesson at 5.9 steps/s) in
``web/.cache/at-REV/``, its download cache linked from this checkout's (so its build needs no
network when the pins are the same), and its own ``build.py``. Both sites are served on
localhost and opened in one headless Chromium, each in a fresh context at 1440x900, settled
(every lesson drawn ahead), on the Transformers tab at its defaults. Then, in
``ROUNDS`` rounds, each lesson trains alone for ``WINDOW_S`` seconds (the other paused; which
goes first alternates), and its steps per second come from its trainer's own step count. The
windows alternate, so both sides share the machine's moments alike; each figure is a median.
Prints figures; asserts nothing (the tests do the asserting).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import sitebuild

ROOT = sitebuild.ROOT
CACHE = ROOT / "web" / ".cache"
BASELINE_REV = "1c13090"  # the last commit before issue 35's work began (2026-11-27)
TITLE = "Transformers"  # the lesson's tab, then and now
WINDOW_S = 8.0  # seconds of training per window
ROUNDS = 3  # windows per side
WARM_S = 3.0  # training before the first window (caches, the first redraw)

# the page's Python: the training lesson's trainer step count and the clock; the session
# class was pyplay.ui.training.TrainingView before it became pyplay.ui.session's
PROBE = """
import gc, json, time
try:
    from pyplay.ui.session import TrainingSession as Loop
except ImportError:
    from pyplay.ui.training import TrainingView as Loop
running = [s for s in gc.get_objects()
           if isinstance(s, Loop) and getattr(getattr(s, "state", None), "running", False)]
if len(running) != 1:
    raise RuntimeError(f"{len(running)} lessons train, not one")
json.dumps({"t": time.perf_counter(), "steps": int(running[0].state.trainer.step_count)})
"""


def site_at(rev: str) -> Path:
    """The built site of commit ``rev`` (its ``web/dist``), built once per commit."""
    full = subprocess.run(
        ["git", "rev-parse", "--verify", f"{rev}^{{commit}}"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    tree = CACHE / f"at-{full[:12]}"
    dist = tree / "web" / "dist"
    if (dist / "index.html").is_file():
        return dist
    if tree.exists():  # a build that did not finish
        subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=False)
        shutil.rmtree(tree, ignore_errors=True)
    subprocess.run(
        ["git", "worktree", "add", "--detach", "--force", str(tree), full], cwd=ROOT, check=True
    )
    own = tree / "web" / ".cache"
    own.mkdir(parents=True, exist_ok=True)
    for part in CACHE.iterdir():  # the downloads (verified when used), linked not copied
        if part.name.startswith(("at-", "build.lock", "profile", "slim", "carrier")):
            continue
        if not (own / part.name).exists():
            (own / part.name).symlink_to(part.resolve())
    env = {**os.environ, "PYTHONPATH": str(tree)}
    print(f"  building the site of {rev} ({full[:12]}) in {tree} ...", flush=True)
    subprocess.run([sys.executable, "build.py"], cwd=tree, env=env, check=True)
    return dist


def _probe(page: Any) -> dict[str, float]:
    return dict(json.loads(page.evaluate("c => window.pyplay.runPython(c)", PROBE)))


def _button(page: Any, name: str) -> Any:
    return page.get_by_role("button", name=name, exact=True).locator("visible=true").first


def _open(browser: Any, url: str) -> Any:
    """A fresh context on ``url``, settled, on the Transformers tab."""
    page = browser.new_context(viewport={"width": 1440, "height": 900}).new_page()
    page.goto(url)
    page.wait_for_function(
        "() => document.documentElement.dataset.pyplaySettled === 'true'", timeout=300_000
    )
    page.get_by_text(TITLE, exact=True).first.click()
    _button(page, "Train").wait_for(timeout=120_000)
    return page


def _window(page: Any, warm_s: float) -> float:
    """Train alone for ``warm_s`` and then :data:`WINDOW_S` seconds; steps per second in the
    window."""
    _button(page, "Train").click()
    try:
        time.sleep(warm_s)
        a = _probe(page)
        time.sleep(WINDOW_S)
        b = _probe(page)
    finally:
        _button(page, "Pause").click()
        time.sleep(0.5)  # the slice under way ends
    return (b["steps"] - a["steps"]) / (b["t"] - a["t"])


def transformer_only(url: str, args: list[str]) -> int:
    """``python web/measure.py transformer [REV]``: the Transformers lesson's steps per second
    in this checkout's site and in the site of ``REV``, by turns (:data:`ROUNDS` windows each);
    ``args``: Chromium's flags."""
    from playwright.sync_api import sync_playwright

    rev = sys.argv[2] if sys.argv[2:3] else BASELINE_REV
    then_dist = site_at(rev)
    server, then_url = sitebuild.serve_in_thread(then_dist)
    sides: dict[str, list[float]] = {"then": [], "now": []}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path="/usr/bin/chromium", headless=True, args=args
            )
            pages = {"then": _open(browser, then_url), "now": _open(browser, url)}
            for k in range(ROUNDS):
                order = ("then", "now") if k % 2 == 0 else ("now", "then")
                for side in order:
                    steps = _window(pages[side], WARM_S)
                    sides[side].append(steps)
                    print(f"  round {k + 1}: {side} {steps:.2f} steps/s", flush=True)
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
    then_s, now_s = (statistics.median(sides[s]) for s in ("then", "now"))
    ratios = sorted(n / t for n, t in zip(sides["now"], sides["then"], strict=True))
    print(f"pyplay playground: the Transformers lesson at its defaults, against {rev}")
    print(f"  {rev}: median {then_s:.2f} steps/s (windows {_span(sides['then'])})")
    print(f"  this checkout: median {now_s:.2f} steps/s (windows {_span(sides['now'])})")
    print(
        f"  ratio, same run: {now_s / then_s:.2f}x (per round {ratios[0]:.2f}-{ratios[-1]:.2f}x;"
        " target 2x)"
    )
    return 0


def _span(values: list[float]) -> str:
    return f"{min(values):.2f}-{max(values):.2f}"
