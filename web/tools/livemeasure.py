"""What the live look-inside views cost while a lesson trains in the page (issue 17's figure):
``python web/measure.py live`` runs this alone; ``python web/measure.py`` runs it after the
start-up and step figures.

For every lesson with look-inside views, in the built playground in headless Chromium: Train,
then alternately, in windows of ``WINDOW_S`` seconds, the training speed (steps per second
from the trainer's own step count) with the live redraws on and with them off
(:attr:`pyplay.ui.session.TrainingSession.live`, a class attribute the page's Python sets), and,
with them on, how often the views were redrawn and how long a redraw took (the session's
``refresh_log``). Both sides share the machine alike: the windows alternate and each figure is
the median of ``ROUNDS`` windows. What the browser spends drawing the new data (its main
thread, beside the worker) is part of the cost measured, as it is for a learner.
Prints figures; asserts nothing (the tests do the asserting).
"""

from __future__ import annotations

import json
import statistics
import time
from typing import Any

# the lessons with look-inside views that follow training (keys; titles from their specs)
LIVE_KEYS = (
    "rnn", "seq2seq", "transformer", "ctc", "memory", "recursive", "glimpse", "images", "pointer",
)  # fmt: skip
WINDOW_S = 8.0  # seconds of training per window
ROUNDS = 2  # windows with live views on, and as many with them off, alternating

# the training session of the lesson that is training, in the page's Python: its steps so
# far, the clock, and its redraws (clock, seconds) so far
PROBE = """
import gc, json, time
from pyplay.ui.session import TrainingSession
running = [s for s in gc.get_objects()
           if isinstance(s, TrainingSession) and getattr(s.state, "running", False)]
out = None
if len(running) > 1:
    raise RuntimeError(f"{len(running)} lessons train at once")
if running:
    s = running[0]
    st = s.state  # a Trainer lesson counts in its trainer, a fit lesson (Dynamic) in _step
    steps = st._file_step() if hasattr(st, "_file_step") else st.trainer.step_count
    out = {"t": time.perf_counter(), "steps": int(steps),
           "redraws": [list(r) for r in s.refresh_log]}
json.dumps(out)
"""


def _probe(page: Any) -> dict[str, Any]:
    found = json.loads(page.evaluate("c => window.pyplay.runPython(c)", PROBE))
    if found is None:
        raise RuntimeError("no lesson is training in the page")
    return dict(found)


def _set_live(page: Any, live: bool) -> None:
    code = f"from pyplay.ui.session import TrainingSession\nTrainingSession.live = {live}\n'ok'"
    page.evaluate("c => window.pyplay.runPython(c)", code)


def _window(page: Any) -> dict[str, float]:
    """Steps per second over one window, and the redraws that started in it."""
    a = _probe(page)
    time.sleep(WINDOW_S)
    b = _probe(page)
    seconds = b["t"] - a["t"]
    redraws = [took for start, took in b["redraws"] if a["t"] <= start < b["t"]]
    return {
        "steps_per_s": (b["steps"] - a["steps"]) / seconds,
        "redraws_per_s": len(redraws) / seconds,
        "redraw_s": statistics.median(redraws) if redraws else float("nan"),
    }


def lesson_figures(page: Any, title: str) -> dict[str, float]:
    """Train lesson ``title`` and measure it with live views on and off (alternating)."""
    page.get_by_text(title, exact=True).first.click()
    train = page.get_by_role("button", name="Train", exact=True).locator("visible=true").first
    train.wait_for(timeout=120_000)
    _set_live(page, True)
    train.click()
    time.sleep(3.0)  # past the first steps (caches, the first redraw)
    on, off = [], []
    try:
        for _ in range(ROUNDS):
            _set_live(page, True)
            on.append(_window(page))
            _set_live(page, False)
            off.append(_window(page))
    finally:
        _set_live(page, True)
        page.get_by_role("button", name="Pause", exact=True).locator("visible=true").first.click()
    with_live = statistics.median(w["steps_per_s"] for w in on)
    without = statistics.median(w["steps_per_s"] for w in off)
    return {
        "with": with_live,
        "without": without,
        "cost": 1.0 - with_live / without,
        "redraws_per_s": statistics.median(w["redraws_per_s"] for w in on),
        "redraw_s": statistics.median(w["redraw_s"] for w in on),
    }


# the main thread's long tasks (over 50 ms), recorded in the page from now on: [start, ms]
LONG_TASKS = """() => {
  if (window.pyplayLongTasks) return;
  window.pyplayLongTasks = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.pyplayLongTasks.push([e.startTime, e.duration]);
  }).observe({type: "longtask", buffered: true});
}"""
MAIN_S = 20.0  # seconds of training per lesson for the main thread's figures


