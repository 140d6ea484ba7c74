"""Fetching what the site ships, cached in ``web/.cache`` and verified.

- The Pyodide runtime and its official lock (``pyodide-lock.json``): the npm package
  ``pyodide@<pins' version>``, packed with ``npm pack`` and extracted once.
- The official Pyodide wheels (NumPy, built for wasm, and packaging): read out of the pinned
  carrier package from PyPI, and each checked against the sha256 that the official lock
  records. A wheel whose digest differs is deleted and the build stops ("refused"): the site
  only ever serves the bytes the Pyodide project published.
- Pure wheels from PyPI at their pinned versions (``pip download --no-deps``), for Pyodide's
  Python; a binary-only package (markupsafe, pyyaml) is downloaded as a manylinux wheel and
  repacked without its compiled extensions (:func:`sitebuild.wheels.strip_to_pure`).

A second build finds everything in the cache and needs no network. The sha256 of every PyPI
wheel the site serves is recorded in the site's ``pyplay-lock.json`` by the assembly step.
"""

from __future__ import annotations

import json
import shutil
import sys
import tarfile
import zipfile
from pathlib import Path

from .config import CACHE, CARRIER, OFFICIAL, PYODIDE_VERSION, TEST_PYPI, log, run, sha256
from .wheels import strip_to_pure


def pyodide_core() -> Path:
    """The extracted npm package ``pyodide@<version>`` (core files and the official lock)."""
    target = CACHE / f"pyodide-{PYODIDE_VERSION}"
    if (target / "pyodide-lock.json").exists():
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    tgz = CACHE / f"pyodide-{PYODIDE_VERSION}.tgz"
    if not tgz.exists():
        log(f"npm pack pyodide@{PYODIDE_VERSION}")
        run(
            [
                "npm",
                "pack",
                f"pyodide@{PYODIDE_VERSION}",
                "--pack-destination",
                str(CACHE),
                "--silent",
            ]
        )
    with tarfile.open(tgz) as tar:
        tmp = CACHE / "pyodide-extract"
        shutil.rmtree(tmp, ignore_errors=True)
        tar.extractall(tmp, filter="data")
        (tmp / "package").rename(target)
        shutil.rmtree(tmp)
    return target


def official_lock() -> dict:
    """The official ``pyodide-lock.json``, refused if it is not the pinned version's."""
    lock = json.loads((pyodide_core() / "pyodide-lock.json").read_text())
    if lock["info"]["version"] != PYODIDE_VERSION:
        sys.exit(f"npm pyodide package is {lock['info']['version']}, expected {PYODIDE_VERSION}")
    return lock


def pyodide_python() -> str:
    """The ``major.minor`` version of Pyodide's Python (from the official lock), for which the
    pure wheels are downloaded."""
    return ".".join(official_lock()["info"]["python"].split(".")[:2])


def official_wheels(lock: dict) -> dict[str, Path]:
    """The OFFICIAL wheels, each verified against the official lock's sha256."""
    out_dir = CACHE / "official"
    out_dir.mkdir(parents=True, exist_ok=True)
    wanted = {name: lock["packages"][name] for name in OFFICIAL}
    missing = [n for n, e in wanted.items() if not (out_dir / e["file_name"]).exists()]
    if missing:
        carrier_dir = CACHE / "carrier"
        if not list(carrier_dir.glob("*.whl")):
            log(f"pip download {CARRIER.name}=={CARRIER.version} (carrier of the official wheels)")
            _pip_download(f"{CARRIER.name}=={CARRIER.version}", carrier_dir)
        (whl,) = carrier_dir.glob("*.whl")
        with zipfile.ZipFile(whl) as z:
            for pkg in missing:
                data = z.read(CARRIER.folder + wanted[pkg]["file_name"])
                (out_dir / wanted[pkg]["file_name"]).write_bytes(data)
    result = {}
    for pkg, entry in wanted.items():
        path = out_dir / entry["file_name"]
        digest = sha256(path)
        if digest != entry["sha256"]:
            path.unlink()
            sys.exit(
                f"refused {entry['file_name']}: sha256 {digest} differs from the official "
                f"pyodide-lock.json ({entry['sha256']})"
            )
        result[pkg] = path
    return result


def _normal(name: str) -> str:
    return name.replace("-", "_").lower()


def _pip_download(spec: str, dest: Path, *wheel_for: str) -> None:
    """``pip download --no-deps spec`` into ``dest``; ``wheel_for`` = (platform,
    implementation, abi): only a binary wheel for that and Pyodide's Python."""
    options: list[str] = []
    if wheel_for:
        platform, implementation, abi = wheel_for
        options = ["--only-binary=:all:", "--platform", platform]
        options += ["--python-version", pyodide_python(), "--implementation", implementation]
        options += ["--abi", abi]
    pip = [sys.executable, "-m", "pip", "download", "-q", "--no-deps"]
    run([*pip, *options, "-d", str(dest), spec])


def pypi_wheel(name: str, version: str, strip: bool) -> Path:
    """A pure ``py3-none-any`` wheel of ``name==version`` from PyPI (cached); with ``strip``,
    the CPython wheel for Pyodide's Python repacked without its compiled extensions."""
    out_dir = CACHE / "pypi"
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = f"{_normal(name)}-{version}-"
    for path in out_dir.glob("*.whl"):
        if path.name.lower().startswith(stem.lower()) and path.name.endswith("none-any.whl"):
            return path
    log(f"pip download {name}=={version}")
    if not strip:
        _pip_download(f"{name}=={version}", out_dir, "any", "py", "none")
        return pypi_wheel(name, version, strip)
    bin_dir = CACHE / "pypi-binary"
    cp = "cp" + pyodide_python().replace(".", "")
    _pip_download(f"{name}=={version}", bin_dir, "manylinux2014_x86_64", "cp", cp)
    (binary,) = [p for p in bin_dir.glob("*.whl") if p.name.lower().startswith(stem.lower())]
    return strip_to_pure(binary, out_dir)


def test_wheels() -> list[Path]:
    """Wheels of pytest and its dependencies, for running the core's tests inside Pyodide."""
    return [pypi_wheel(n, w.version, w.strip) for n, w in TEST_PYPI.items()]
