"""The page's memory while a lesson trains, measured: ``python web/measure.py memory [minutes]``.

One headless Chromium opens the playground at 1280x800, waits until it has settled, presses
Train in the first lesson (Recurrent networks) and keeps it training for ``minutes`` (10 by
default). Every ``EVERY_S`` seconds it samples

- the whole browser's memory: the proportional set size (PSS, shared pages split between the
  processes that share them, so the sum does not count a library twice) of every process of
  this Chromium, read from ``/proc/<pid>/smaps_rollup`` (Linux), in all and per kind of
  process (the browser, its renderers, where the page and its worker run, the GPU process,
  the utilities);
- the page's JavaScript heap and its DOM nodes, through the DevTools protocol
  (``Performance.getMetrics``: ``JSHeapUsedSize``, ``Nodes``);
- the worker's WebAssembly memory, where the Python heap lives (``pyodide._module.HEAP8.length``;
  a WebAssembly memory never shrinks, so this is the most the Python side ever held);
- nothing that needs the page's main thread: a training page's main thread can be busy for
  a minute on a loaded machine (``page.evaluate`` waited 83-176 s there), the DevTools
  metrics and the worker answer at once.

Prints a line per sample and the growth per minute of each measure over the second half of
the run (the first minutes include the deferred lessons being built and drawn). Asserts
nothing (tests do the asserting).
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path
from typing import Any

EVERY_S = 30.0
MB = 1024 * 1024
KINDS = ("browser", "renderer", "gpu-process", "utility")  # the processes reported apart


def _browser_pids(marker: str) -> list[int]:
    """The processes whose command line names ``marker`` (this Chromium's profile folder)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if marker in cmd:
            pids.append(int(entry.name))
    return pids


def _pss_mb(pids: list[int]) -> float:
    """The summed proportional set size of ``pids`` in MiB (0 for a process gone since)."""
    total_kb = 0
    for pid in pids:
        try:
            text = Path(f"/proc/{pid}/smaps_rollup").read_text()
        except OSError:
            continue
        found = re.search(r"^Pss:\s+(\d+) kB", text, re.M)
        total_kb += int(found.group(1)) if found else 0
    return total_kb / 1024


def _kind(pid: int) -> str:
    """A Chromium process's kind from its command line: ``browser`` (no ``--type``),
    ``renderer``, ``gpu-process``, ``utility``, ... (``gone`` once it has exited)."""
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return "gone"
    found = re.search(r"--type=([a-z-]+)", cmd)
    return found.group(1) if found else "browser"


def _pss_by_kind(pids: list[int]) -> dict[str, float]:
    """The PSS of ``pids`` in MiB summed per process kind (:func:`_kind`)."""
    kinds: dict[str, list[int]] = {}
    for pid in pids:
        kinds.setdefault(_kind(pid), []).append(pid)
    return {kind: _pss_mb(group) for kind, group in sorted(kinds.items()) if kind != "gone"}


def _metrics(session: Any) -> dict[str, float]:
    """``Performance.getMetrics`` of a DevTools session, by name."""
    return {m["name"]: m["value"] for m in session.send("Performance.getMetrics")["metrics"]}


def sample(page: Any, session: Any, pids: list[int]) -> dict[str, float]:
    """One sample of every measure (MiB, nodes)."""
    page_m = _metrics(session)
    worker = page.workers[0]
    wasm = worker.evaluate("self.pyodide._module.HEAP8.length")
    return {
        "browser_mb": _pss_mb(pids),
        **{f"process_{kind}_mb": mb for kind, mb in _pss_by_kind(pids).items()},
        "page_js_mb": page_m["JSHeapUsedSize"] / MB,
        "nodes": page_m["Nodes"],
        "wasm_mb": wasm / MB,
    }


def growth_per_minute(samples: list[tuple[float, dict[str, float]]], key: str) -> float:
    """The least-squares slope of ``key`` per minute over the second half of ``samples`` (NaN
    when that half holds fewer than two samples)."""
    half = samples[len(samples) // 2 :]
    if len(half) < 2:
        return float("nan")  # too short a run to say
    ts = [t / 60 for t, _ in half]
    ys = [s[key] for _, s in half]
    mt, my = sum(ts) / len(ts), sum(ys) / len(ys)
    den = sum((t - mt) ** 2 for t in ts)
    return sum((t - mt) * (y - my) for t, y in zip(ts, ys, strict=True)) / den if den else 0.0


def memory_over(browser_type: Any, url: str, args: list[str], minutes: float) -> list[str]:
    """Train the first lesson for ``minutes`` and sample its memory; returns the report."""
    import tempfile

    profile = tempfile.mkdtemp(prefix="pyplay-memory-")
    context = browser_type.launch_persistent_context(
        profile,
        executable_path="/usr/bin/chromium",
        headless=True,
        args=args,
        viewport={"width": 1280, "height": 800},
    )
    try:
        page = context.pages[0] if context.pages else context.new_page()
        page.goto(url)
        page.wait_for_function(
            "() => document.documentElement.dataset.pyplaySettled === 'true'", timeout=240_000
        )
        session = context.new_cdp_session(page)
        session.send("Performance.enable")
        page.get_by_role("button", name="Train", exact=True).first.click()
        start = time.monotonic()
        samples: list[tuple[float, dict[str, float]]] = []
        lines = [f"pyplay playground: memory while Recurrent networks trains, {minutes:g} min"]
        while True:
            elapsed = time.monotonic() - start
            s = sample(page, session, _browser_pids(profile))  # processes come and go
            samples.append((elapsed, s))
            kinds = "  ".join(
                f"{kind} {s[f'process_{kind}_mb']:6.1f}"
                for kind in KINDS
                if f"process_{kind}_mb" in s
            )
            lines.append(
                f"  {elapsed / 60:5.1f} min  browser {s['browser_mb']:7.1f} MiB ({kinds})  "
                f"page JS {s['page_js_mb']:6.1f}  "
                f"nodes {s['nodes']:6.0f}  wasm {s['wasm_mb']:6.1f}"
            )
            print(lines[-1], flush=True)
            if elapsed >= minutes * 60:
                break
            time.sleep(EVERY_S)
    finally:
        context.close()
    lines.append("  growth per minute over the second half (least squares):")
    keys = [("browser_mb", "MiB")]
    keys += [(f"process_{kind}_mb", "MiB") for kind in KINDS]
    keys += [("page_js_mb", "MiB"), ("nodes", "nodes"), ("wasm_mb", "MiB")]
    for key, unit in keys:
        if any(key not in s for _, s in samples[len(samples) // 2 :]):
            continue  # a process that came or went in the second half
        lines.append(f"    {key}: {growth_per_minute(samples, key):+.2f} {unit}/min")
    return lines


def memory_only(url: str, args: list[str]) -> int:
    """``python web/measure.py memory [minutes]``: :func:`memory_over` for ``minutes`` (10
    unless told) in a headless Chromium started with ``args``; prints the report."""
    from playwright.sync_api import sync_playwright

    minutes = float(sys.argv[2]) if sys.argv[2:3] else 10.0
    with sync_playwright() as p:
        lines = memory_over(p.chromium, url, args, minutes)
    print("\n".join(lines))
    return 0
