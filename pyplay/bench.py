"""Benchmark: ``python -m pyplay.bench``.

Times one training step (forward, backward, Adam update) of a character model, Embedding ->
recurrent cell -> Linear with cross-entropy, for pyplay and, when PyTorch is installed, for the
same model in PyTorch with one thread, and prints their ratio. Figures are ratios measured in
the same process, never absolute thresholds. The module needs neither threads, subprocesses nor
torch, so it runs unchanged inside Pyodide (:func:`page_figures`).

Sequence-to-sequence cases (an attention encoder-decoder training step against its PyTorch
twin, and a beam-search decode) are in :mod:`pyplay.bench_seq2seq`.

Cases: LSTM at B=32 (training) and B=1 (interactive stepping), GRU at B=32 and B=1; all with
T=32, H=64, V=32, float32. Both sides use one thread: torch via ``torch.set_num_threads(1)``,
NumPy's BLAS via ``OPENBLAS_NUM_THREADS=1`` etc., set when this module is run before NumPy is
imported (on a busy 2-core machine, multi-threaded BLAS on these small matrices is several times
slower and its timings swing wildly). Peak memory is the largest NumPy allocation footprint
during one pyplay step, traced with :mod:`tracemalloc`.
"""

from __future__ import annotations

import os

if __name__ == "__main__":  # before NumPy loads its BLAS: one thread, like the torch baseline
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import argparse
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from pyplay.losses import cross_entropy
from pyplay.models import SequenceModel
from pyplay.optim import Adam

__all__ = [
    "CASES",
    "Case",
    "page_figures",
    "pyplay_step",
    "seq2seq_rows",
    "time_step",
    "torch_step",
]


@dataclass(frozen=True)
class Case:
    """One benchmark configuration."""

    cell: str
    batch: int
    steps: int = 32  # T
    hidden: int = 64  # H
    vocab: int = 32  # V

    @property
    def label(self) -> str:
        return f"{self.cell.upper()} B={self.batch} T={self.steps} H={self.hidden} V={self.vocab}"


CASES = (Case("lstm", 32), Case("lstm", 1), Case("gru", 32), Case("gru", 1))


def _data(case: Case, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.integers(0, case.vocab, size=(case.batch, case.steps))  # (B, T)
    y = rng.integers(0, case.vocab, size=(case.batch, case.steps))  # (B, T)
    return x, y


def pyplay_step(case: Case, dtype: type = np.float32) -> Callable[[], float]:
    """A closure running one pyplay training step of ``case``; returns the loss."""
    model = SequenceModel(
        case.cell,
        input_kind="tokens",
        input_size=case.vocab,
        output_size=case.vocab,
        hidden_size=case.hidden,
        embedding_dim=case.vocab,
        dtype=dtype,
        rng=0,
    )
    opt = Adam(model.params, lr=1e-3)
    x, y = _data(case)

    def step() -> float:
        logits, _, cache = model.forward(x)  # (B, T, V)
        loss, dlogits = cross_entropy(logits, y)
        grads = model.backward(dlogits, cache).grads
        opt.step(grads)
        return float(loss)

    return step


def torch_step(case: Case) -> Callable[[], float] | None:
    """The same step in PyTorch (one thread, float32), or None without torch."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    torch.manual_seed(0)
    rnn_cls = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU, "rnn": torch.nn.RNN}[case.cell]

    class Model(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embedding = torch.nn.Embedding(case.vocab, case.vocab)
            self.rnn = rnn_cls(case.vocab, case.hidden, batch_first=True)
            self.head = torch.nn.Linear(case.hidden, case.vocab)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            h, _ = self.rnn(self.embedding(x))
            return self.head(h)

    model = Model()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x_np, y_np = _data(case)
    x = torch.from_numpy(x_np)
    y = torch.from_numpy(y_np).reshape(-1)

    def step() -> float:
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x).reshape(-1, case.vocab), y)
        loss.backward()
        opt.step()
        return float(loss.detach())

    return step


def time_step(step: Callable[[], float], repeats: int = 30, warmup: int = 5) -> float:
    """Median seconds of ``step()`` over ``repeats`` calls after ``warmup`` calls."""
    for _ in range(warmup):
        step()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def peak_memory(step: Callable[[], float]) -> int:
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


def run(
    cases: Sequence[Case] = CASES, repeats: int = 30, rounds: int = 3
) -> list[dict[str, object]]:
    """Measure every case; the pyplay and torch timings alternate ``rounds`` times and the best
    median of each is kept, so both see the same machine conditions."""
    rows: list[dict[str, object]] = []
    for case in cases:
        ours = pyplay_step(case)
        theirs = torch_step(case)
        t_ours, t_theirs = [], []
        for _ in range(rounds):
            t_ours.append(time_step(ours, repeats))
            if theirs is not None:
                t_theirs.append(time_step(theirs, repeats))
        row: dict[str, object] = {
            "case": case.label,
            "pyplay_ms": 1e3 * min(t_ours),
            "torch_ms": 1e3 * min(t_theirs) if t_theirs else None,
            "peak_kib": peak_memory(ours) / 1024,
        }
        row["ratio"] = (min(t_ours) / min(t_theirs)) if t_theirs else None
        rows.append(row)
    return rows


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


def page_figures(repeats: int = 10) -> str:
    """pyplay-only times for running inside the browser page: the LSTM cases, the attention
    seq2seq training step and the beam-search decode.

    Returns ``"lstm_b32_ms=<float> lstm_b1_ms=<float> seq2seq_ms=<float> beam_ms=<float>"``
    so a driver script can parse it.
    """
    from pyplay import bench_seq2seq

    parts = []
    for case in (Case("lstm", 32), Case("lstm", 1)):
        ms = 1e3 * time_step(pyplay_step(case), repeats=repeats, warmup=2)
        parts.append(f"lstm_b{case.batch}_ms={ms:.3f}")
    ms = 1e3 * time_step(bench_seq2seq.seq2seq_step(), repeats=repeats, warmup=2)
    parts.append(f"seq2seq_ms={ms:.3f}")
    ms = 1e3 * time_step(bench_seq2seq.beam_decode(), repeats=max(1, repeats // 2), warmup=1)
    parts.append(f"beam_ms={ms:.3f}")
    return " ".join(parts)


def seq2seq_rows(repeats: int = 30, rounds: int = 3) -> list[dict[str, object]]:
    """The sequence-to-sequence cases (see :mod:`pyplay.bench_seq2seq`), rows like :func:`run`."""
    from pyplay import bench_seq2seq as s2s

    rows: list[dict[str, object]] = []
    cases = [
        ("seq2seq attn B=32 S=U=16 H=64", s2s.seq2seq_step(), s2s.torch_seq2seq_step()),
        ("beam search width 5, 20 steps", s2s.beam_decode(), None),
    ]
    for label, ours, theirs in cases:
        t_ours, t_theirs = [], []
        for _ in range(rounds):
            t_ours.append(time_step(ours, repeats, warmup=3))
            if theirs is not None:
                t_theirs.append(time_step(theirs, repeats, warmup=3))
        rows.append(
            {
                "case": label,
                "pyplay_ms": 1e3 * min(t_ours),
                "torch_ms": 1e3 * min(t_theirs) if t_theirs else None,
                "ratio": min(t_ours) / min(t_theirs) if t_theirs else None,
                "peak_kib": peak_memory(ours) / 1024,
            }
        )
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m pyplay.bench``."""
    parser = argparse.ArgumentParser(prog="python -m pyplay.bench", description=__doc__)
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
        print("torch is not installed: no baseline ratio (pip install torch==2.13.0)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
