#!/usr/bin/env python3
"""Build (and serve) pyplay's static playground: ``python build.py [serve] [--cdn]``.

``python build.py`` writes ``web/dist/``, a self-contained site that makes no request outside
its own origin; ``python build.py --cdn`` writes ``web/dist-cdn/``, a small variant that loads
Pyodide and the packages from public CDNs; ``python build.py serve`` builds when the sources
changed and serves ``web/dist`` on localhost. The build itself is the package
``web/tools/sitebuild/`` (one module per job); the versions it ships are pinned in
``pyproject.toml``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "web" / "tools"))

from sitebuild import main

if __name__ == "__main__":
    sys.exit(main(description=__doc__.splitlines()[0]))
