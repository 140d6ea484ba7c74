"""Timing the benchmark cases and printing them (developer-only, see :mod:`pyplay.bench`).

Every figure is a ratio measured in the same process, never an absolute threshold: the pyplay
and PyTorch timings of a case alternate ``rounds`` times and the best median of each is kept,
so that both see the same machine conditions (on a busy machine one side alone varies by tens
of percent from minute to minute). Peak memory is the largest allocation footprint during one
pyplay step, NumPy's included, traced with :mod:`tracemalloc`.

:func:`prepare_steps` with :func:`time_once` (one step at a time) time pyplay alone, for the
browser page: they need neither threads, subprocesses nor torch, so they run unchanged inside
Pyodide (``web/measure.py`` copies this package into the page,
whose own pyplay leaves it out).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence

import numpy as np

from pyplay.bench import seq2seq, transformer
from pyplay.bench.recurrent import CASES, Case, pyplay_step, torch_step

__all__ = [
    "format_rows",
    "main",
    "measure",
    "page_steps",
    "peak_memory",
    "prepare_steps",
    "run",
    "seq2seq_rows",
    "time_once",
    "time_step",
]

Step = Callable[[], float]


def time_step(step: Step, repeats: int = 30, warmup: int = 5) -> float:
    """Median seconds of ``step()`` over ``repeats`` calls after ``warmup`` calls."""
    for _ in range(warmup):
        step()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def peak_memory(step: Step) -> int:
    """Peak bytes allocated (traced by tracemalloc, NumPy included) during one step."""
    step()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        step()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return int(peak)


def measure(
    label: str, ours: Step, theirs: Step | None, repeats: int, rounds: int, warmup: int
) -> dict[str, object]:
    """One row: pyplay's and PyTorch's (``theirs``, or None) best median step in ms, alternating
    ``rounds`` times, their ratio (None without a baseline) and pyplay's peak KiB."""
    t_ours, t_theirs = [], []
    for _ in range(rounds):
        t_ours.append(time_step(ours, repeats, warmup))
        if theirs is not None:
            t_theirs.append(time_step(theirs, repeats, warmup))
    return {
        "case": label,
        "pyplay_ms": 1e3 * min(t_ours),
        "torch_ms": 1e3 * min(t_theirs) if t_theirs else None,
        "ratio": min(t_ours) / min(t_theirs) if t_theirs else None,
        "peak_kib": peak_memory(ours) / 1024,
    }


def run(
    cases: Sequence[Case] = CASES, repeats: int = 30, rounds: int = 3
) -> list[dict[str, object]]:
    """Measure every character-model case (rows of :func:`measure`)."""
    return [
        measure(case.label, pyplay_step(case), torch_step(case), repeats, rounds, warmup=5)
        for case in cases
    ]


def seq2seq_rows(repeats: int = 30, rounds: int = 3) -> list[dict[str, object]]:
    """The sequence-to-sequence cases (see :mod:`pyplay.bench.seq2seq`) and the Transformers
    lesson's step at its defaults (:mod:`pyplay.bench.transformer`), rows like :func:`run`."""
    cases = [
        ("seq2seq attn B=32 S=U=16 H=64", seq2seq.seq2seq_step(), seq2seq.torch_seq2seq_step()),
        ("beam search width 5, 20 steps", seq2seq.beam_decode(), None),
        ("transformer lesson step", transformer.lesson_step(), None),
        ("transformer lesson, no LSTM", transformer.lesson_step(compare_lstm=False), None),
    ]
    return [measure(*case, repeats, rounds, warmup=3) for case in cases]


def format_rows(rows: Sequence[dict[str, object]]) -> str:
    """A plain-text table of :func:`run`'s rows."""
    lines = [f"{'case':<34}{'pyplay ms':>11}{'torch ms':>10}{'pyplay/torch':>14}{'peak KiB':>10}"]
    for r in rows:
        torch_ms = "-" if r["torch_ms"] is None else f"{r['torch_ms']:.3f}"
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.2f}"
        lines.append(
            f"{r['case']:<34}{r['pyplay_ms']:>11.3f}{torch_ms:>10}{ratio:>14}{r['peak_kib']:>10.0f}"
        )
    return "\n".join(lines)


def page_steps() -> dict[str, Step]:
    """The pyplay-only steps timed for the browser page, by name: the LSTM cases at B=32 and
    B=1, the attention seq2seq training step and the beam-search decode."""
    return {
        "lstm_b32": pyplay_step(Case("lstm", 32)),
        "lstm_b1": pyplay_step(Case("lstm", 1)),
        "seq2seq": seq2seq.seq2seq_step(),
        "beam": seq2seq.beam_decode(),
    }


_prepared: dict[str, Step] = {}  # the steps of prepare_steps, for time_once


def prepare_steps(warmup: int = 2) -> str:
    """Make the steps of :func:`page_steps`, run each ``warmup`` times and keep them for
    :func:`time_once`; returns their names, space-separated.

    With these a driver interleaves single steps in two places, natively and in the page,
    so that a slow spell of the machine hits both sides alike (``web/measure.py``).
    """
    _prepared.clear()
    _prepared.update(page_steps())
    for step in _prepared.values():
        for _ in range(warmup):
            step()
    return " ".join(_prepared)


def time_once(name: str) -> float:
    """Milliseconds of one call of the prepared step ``name`` (:func:`prepare_steps`)."""
    if name not in _prepared:
        raise ValueError(
            f"name must be one of the prepared steps {sorted(_prepared)} (call prepare_steps "
            f"first), got {name!r}"
        )
    step = _prepared[name]
    start = time.perf_counter()
    step()
    return 1e3 * (time.perf_counter() - start)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m pyplay.bench``."""
    from pyplay import bench

    parser = argparse.ArgumentParser(prog="python -m pyplay.bench", description=bench.__doc__)
    parser.add_argument("--repeats", type=int, default=30, help="timed steps per round")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds per case")
    args = parser.parse_args(argv)
    threads = os.environ.get("OPENBLAS_NUM_THREADS", "default")
    print(
        f"pyplay training-step benchmark (numpy {np.__version__}, {sys.platform}, "
        f"BLAS threads: {threads}, torch threads: 1)"
    )
    rows = run(repeats=args.repeats, rounds=args.rounds)
    rows += seq2seq_rows(repeats=max(1, args.repeats // 3), rounds=args.rounds)
    print(format_rows(rows))
    if rows and rows[0]["torch_ms"] is None:
        print("torch is not installed: no baseline ratio (pip install -e '.[dev]' pins it)")
    return 0