def main_thread(page: Any, title: str) -> dict[str, float]:
    """Train lesson ``title`` for :data:`MAIN_S` seconds and return the share of that time its
    page's main thread spent in long tasks (the browser's ``longtask`` entries: 50 ms or more
    without a break, in which a click or a key waits), the longest task in seconds and the
    steps per second trained."""
    page.evaluate(LONG_TASKS)
    page.get_by_text(title, exact=True).first.click()
    train = page.get_by_role("button", name="Train", exact=True).locator("visible=true").first
    train.wait_for(timeout=120_000)
    train.click()
    time.sleep(3.0)  # past the first steps (caches, the first redraw)
    try:
        a = _probe(page)
        t0 = float(page.evaluate("performance.now()"))  # the page's clock (its main thread
        time.sleep(MAIN_S)  # may answer late: the window is what the page's clock says)
        t1, tasks = page.evaluate("[performance.now(), window.pyplayLongTasks]")
        b = _probe(page)
    finally:
        page.get_by_role("button", name="Pause", exact=True).locator("visible=true").first.click()
    inside = [(s, d) for s, d in tasks if s + d > t0 and s < t1]
    busy = sum(min(s + d, t1) - max(s, t0) for s, d in inside)
    return {
        "share": busy / (t1 - t0),
        "longest_s": max((d for _, d in inside), default=0.0) / 1000,
        "steps_per_s": (b["steps"] - a["steps"]) / (b["t"] - a["t"]),
    }


def main_thread_report(page: Any, condition: str) -> list[str]:
    """:func:`main_thread` for every lesson with a tab (:data:`pyplay.ui.lessons.LESSONS`),
    as lines headed by ``condition``."""
    from pyplay.ui.lessons import LESSONS

    lines = [
        f"  the main thread while each lesson trains, {condition} ({MAIN_S:g} s each; target: "
        "at most 25% in long tasks, none over 250 ms):"
    ]
    for spec in LESSONS:
        if spec.parent is not None:
            continue
        f = main_thread(page, spec.title)
        lines.append(
            f"    {spec.title}: {100 * f['share']:4.1f}% in long tasks, longest "
            f"{1e3 * f['longest_s']:4.0f} ms, {f['steps_per_s']:6.2f} steps/s"
        )
        print(lines[-1], flush=True)
    return lines


PICKS = 6  # heads picked while the Transformers lesson trains


def head_pick_seconds(page: Any) -> list[float]:
    """Seconds from picking a head in the Transformers lesson while it trains to that head's
    title on screen (Playwright's round trips included), for :data:`PICKS` picks."""
    from pyplay.ui.lessons import SPECS

    page.get_by_text(SPECS["transformer"].title, exact=True).first.click()
    train = page.get_by_role("button", name="Train", exact=True).locator("visible=true").first
    train.wait_for(timeout=120_000)
    train.click()
    time.sleep(3.0)
    select = page.get_by_role("combobox", name="Head")
    heads = [o for o in select.locator("option").all_inner_texts() if o.strip()]
    took = []
    try:
        for k in range(PICKS):
            head = heads[(k + 1) % len(heads)]
            t0 = time.perf_counter()
            select.select_option(head)
            title = page.locator(".pyplay-head-title pre", has_text=f"head {head}")
            title.first.wait_for(timeout=60_000)
            took.append(time.perf_counter() - t0)
            time.sleep(1.0)
    finally:
        page.get_by_role("button", name="Pause", exact=True).locator("visible=true").first.click()
    return took


def report(page: Any) -> list[str]:
    """The lines of figures of every lesson (measured in ``page``, which has settled)."""
    lines = [
        f"  live views while training ({ROUNDS} alternating windows of {WINDOW_S:g} s each, "
        "medians; target: cost at most 20%, a redraw at least once a second):"
    ]
    from pyplay.ui.lessons import SPECS

    for title in (SPECS[key].title for key in LIVE_KEYS):
        f = lesson_figures(page, title)
        lines.append(
            f"    {title}: {f['with']:6.2f} steps/s with, {f['without']:6.2f} without "
            f"(cost {100 * f['cost']:4.1f}%); {f['redraws_per_s']:.2f} redraws/s, "
            f"{1e3 * f['redraw_s']:.0f} ms each"
        )
    picks = head_pick_seconds(page)
    lines.append(
        f"  a head picked while the Transformers lesson trains, to its title on screen "
        f"(target 0.5 s): median {statistics.median(picks):.2f} s, max {max(picks):.2f} s "
        f"over {len(picks)} picks"
    )
    return lines
