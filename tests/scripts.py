"""Running the scripts that "show as code" writes, for the export tests: in a subprocess, in a
temporary directory, with this checkout's pyplay; and reading the losses they print."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

from paths import ROOT


def run_script(code: str, cwd: Path) -> str:
    """Run ``code`` as a script in ``cwd``; returns its output (the test fails on exit != 0)."""
    path = cwd / "script.py"
    path.write_text(code, encoding="utf-8")
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, str(path)], cwd=cwd, capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def printed_losses(out: str) -> list[float]:
    """The losses of the ``step N: loss X`` lines, in order."""
    return [float(x) for x in re.findall(r"^step \d+: loss (\S+)$", out, flags=re.M)]


def modules_imported(code: str, prefix: str = "pyplay.") -> set[str]:
    """The modules named ``prefix...`` that ``code`` (dedented) leaves imported, run in a fresh
    interpreter with warnings as errors (the test fails on exit != 0)."""
    listing = f"\nimport sys\nprint(' '.join(m for m in sys.modules if m.startswith({prefix!r})))\n"
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", textwrap.dedent(code) + listing],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return set(done.stdout.split())
