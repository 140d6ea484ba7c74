"""The core's own tests (layers, gradient checks, losses; float64) run inside Pyodide in Node.

The numbers pyplay computes in the browser come from the same code on a different NumPy build
(wasm, no BLAS, ``np.einsum`` matrix products): these modules must pass there too. Tests that
need PyTorch skip inside Pyodide; everything else runs.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

import sitebuild

pytestmark = pytest.mark.pyodide

ROOT = Path(__file__).resolve().parents[2]
MODULES = [  # relative to tests/
    "nn/test_recurrent_gradcheck.py",
    "nn/test_linear_embedding_dropout.py",
    "top/test_losses.py",
    "models/test_models.py",
    "tasks/test_tasks.py",  # the character model's baseline once failed on wasm32 (bincount)
    "nn/test_positional.py",
    "dynamic/test_dynamic_gradcheck.py",  # the LDDN's BPTT
    "dynamic/test_dynamic_textbook.py",  # the book's worked examples
    "dynamic/test_dynamic_notation.py",  # signals, equations, the time-series lesson's CSV reader
    "nn/test_ops.py",  # the einsum matrix product and its operand layouts
    "nn/test_recurrent_reference.py",  # the fast kernels against the plain reference steps
    "nn/test_token_input.py",  # the projected embedding table and its sort-based scatter
    "top/test_checks.py",  # the finiteness test by one sum (IEEE sums of NaN and inf in wasm)
]


@pytest.fixture(scope="module")
def pure(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The pure-Python wheels pytest needs inside Pyodide (pytest, pluggy, iniconfig),
    unpacked once; the built site first (its Pyodide and pyplay wheel)."""
    if not sitebuild.is_fresh():
        sitebuild.build()
    folder = tmp_path_factory.mktemp("pure")
    for wheel in sitebuild.test_wheels():
        with zipfile.ZipFile(wheel) as z:
            z.extractall(folder)
    return folder


@pytest.mark.parametrize("module", MODULES)
def test_core_tests_pass_inside_pyodide(module: str, pure: Path) -> None:
    """One module's tests in Pyodide (one Node process each: the modules run side by side
    when the suite runs on several workers)."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is needed to run Pyodide: apt-get install nodejs")
    result = subprocess.run(
        [
            node,
            str(Path(__file__).with_name("run_core_tests.mjs")),
            str(sitebuild.DIST / "pyodide"),
            str(pure),
            str(ROOT),
            module,
        ],
        capture_output=True,
        text=True,
        timeout=1500,
    )
    out = result.stdout + result.stderr
    assert "platform emscripten" in out, out[-3000:]
    assert "pyplay from /lib/python3.12/site-packages/pyplay" in out, out[:500]  # the wheel
    summary = re.search(r"(\d+) passed", out)
    assert summary and int(summary.group(1)) >= 1, out[-3000:]
    assert result.returncode == 0 and " failed" not in out, out[-3000:]
