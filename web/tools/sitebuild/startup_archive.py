"""The offline site's one archive of the first render's pure-Python packages and bytecode.

Pyodide's ``loadPackage`` installs each wheel on its own: fetching it, checking it against
the lock, unpacking it by Python inside WebAssembly, recording it. Measured in Pyodide (the
pinned version) under Node, the seventeen pure-Python wheels the first render needs (Panel,
Bokeh, param, pyplay, Jinja2, ...) took 0.68-0.78 s in one ``loadPackage`` call, where
unpacking the same files from one zip took 0.39-0.43 s; and the worker unpacked their
compiled bytecode from a zip of its own anyway (0.18-0.21 s). So the build writes one
archive, ``site-startup.tar.gz``: every file of those wheels (sources and ``.dist-info``
alike, as ``loadPackage`` would have unpacked them) and the profiled bytecode of the first
render (``__pycache__/*.pyc``), about 3,100 files. The worker unpacks it into site-packages
while ``loadPackage`` loads only the packages with compiled code (NumPy), then marks the
others loaded (``pyodide.loadedPackages``), so that a later ``loadPackage`` whose
dependencies name one of them does not fetch it again.

A gzipped tar, not a zip: Pyodide's ``unpackArchive`` extracts a zip file by file in Python
inside WebAssembly; the worker instead decompresses the whole tar with the browser's own
``DecompressionStream`` as it downloads and writes each file into Pyodide's file system from
JavaScript (``web/site/worker.js``). In Pyodide under Node, quiet machine: the zip took
0.6-1.4 s to unpack, the tar 0.3-0.4 s (most of it the decompression); and one stream
compresses better than 3,100 (8.4 MB instead of 9.6 MB). Plain ustar headers (names up to
255 bytes), one regular file each, in the order written.

Every wheel in it is the served one, verified against the official Pyodide lock (or PyPI's
sha256) when it was downloaded; the wheels stay in the site beside it, listed in
``pyodide-lock.json`` as before.
"""

from __future__ import annotations

import gzip
import io
import tarfile
import zipfile
from pathlib import Path
from typing import Any

__all__ = ["ARCHIVE", "is_pure", "write_startup_archive"]

ARCHIVE = "site-startup.tar.gz"  # in the site's pyodide/ folder


def is_pure(entry: dict[str, Any]) -> bool:
    """Whether a ``pyodide-lock.json`` package entry is a pure-Python wheel (nothing for
    ``loadPackage`` to load as a shared library)."""
    name = str(entry.get("file_name", ""))
    return (
        entry.get("package_type", "package") == "package"
        and entry.get("install_dir", "site") == "site"
        and not entry.get("shared_library", False)
        and name.endswith("-none-any.whl")
    )


def write_startup_archive(
    pyodide_dir: Path, lock: dict[str, Any], startup: list[str], bytecode: Path
) -> list[str]:
    """Write ``pyodide_dir/ARCHIVE``: the files of each pure wheel among the ``startup``
    packages (``lock``: the served ``pyodide-lock.json``; the wheels are in ``pyodide_dir``)
    and every file of the ``bytecode`` archive. Returns the names of the packages it holds,
    in ``startup``'s order; ``ValueError`` when two of them hold the same file."""
    packages = lock["packages"]
    unpacked = [name for name in startup if is_pure(packages[name])]
    seen: dict[str, str] = {}
    tar = io.BytesIO()
    with tarfile.open(fileobj=tar, mode="w", format=tarfile.USTAR_FORMAT) as out:
        sources = [(name, pyodide_dir / packages[name]["file_name"]) for name in unpacked]
        for owner, path in [*sources, ("bytecode", bytecode)]:
            with zipfile.ZipFile(path) as archive:
                for info in archive.infolist():
                    if info.is_dir():
                        continue
                    if info.filename in seen:
                        raise ValueError(
                            f"startup archive: {info.filename} is in both {seen[info.filename]} "
                            f"and {owner}; expected each file in one package"
                        )
                    seen[info.filename] = owner
                    data = archive.read(info)
                    member = tarfile.TarInfo(info.filename)  # mtime 0: the same bytes each build
                    member.size, member.mode = len(data), 0o644
                    out.addfile(member, io.BytesIO(data))
    (pyodide_dir / ARCHIVE).write_bytes(gzip.compress(tar.getvalue(), compresslevel=9, mtime=0))
    return unpacked
