"""The command line of the site build: ``python build.py [build|serve|test-wheels] [--cdn]``.

- ``python build.py`` (``build``): write the offline site ``web/dist/``.
- ``python build.py serve``: build when the sources changed (``--no-build``: serve it as it
  is), then serve ``web/dist`` on http://127.0.0.1:8000/ (``--port N``).
- ``python build.py --cdn``: write the CDN variant ``web/dist-cdn/`` (with ``serve``: then
  serve that).
- ``python build.py test-wheels``: print the paths of the wheels the in-Pyodide test run
  needs (pytest and its dependencies), downloading them if needed.
"""

from __future__ import annotations

import argparse

from .assemble import build, is_fresh
from .cdn import build_cdn
from .config import DIST, DIST_CDN
from .fetch import test_wheels
from .serve import serve_forever


def main(argv: list[str] | None = None, description: str | None = None) -> int:
    """Run the command line ``argv`` (default: ``sys.argv[1:]``); returns the exit code."""
    parser = argparse.ArgumentParser(description=description or __doc__.splitlines()[0])
    parser.add_argument(
        "command", nargs="?", choices=["build", "serve", "test-wheels"], default="build"
    )
    parser.add_argument("--cdn", action="store_true", help="write the CDN variant")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--no-build", action="store_true", help="serve web/dist as it is")
    args = parser.parse_args(argv)
    if args.command == "test-wheels":
        for path in test_wheels():
            print(path)
        return 0
    if args.cdn:
        build_cdn()
        if args.command != "serve":
            return 0
    if args.command == "build" or (not args.no_build and not is_fresh()):
        build()
    if args.command == "serve":
        serve_forever(DIST_CDN if args.cdn else DIST, args.port)
    return 0
