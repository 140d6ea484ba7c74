"""Wheel surgery: the wheels the site serves, made or slimmed from others.

- :func:`strip_to_pure`: a binary wheel repacked as ``py3-none-any`` without its compiled
  extensions (packages such as markupsafe and pyyaml fall back to their pure-Python modules).
- :func:`slim_wheel`: a copy of a wheel without the files Python in the page never reads
  (Panel's bundled JS, BokehJS: the page serves those from ``./panel/`` and ``./bokeh/``)
  and with the named source rewrites of :mod:`sitebuild.patches` applied (no pandas unless it
  is in use), its ``RECORD`` listing what remains.
- :func:`pyplay_wheel`: pyplay's own wheel, written straight from the working tree (pure
  Python, no network, fixed timestamps) without the developer-only parts (``NOT_SHIPPED``:
  the benchmarks).
- :func:`lock_entry`: the ``pyodide-lock.json`` entry of a wheel the site serves.

Every wheel written here lists each of its files with its sha256 in ``RECORD``, as pip and
micropip expect.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import zipfile
from pathlib import Path

from .config import CACHE, NOT_SHIPPED, PYPLAY_VERSION, ROOT, sha256
from .patches import Patch, PatchError, apply

DATE = (2020, 1, 1, 0, 0, 0)  # every file of pyplay's wheel: the same bytes for the same tree


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _like(original: zipfile.ZipInfo) -> zipfile.ZipInfo:
    """A new entry with ``original``'s name, time and permissions, compressed: a repacked
    wheel has the same bytes every time."""
    info = zipfile.ZipInfo(original.filename, original.date_time)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = original.external_attr
    return info


def strip_to_pure(binary: Path, out_dir: Path) -> Path:
    """Repack a binary wheel without its compiled extensions as ``py3-none-any``: packages
    such as markupsafe and pyyaml fall back to their pure-Python modules."""
    name, version = binary.name.split("-")[:2]
    target = out_dir / f"{name}-{version}-py3-none-any.whl"
    records = []
    with zipfile.ZipFile(binary) as src, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as dst:
        record_name = next(n for n in src.namelist() if n.endswith(".dist-info/RECORD"))
        for item in src.namelist():
            if item == record_name or item.endswith((".so", ".pyd")) or ".libs/" in item:
                continue
            data = src.read(item)
            if item.endswith(".dist-info/WHEEL"):
                lines = [ln for ln in data.decode().splitlines() if not ln.startswith("Tag:")]
                lines = [
                    ("Root-Is-Purelib: true" if ln.startswith("Root-Is-Purelib") else ln)
                    for ln in lines
                ] + ["Tag: py3-none-any"]
                data = ("\n".join(lines) + "\n").encode()
            dst.writestr(_like(src.getinfo(item)), data)
            records.append((item, _record_hash(data), str(len(data))))
        buf = io.StringIO()
        csv.writer(buf).writerows([*records, (record_name, "", "")])
        dst.writestr(_like(src.getinfo(record_name)), buf.getvalue())
    return target


def slim_wheel(wheel: Path, drop: tuple[str, ...], patches: tuple[Patch, ...] = ()) -> Path:
    """A copy of ``wheel`` without the files under the ``drop`` prefixes and with ``patches``
    applied (:mod:`sitebuild.patches`; a patch whose target moved stops the build); its RECORD
    lists what remains with the patched files' hashes. Cached under a key of ``drop`` and the
    patches."""
    key = hashlib.sha256(repr((drop, patches)).encode()).hexdigest()[:12]
    target = CACHE / "slim" / key / wheel.name
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".tmp")
    by_path: dict[str, list[Patch]] = {}
    for patch in patches:
        by_path.setdefault(patch.path, []).append(patch)
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as dst:
        record_name = next(n for n in src.namelist() if n.endswith(".dist-info/RECORD"))
        missing = sorted(set(by_path) - set(src.namelist()))
        if missing:
            tmp.unlink()
            raise PatchError(f"{wheel.name} has no {', '.join(missing)} to patch")
        kept = [i for i in src.infolist() if not i.filename.startswith(drop)]
        changed: dict[str, bytes] = {}
        for info in kept:
            if info.filename in by_path:
                text = src.read(info).decode()
                for patch in by_path[info.filename]:
                    try:
                        text = apply(text, patch)
                    except PatchError:
                        tmp.unlink()
                        raise
                changed[info.filename] = text.encode()
        for info in kept:
            data = changed.get(info.filename) or src.read(info)
            if info.filename == record_name:
                rows = csv.reader(io.StringIO(data.decode()))
                buf = io.StringIO()
                csv.writer(buf).writerows(
                    [r[0], _record_hash(changed[r[0]]), str(len(changed[r[0]]))]
                    if r[0] in changed
                    else r
                    for r in rows
                    if r and not r[0].startswith(drop)
                )
                data = buf.getvalue().encode()
            dst.writestr(info, data)
    tmp.rename(target)
    return target


def pyplay_files() -> list[Path]:
    """The files of pyplay's wheel: the package in the working tree, without bytecode and
    without ``NOT_SHIPPED``."""
    return sorted(
        p
        for p in (ROOT / "pyplay").rglob("*")
        if p.is_file()
        and "__pycache__" not in p.parts
        and p.suffix != ".pyc"
        and not p.relative_to(ROOT).as_posix().startswith(NOT_SHIPPED)
    )


def pyplay_wheel(out_dir: Path) -> Path:
    """A wheel of pyplay from the working tree, written directly (pure Python, no network)."""
    dist_info = f"pyplay-{PYPLAY_VERSION}.dist-info"
    target = out_dir / f"pyplay-{PYPLAY_VERSION}-py3-none-any.whl"
    records = []
    meta = {
        f"{dist_info}/METADATA": f"Metadata-Version: 2.1\nName: pyplay\n"
        f"Version: {PYPLAY_VERSION}\nRequires-Python: >=3.11\nRequires-Dist: numpy\n",
        f"{dist_info}/WHEEL": "Wheel-Version: 1.0\nGenerator: pyplay-build\n"
        "Root-Is-Purelib: true\nTag: py3-none-any\n",
        f"{dist_info}/top_level.txt": "pyplay\n",
    }
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as z:
        items = [(p.relative_to(ROOT).as_posix(), p.read_bytes()) for p in pyplay_files()]
        items += [(k, v.encode()) for k, v in meta.items()]
        for arcname, data in items:
            info = zipfile.ZipInfo(arcname, date_time=DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
            records.append(f"{arcname},{_record_hash(data)},{len(data)}")
        records.append(f"{dist_info}/RECORD,,")
        info = zipfile.ZipInfo(f"{dist_info}/RECORD", date_time=DATE)
        z.writestr(info, "\n".join(records) + "\n")
    return target


def lock_entry(name: str, version: str, path: Path, imports: list[str]) -> dict:
    """The ``pyodide-lock.json`` entry of a pure wheel the site serves from ``./pyodide/``."""
    return {
        "name": name,
        "version": version,
        "file_name": path.name,
        "install_dir": "site",
        "sha256": sha256(path),
        "package_type": "package",
        "imports": imports,
        "depends": [],
        "unvendored_tests": False,
        "shared_library": False,
    }
