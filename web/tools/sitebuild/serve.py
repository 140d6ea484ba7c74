"""Serving a built site on localhost: ``python build.py serve`` and the tests' server.

A threaded static file server (the standard library's) with what the site needs from it:

- the MIME types Pyodide needs (``application/wasm`` for the runtime, JavaScript for
  ``.mjs``), and the others the site serves (wheels and zips, JSON, CSS, HTML in UTF-8);
- ``Cache-Control: no-cache``, so a rebuilt site shows up at once (the page's service worker
  does the caching, keyed by the build);
- ``Access-Control-Allow-Origin: *``: pages on other origins embed the widgets
  (``web/site/embed.js``), and their worker fetches the runtime and the wheels from here;
- gzip for the files that compress (the WebAssembly runtime, scripts, JSON, CSS, HTML) when
  the browser accepts it, as static hosts do (GitHub Pages, nginx): the 10 MB runtime goes
  over the network as about 3 MB; each file is compressed once per version and kept;
- a count of the body bytes sent (:attr:`Handler.bytes_sent`), for ``web/measure.py``'s
  figures of what a visit transfers.

It binds 127.0.0.1 only. :func:`serve_in_thread` starts one on a free port for the tests and
the measurements; :func:`serve_forever` is the command's foreground server.
"""

from __future__ import annotations

import functools
import gzip
import http.server
import io
import os
import threading
from pathlib import Path
from typing import Any, ClassVar

from .config import DIST

COMPRESSIBLE = (".wasm", ".js", ".mjs", ".json", ".css", ".html", ".txt")
_GZIPPED: dict[tuple[str, float, int], bytes] = {}  # (path, mtime, size) -> gzip body
_GZIP_LOCK = threading.Lock()


def gzipped(path: str) -> bytes:
    """The gzip body of the file at ``path`` (compressed once per version of the file)."""
    stat = os.stat(path)
    key = (path, stat.st_mtime, stat.st_size)
    with _GZIP_LOCK:
        if key not in _GZIPPED:
            with open(path, "rb") as f:
                _GZIPPED[key] = gzip.compress(f.read(), compresslevel=6, mtime=0)
        return _GZIPPED[key]


class Handler(http.server.SimpleHTTPRequestHandler):
    """Static files with the MIME types Pyodide needs and caching headers."""

    extensions_map: ClassVar[dict[str, str]] = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".wasm": "application/wasm",
        ".mjs": "text/javascript",
        ".js": "text/javascript",
        ".json": "application/json",
        ".whl": "application/zip",
        ".zip": "application/zip",
        ".css": "text/css",
        ".html": "text/html; charset=utf-8",
    }

    bytes_sent = 0  # body bytes served by every Handler of this process (for figures)

    def send_header(self, keyword: str, value: str) -> None:
        if keyword.lower() == "content-length":
            Handler.bytes_sent += int(value)
        super().send_header(keyword, value)

    def send_head(self) -> Any:
        """The file as gzip when the browser accepts it and the file compresses; otherwise
        as the standard library serves it."""
        path = self.translate_path(self.path)
        accepts = "gzip" in self.headers.get("Accept-Encoding", "")
        if not (accepts and path.endswith(COMPRESSIBLE) and os.path.isfile(path)):
            return super().send_head()
        body = gzipped(path)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(path))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Vary", "Accept-Encoding")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return io.BytesIO(body)

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-cache")
        # pages on other origins embed the widgets (embed.js): their worker fetches from here
        self.send_header("Access-Control-Allow-Origin", "*")
        super().end_headers()

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass


class Server(http.server.ThreadingHTTPServer):
    """Threaded server whose worker threads finish with it (no sockets left open)."""

    daemon_threads = False
    block_on_close = True


def make_server(port: int = 0, directory: Path = DIST) -> Server:
    """A server of ``directory`` on 127.0.0.1:``port`` (0: a free port), not yet serving."""
    handler = functools.partial(Handler, directory=str(directory))
    return Server(("127.0.0.1", port), handler)


def serve_in_thread(directory: Path = DIST) -> tuple[Server, str]:
    """Start a server on a free port in a daemon thread; returns it and its base URL."""
    server = make_server(0, directory)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def serve_forever(directory: Path, port: int) -> None:
    """Serve ``directory`` on ``port`` until Ctrl+C."""
    server = make_server(port, directory)
    print(
        f"pyplay playground: http://127.0.0.1:{server.server_address[1]}/  (Ctrl+C stops)",
        flush=True,
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
