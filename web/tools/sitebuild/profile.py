"""Profiling the start in Pyodide under Node, and the worker's start-up configuration.

The page would otherwise load every package before the first render and compile ~1,500
modules from source in WebAssembly on every visit. The build instead starts the app once in
Pyodide under Node (``web/tools/profile.mjs``), exactly as the page's worker does (it runs the
same ``web/site/boot.py``), against the assembled ``pyodide/`` folder of the site, and learns:

- which packages the first render imports (``startup``), which the work the app queues for
  after it imports (``later``: saved work and the other lessons, :mod:`pyplay.ui.later`),
  and the others (``deferred``), which load once that work is done, so that later imports
  work;
- the bytecode of every module the start and that work import, compiled by Pyodide's own
  Python: a copy of the standard library zip with ``.pyc`` files beside the sources, and two
  archives of ``__pycache__/*.pyc`` files for site-packages: the first render's, and the rest
  (all of pyplay's modules included), unpacked after the first render;
- how long each stage of the start took (``seconds``), which weighs the page loader's
  progress bar on a first visit.

The result is cached in ``web/.cache/profile/<key>/`` under a key made of the site's
``pyodide-lock.json`` (so of every wheel's sha256, pyplay's included), ``boot.py``,
``profile.mjs`` and the package list: an unchanged site is not profiled again.

:func:`worker_config` is what ``web/site/worker.js`` starts from (its ``__CONFIG__``): the
profile's package lists and archives, the app to start and ``boot.py``'s source.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .config import APP, APP_OPTIONS, BOOT, CACHE, PROFILE_JS, log, run
from .startup_archive import ARCHIVE


def profile_key(site: Path, packages: list[str]) -> str:
    """The cache key of a profile: the site's lock, ``boot.py``, ``profile.mjs``, packages."""
    h = hashlib.sha256()
    for p in (site / "pyodide" / "pyodide-lock.json", BOOT, PROFILE_JS):
        h.update(p.read_bytes())
    h.update(json.dumps([packages, APP, APP_OPTIONS]).encode())
    return h.hexdigest()[:16]


def profile(site: Path, packages: list[str]) -> dict[str, Any]:
    """Start the app once in Pyodide under Node (``web/tools/profile.mjs``) against the
    assembled ``site/pyodide``; cached by the lock, boot and profile sources.

    Returns ``{"startup": [...], "later": [...], "deferred": [...], "stdlib": Path,
    "bytecode": Path, "bytecode_later": Path, "seconds": {stage: s}}``: the packages the first
    render needs, those the work after it needs, the rest, the stdlib zip with compiled
    bytecode, the two archives of site-packages bytecode (all made with Pyodide's own Python)
    and the stages' times in Node.
    """
    out = CACHE / "profile" / profile_key(site, packages)
    report_path = out / "profile.json"
    if not report_path.exists():
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        config = {"app": APP, "options": APP_OPTIONS, "boot": str(BOOT), "packages": packages}
        (out / "config.json").write_text(json.dumps(config))
        log("profiling the start in Pyodide (Node) and compiling bytecode")
        run(
            [
                "node",
                str(PROFILE_JS),
                str(site / "pyodide"),
                str(out),
                str(out / "config.json"),
            ]
        )
    report = json.loads(report_path.read_text())
    startup = [p for p in packages if p in report["startup_packages"]]
    later = [p for p in packages if p in report["later_packages"]]
    return {
        "startup": startup,
        "later": later,
        "deferred": [p for p in packages if p not in startup and p not in later],
        "stdlib": out / "python_stdlib.zip",
        "bytecode": out / "site-bytecode.zip",
        "bytecode_later": out / "site-bytecode-later.zip",
        "seconds": report["seconds"],
    }


def offline_start(prof: dict[str, Any], unpacked: Sequence[str] = ()) -> dict[str, Any]:
    """The worker's start-up configuration of the offline site, from a :func:`profile`
    (the archives' and Panel's paths are the site's own). ``unpacked``: the startup packages
    the startup archive holds (:mod:`sitebuild.startup_archive`); the worker unpacks them
    with the first render's bytecode and loads only the others by ``loadPackage``."""
    seconds = prof["seconds"]
    return {
        "startup": [p for p in prof["startup"] if p not in unpacked],
        "unpacked": list(unpacked),
        "later": prof["later"],
        "deferred": prof["deferred"],
        "stdlib": "./pyodide/python_stdlib_compiled.zip",
        "bytecode": f"./pyodide/{ARCHIVE}",
        "bytecodeLater": "./pyodide/site-bytecode-later.zip",
        "panelDist": "./panel/",
        # the loader's first-visit weights of its stages (seconds in Node; the page then
        # draws, about as long as serialising took there: a fifth of building, a guess)
        "weights": {
            "runtime": seconds["runtime"],
            "packages": seconds["packages"],
            "modules": seconds["modules"],
            "app": seconds["app"],
            "draw": seconds["app"] / 5,
        },
    }


def worker_config(config: dict[str, Any]) -> str:
    """The JSON object ``web/site/worker.js`` starts from: ``config`` plus the app, its
    options and boot code."""
    return json.dumps({**config, "app": APP, "appOptions": APP_OPTIONS, "boot": BOOT.read_text()})
