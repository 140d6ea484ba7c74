"""The first minute of a learner, measured: ``python web/measure.py first``.

Per round, in one headless Chromium: the bare Pyodide + NumPy start (``baseline.html``), then
a cold open of the playground (fresh context, empty cache) and a second visit (a profile that
opened it once before: from the browser's cache), in each of which the learner clicks Train as
soon as it can be clicked, and the seconds (from ``goto``) until

- the page is readable (the lesson tabs drawn, the first lesson's among them),
- Train is visible and enabled (the first lesson's workbench, which the page opens on),
- the first loss is shown in the status line ("Step N: loss X (baseline L)"),
- the loss shown is below half the lesson's baseline L, the loss of the trivial predictor the
  status line and the loss plot show (issue 35's measure: a model that has learnt something).

Prints the medians over ``ROUNDS`` rounds with each round's figures, and the ratio of the
falling loss to the bare start of the same round; ``python web/measure.py first REV`` measures
the site of commit ``REV`` beside this one, by turns in each round (before and after, on the
machine's same moments). Asserts nothing (tests do the asserting).
"""

from __future__ import annotations

import re
import statistics
import time
from typing import Any

ROUNDS = 3
# the first lesson's status line: "Step 12: loss 0.1234 (baseline 0.1667), 330.0 steps/s"
STATUS = re.compile(r"^Step (\d+): loss (\d+(?:\.\d+)?) \(baseline (\d+(?:\.\d+)?)\)")
# the visible status line of the lesson on screen ("Step 12: loss 0.1234, ...")
STATUS_TEXT = """() => {
  let found = '';
  const walk = (root) => {
    for (const el of root.querySelectorAll('*')) {
      if (found) return;
      if (el.shadowRoot) walk(el.shadowRoot);
      if (el.classList && el.classList.contains('pyplay-status') && el.checkVisibility()) {
        const pre = (el.shadowRoot || el).querySelector('pre');
        if (pre) found = pre.textContent || '';
      }
    }
  };
  walk(document);
  return found;
}"""


def _train_button(page: Any) -> Any:
    return page.get_by_role("button", name="Train", exact=True).locator("visible=true").first


def cold_open(
    browser: Any, url: str, timeout_s: float = 240.0, second: bool = False
) -> dict[str, float]:
    """One cold open of ``url`` by a learner who clicks Train as soon as it is there; with
    ``second``, a second visit: the same browser profile opened the page once before (until
    its service worker controlled it), so everything comes from the browser's cache."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    if second:
        first = ctx.new_page()
        first.goto(url)
        first.wait_for_function(
            "() => navigator.serviceWorker.controller !== null", timeout=timeout_s * 1000
        )
        first.close()
    page = ctx.new_page()
    marks: dict[str, float] = {}
    start = time.perf_counter()
    page.goto(url)
    page.locator(".bk-tab", has_text="Recurrent networks").first.wait_for(
        timeout=timeout_s * 1000
    )  # the tabs drawn (the loader's own text names the lesson too)
    marks["readable"] = time.perf_counter() - start
    button = _train_button(page)
    button.wait_for(timeout=timeout_s * 1000)
    while not button.is_enabled() and time.perf_counter() - start < timeout_s:
        time.sleep(0.05)
    button.click()
    marks["train"] = time.perf_counter() - start
    while time.perf_counter() - start < timeout_s:
        found = STATUS.match(page.evaluate(STATUS_TEXT))
        if found:
            loss, baseline = float(found.group(2)), float(found.group(3))
            marks.setdefault("first_loss", time.perf_counter() - start)
            if loss < baseline / 2:
                marks["falling"] = time.perf_counter() - start
                break
        time.sleep(0.1)
    ctx.close()
    return marks


def first_minute(
    browser: Any, url: str, bare_start_s: Any, then_url: str | None = None
) -> list[str]:
    """The report's lines: ``ROUNDS`` rounds of a bare start (``bare_start_s(browser, url)``),
    a cold open and a second visit; with ``then_url`` (an earlier commit's site), its cold open
    and second visit too in each round, all in turns (the order reverses every other round),
    each measured against the same round's bare start."""
    sites = {"now": url} if then_url is None else {"now": url, "then": then_url}
    sides = [(site, visit) for visit in ("cold", "second") for site in sites]
    rounds: dict[tuple[str, str], list[tuple[float, dict[str, float]]]] = {s: [] for s in sides}
    for k in range(ROUNDS):
        bare = bare_start_s(browser, url)
        for site, visit in sides if k % 2 == 0 else sides[::-1]:
            marks = cold_open(browser, sites[site], second=visit == "second")
            rounds[(site, visit)].append((bare, marks))
            shown = ", ".join(f"{key} {v:.2f} s" for key, v in marks.items())
            label = f"{site}, {visit}: " if then_url else f"{visit}: "
            print(f"  round {k + 1}: bare {bare:.2f} s; {label}{shown}", flush=True)
    lines = [f"pyplay playground: the first minute at 1280x800 ({ROUNDS} rounds)"]
    bare_s = statistics.median(b for b, _ in rounds[("now", "cold")])
    lines.append(f"  bare Pyodide + NumPy start: median {bare_s:.2f} s")
    for (site, visit), runs in rounds.items():
        which = "" if then_url is None else ("this checkout, " if site == "now" else "earlier, ")
        target = "2.0x" if visit == "cold" else "1.5x"
        lines.append(f"  {which}{'a cold open' if visit == 'cold' else 'a second visit'}"
                     f" (target {target}):")  # fmt: skip
        lines += _side_lines(runs)
    return lines


def _side_lines(rounds: list[tuple[float, dict[str, float]]]) -> list[str]:
    """The median marks of one site's rounds (bare start, marks) and the falling loss's ratio
    to the bare start of the same round."""
    lines = []
    for key, what in (
        ("readable", "the first lesson readable"),
        ("train", "Train clicked (as soon as enabled)"),
        ("first_loss", "first loss shown"),
        ("falling", "loss below half the baseline"),
    ):
        got = [m[key] for _, m in rounds if key in m]
        if not got:
            lines.append(f"  {what}: not reached in {len(rounds)} rounds")
            continue
        lines.append(f"  {what}: median {statistics.median(got):.2f} s "
                     f"(rounds {min(got):.2f}-{max(got):.2f} s)")  # fmt: skip
    ratios = sorted(m["falling"] / b for b, m in rounds if "falling" in m)
    if ratios:
        lines.append(
            f"  falling loss / bare start of the same round: median "
            f"{statistics.median(ratios):.2f}x (rounds {ratios[0]:.2f}-{ratios[-1]:.2f}x)"
        )
    return lines
