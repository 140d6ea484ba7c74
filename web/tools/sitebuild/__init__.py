"""sitebuild: builds (and serves) pyplay's static playground; run as ``python build.py``.

The offline site ``web/dist/`` makes no request outside its own origin: the Pyodide runtime
(from npm), the official Pyodide wasm wheels of NumPy and packaging (each checked against
the sha256 of the official ``pyodide-lock.json``, refused on mismatch), Panel, Bokeh and their
pure-Python dependencies as pinned PyPI wheels, BokehJS and Panel's JS/CSS, and pyplay itself
as a wheel made from the working tree (without its benchmarks). Every version is pinned once,
in ``pyproject.toml``. Downloads are cached in ``web/.cache``, so a second build needs no
network.

One module per job:

- :mod:`sitebuild.config`: paths, the pins read from ``pyproject.toml``, shared helpers;
- :mod:`sitebuild.fetch`: downloading and verifying (npm, the carrier of the official wheels,
  PyPI);
- :mod:`sitebuild.wheels`: wheel surgery (pure repacks, slimmed Panel/Bokeh, pyplay's wheel);
- :mod:`sitebuild.patches`: the named source rewrites of Bokeh and Panel (no pandas);
- :mod:`sitebuild.profile`: starting the app in Pyodide under Node (``web/tools/profile.mjs``)
  to learn the start's packages and compile its bytecode;
- :mod:`sitebuild.assemble`: the offline site, its lock and stamp, one build at a time;
- :mod:`sitebuild.cdn`: the CDN variant ``web/dist-cdn/``;
- :mod:`sitebuild.serve`: the localhost server;
- :mod:`sitebuild.cli`: the command line.
"""

from __future__ import annotations

from . import assemble, cdn, config, fetch, patches, profile, serve, wheels
from .assemble import build, build_lock, inputs_digest, is_fresh
from .cdn import build_cdn
from .cli import main
from .config import CACHE, DIST, DIST_CDN, ROOT, SITE, TOOLS, WEB
from .fetch import official_wheels, pyodide_core, pypi_wheel, test_wheels
from .serve import Handler, make_server, serve_in_thread
from .wheels import pyplay_wheel

__all__ = [
    "CACHE",
    "DIST",
    "DIST_CDN",
    "ROOT",
    "SITE",
    "TOOLS",
    "WEB",
    "Handler",
    "assemble",
    "build",
    "build_cdn",
    "build_lock",
    "cdn",
    "config",
    "fetch",
    "inputs_digest",
    "is_fresh",
    "main",
    "make_server",
    "official_wheels",
    "patches",
    "profile",
    "pyodide_core",
    "pypi_wheel",
    "pyplay_wheel",
    "serve",
    "serve_in_thread",
    "test_wheels",
    "wheels",
]
