"""Assembling the offline site ``web/dist/``: one build at a time, and only when stale.

:func:`build` writes, into ``web/dist.tmp`` and then in place of ``web/dist`` at once:

- ``pyodide/``: the runtime's core files, the official wheels (verified against the official
  lock), the pinned pure wheels (Panel's and Bokeh's slimmed), pyplay's wheel from the working
  tree, and a ``pyodide-lock.json`` that lists exactly these (every dependency shipped), plus
  the profiled start's compiled stdlib and site-packages bytecode (the first render's in one
  archive with its pure-Python packages: :mod:`sitebuild.startup_archive`);
- ``bokeh/`` and ``panel/``: BokehJS and Panel's JS/CSS, copied from the native install, whose
  versions must be the pinned ones (the wheels' Python and the page's JS must match), BokehJS
  with the named rewrites of :data:`.patches.ASSET_PATCHES`;
- the pages and scripts of ``web/site/`` with their placeholders filled (``__CONFIG__``: the
  worker's start-up configuration; ``__CACHE_VERSION__``: the service worker's cache name,
  new for every change; ``__PYODIDE_URL__``: where the runtime is);
- ``pyplay-lock.json``: the Pyodide version, every package pinned by version, file and sha256
  (with where it came from), and every file of the site with its sha256 and size;
- ``build-stamp.txt``: the digest of every input (:func:`inputs_digest`), so that
  :func:`is_fresh` knows when nothing changed.

The site makes no request outside its own origin. Builds of one checkout share ``web/.cache``
and ``web/dist.tmp``, so :func:`build_lock` lets one run at a time; a build that waited for
another that left the site fresh builds nothing more.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from .a11y_patches import A11Y_PATCHES
from .config import (
    BOKEH_JS,
    BOOT,
    CACHE,
    DIST,
    OFFICIAL,
    PROFILE_JS,
    PYODIDE_CORE,
    PYODIDE_VERSION,
    PYPI,
    PYPLAY_VERSION,
    ROOT,
    SITE,
    SLIM,
    SOURCES,
    UI_PINS,
    log,
    sha256,
)
from .csp import PLACEHOLDER, policy
from .fetch import official_lock, official_wheels, pyodide_core, pypi_wheel
from .patches import PatchError, apply, patches_for
from .profile import offline_start, profile, worker_config
from .startup_archive import write_startup_archive
from .wheels import lock_entry, pyplay_files, pyplay_wheel, slim_wheel


def inputs_digest() -> str:
    """Hash of everything a build depends on, to know when ``web/dist`` is stale."""
    h = hashlib.sha256()
    paths = [ROOT / "build.py", ROOT / "pyproject.toml"]
    paths += sorted(Path(__file__).parent.glob("*.py"))
    paths += pyplay_files()
    paths += [SITE / s for s in SOURCES] + [BOOT, PROFILE_JS]
    for p in paths:
        h.update(p.relative_to(ROOT).as_posix().encode())
        h.update(p.read_bytes() if p.exists() else b"")
    return h.hexdigest()


def is_fresh(dist: Path = DIST) -> bool:
    """Whether ``dist`` was built from the inputs as they are now."""
    stamp = dist / "build-stamp.txt"
    return stamp.exists() and stamp.read_text().strip() == inputs_digest()


def write_sources(
    dist: Path,
    config: str,
    cache_version: str,
    pyodide_url: str,
    edit: Callable[[str], str] = lambda text: text,
    csp: str | None = None,
) -> None:
    """Write ``web/site``'s pages and scripts into ``dist`` with their placeholders filled
    (then ``edit``ed: the CDN variant points them at the CDNs); ``csp`` is the pages'
    Content-Security-Policy (default: the offline site's, :func:`.csp.policy`)."""
    for name in SOURCES:
        text = (SITE / name).read_text()
        text = text.replace(PLACEHOLDER, policy() if csp is None else csp)
        text = text.replace("__CONFIG__", config)
        text = text.replace("__CACHE_VERSION__", cache_version)
        text = text.replace("__PYODIDE_URL__", pyodide_url)
        (dist / name).write_text(edit(text))


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


def _check_native_ui() -> None:
    """The native Panel and Bokeh, whose JS/CSS the site serves, must be the pinned ones."""
    import bokeh
    import panel

    for pkg, mod in (("panel", panel), ("bokeh", bokeh)):
        if mod.__version__ != UI_PINS[pkg]:
            sys.exit(
                f"the native {pkg} is {mod.__version__}; BokehJS/Panel assets must match "
                f"the wheels ({UI_PINS[pkg]}): pip install -e '.[ui]'"
            )


def _copy_wheels(pyodide_dir: Path) -> tuple[dict, dict[str, dict]]:
    """Copy every wheel into ``pyodide_dir``; returns the served ``pyodide-lock.json`` and the
    pins of ``pyplay-lock.json``."""
    lock = official_lock()
    served: dict = {"info": lock["info"], "packages": {}}
    pins: dict[str, dict] = {}
    for name, path in official_wheels(lock).items():
        shutil.copy2(path, pyodide_dir / path.name)
        entry = lock["packages"][name]
        served["packages"][name] = entry
        pins[name] = {
            "version": entry["version"],
            "file": path.name,
            "sha256": entry["sha256"],
            "source": "official",
        }
    for name, (version, imports, strip) in PYPI.items():
        path = pypi_wheel(name, version, strip)
        source = "pypi" + (" (compiled parts removed)" if strip else "")
        if name in SLIM:
            original = sha256(path)
            patches = patches_for(name)
            try:
                path = slim_wheel(path, SLIM[name], patches)
            except PatchError as err:
                sys.exit(f"build.py: {err}")
            source = f"pypi sha256 {original}, without {', '.join(SLIM[name])}"
            if patches:
                source += f"; patched: {', '.join(p.name for p in patches)}"
        shutil.copy2(path, pyodide_dir / path.name)
        served["packages"][name] = lock_entry(name, version, path, imports)
        pins[name] = {"version": version, "file": path.name, "sha256": sha256(path)}
        pins[name]["source"] = source
    wheel = pyplay_wheel(pyodide_dir)
    served["packages"]["pyplay"] = lock_entry("pyplay", PYPLAY_VERSION, wheel, ["pyplay"])
    pins["pyplay"] = {"version": PYPLAY_VERSION, "file": wheel.name, "sha256": sha256(wheel)}
    pins["pyplay"]["source"] = "working tree"
    for entry in served["packages"].values():  # every dependency must be shipped
        for dep in entry["depends"]:
            if dep not in served["packages"]:
                sys.exit(f"{entry['name']} depends on {dep}, which the build does not ship")
    return served, pins


def _copy_ui_assets(tmp: Path) -> None:
    """BokehJS into ``bokeh/``, Panel's JS, CSS and theme into ``panel/``, then the named
    rewrites of the JS (:data:`~sitebuild.patches.ASSET_PATCHES`,
    :data:`~sitebuild.a11y_patches.A11Y_PATCHES`), or the build stops."""
    import bokeh
    import panel

    bokeh_js = Path(bokeh.__file__).parent / "server" / "static" / "js"
    (tmp / "bokeh").mkdir()
    for name in BOKEH_JS:
        shutil.copy2(bokeh_js / name, tmp / "bokeh" / name)
    panel_dist = Path(panel.__file__).parent / "dist"
    shutil.copytree(panel_dist / "css", tmp / "panel" / "css")
    shutil.copytree(panel_dist / "bundled" / "theme", tmp / "panel" / "bundled" / "theme")
    shutil.copy2(panel_dist / "panel.min.js", tmp / "panel" / "panel.min.js")
    folders = {"bokehjs": "bokeh", "paneljs": "panel"}  # where each served JS package is
    for patch in (*patches_for("bokehjs"), *A11Y_PATCHES):
        target = tmp / folders[patch.package] / patch.path
        target.write_text(apply(target.read_text(encoding="utf-8"), patch), encoding="utf-8")


def _build(dist: Path) -> Path:
    digest = inputs_digest()  # before reading any input: an edit during the build makes it stale
    core = pyodide_core()
    official_lock()  # the pinned version's, or stop before writing anything
    _check_native_ui()
    tmp = dist.with_name(dist.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / "pyodide").mkdir(parents=True)
    for name in PYODIDE_CORE:
        shutil.copy2(core / name, tmp / "pyodide" / name)
    served, pins = _copy_wheels(tmp / "pyodide")
    (tmp / "pyodide" / "pyodide-lock.json").write_text(json.dumps(served, indent=1))
    _copy_ui_assets(tmp)

    prof = profile(tmp, [*OFFICIAL, *PYPI, "pyplay"])
    shutil.copy2(prof["stdlib"], tmp / "pyodide" / "python_stdlib_compiled.zip")
    # the first render's pure wheels and bytecode, one archive (instead of one loadPackage each)
    unpacked = write_startup_archive(tmp / "pyodide", served, prof["startup"], prof["bytecode"])
    shutil.copy2(prof["bytecode_later"], tmp / "pyodide" / "site-bytecode-later.zip")
    lock_hash = hashlib.sha256(json.dumps(pins, sort_keys=True).encode()).hexdigest()[:16]
    write_sources(
        tmp,
        worker_config(offline_start(prof, unpacked)),
        f"pyplay-{lock_hash}-{digest[:12]}",
        "./pyodide/",
    )

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
