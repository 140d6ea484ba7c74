"""The CDN variant ``web/dist-cdn/``: a small site that loads everything but pyplay from CDNs.

``python build.py --cdn`` writes the pages and scripts of ``web/site/`` pointed at public
CDNs, all at the pinned versions:

- the Pyodide runtime and its official wheels from jsDelivr (``/pyodide/v<version>/full/``);
- the pure wheels from PyPI through micropip, each as ``name==version`` (the ones repacked
  without compiled parts come from Pyodide's own repository instead, at start-up);
- BokehJS from cdn.bokeh.org (whose file names carry the version) and Panel's JS/CSS from
  cdn.holoviz.org;
- pyplay's wheel, made from the working tree, beside the pages (the only local file).

It skips the profiling, the compiled bytecode and the site lock of the offline build: the
variant is for hosts that cannot serve ~45 MB, at the price of requests to other origins.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from .assemble import inputs_digest, write_sources
from .config import BOKEH_JS, DIST_CDN, OFFICIAL, PYODIDE_VERSION, PYPI, UI_PINS, log
from .csp import policy
from .profile import worker_config
from .wheels import pyplay_wheel

PYODIDE_CDN = "https://cdn.jsdelivr.net/pyodide/v{version}/full/"
BOKEH_CDN = "https://cdn.bokeh.org/bokeh/release/"
PANEL_CDN = "https://cdn.holoviz.org/panel/{version}/dist/"
# what the variant's pages may load from besides their own origin (micropip reads PyPI)
CDN_ORIGINS = (
    "https://cdn.jsdelivr.net",
    "https://cdn.bokeh.org",
    "https://cdn.holoviz.org",
    "https://pypi.org",
    "https://files.pythonhosted.org",
)


# what the unpatched Panel and Bokeh from PyPI import at start besides the official wheels the
# offline site serves (its own copies are patched not to: sitebuild.patches); Pyodide's CDN
# brings pandas' dependencies along
UNPATCHED_NEEDS = ("pandas",)


def cdn_start(own_wheel: str) -> dict:
    """The worker's start-up configuration of the CDN variant."""
    micropip = [f"{n}=={w.version}" for n, w in PYPI.items() if not w.strip and n not in OFFICIAL]
    stripped = [n for n, w in PYPI.items() if w.strip]  # Pyodide's own builds of these
    return {
        "startup": [*OFFICIAL, *UNPATCHED_NEEDS, "micropip", *stripped],
        "micropip": micropip,
        "own": [own_wheel],
        "deferred": [],
        "stdlib": None,
        "bytecode": None,
        "panelDist": None,  # Panel's components use its CDN
    }


def point_at_cdns(text: str) -> str:
    """A page or script of the site with its local BokehJS and Panel paths on the CDNs."""
    text = text.replace('"./bokeh/', f'"{BOKEH_CDN}')
    text = text.replace('"./panel/', '"' + PANEL_CDN.format(version=UI_PINS["panel"]))
    for name in BOKEH_JS:  # cdn.bokeh.org names its files with the version
        versioned = name.replace(".min", f"-{UI_PINS['bokeh']}.min")
        text = text.replace(f"{BOKEH_CDN}{name}", f"{BOKEH_CDN}{versioned}")
    return text


def build_cdn(dist: Path = DIST_CDN) -> Path:
    """The small variant: Pyodide and wheels from public CDNs, pyplay's wheel local."""
    shutil.rmtree(dist, ignore_errors=True)
    dist.mkdir(parents=True)
    wheel = pyplay_wheel(dist)
    write_sources(
        dist,
        worker_config(cdn_start(wheel.name)),
        "pyplay-cdn-" + inputs_digest()[:12],
        PYODIDE_CDN.format(version=PYODIDE_VERSION),
        point_at_cdns,
        policy(CDN_ORIGINS),
    )
    log(f"wrote {dist} (CDN variant)")
    return dist
