"""Where things are, for a test in any folder of ``tests/`` (the folders mirror the package:
``tests/nn/``, ``tests/ui/``, ``tests/lessons/<key>/`` ...): declared once here, so a test file
can move without counting ``parents``."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]  # the checkout: pyproject.toml, pyplay/, web/
TESTS = ROOT / "tests"
DATA = TESTS / "data"  # files the tests read (luong/: the files of a removed model class)
