"""The site build without a browser: pins declared once, the benchmarks left out of the page.

The build itself (downloads, profiling in Node, the page in Chromium) is tested end to end by
``tests/browser`` and ``tests/pyodide``; these checks need neither network nor Node.
"""

from __future__ import annotations

import re
import tomllib
import zipfile
from pathlib import Path, PurePosixPath

import pytest

import sitebuild
from paths import ROOT
from sitebuild import config

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def _code_files() -> list[Path]:
    """Code of the build, the site, its tools and the tests (not prose, not build outputs)."""
    out = [ROOT / "build.py"]
    for folder in (ROOT / "web" / "site", ROOT / "web" / "tools", ROOT / "tests"):
        out += [
            p
            for p in folder.rglob("*")
            if p.suffix in {".py", ".js", ".mjs", ".html", ".sh", ".css"}
            and "__pycache__" not in p.parts
        ]
    out.append(ROOT / "web" / "measure.py")
    return sorted(out)


def test_pins_are_read_from_pyproject():
    ui = dict(pin.split("==") for pin in PROJECT["project"]["optional-dependencies"]["ui"])
    site = PROJECT["tool"]["pyplay"]["site"]
    assert config.UI_PINS == ui
    assert config.PYODIDE_VERSION == site["pyodide"]
    assert config.PYPI["panel"].version == ui["panel"]
    assert config.PYPI["bokeh"].version == ui["bokeh"]
    assert list(config.PYPI) == list(site["wheels"])  # the load order is the declared one
    assert config.PYPLAY_VERSION == PROJECT["project"]["version"]
    assert config.CARRIER.version == site["carrier"]["version"]


def test_no_code_repeats_a_pinned_version():
    """Pyodide's, Panel's and Bokeh's versions are written in pyproject.toml only: the build,
    the site's files, the tools and the tests read them from there."""
    ui = dict(pin.split("==") for pin in PROJECT["project"]["optional-dependencies"]["ui"])
    versions = [PROJECT["tool"]["pyplay"]["site"]["pyodide"], ui["panel"], ui["bokeh"]]
    pattern = re.compile(
        r"(?<![\w.])(" + "|".join(re.escape(v) for v in versions) + r")(?![\w.]*\d)"
    )
    found = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in _code_files()
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
    assert found == []


def test_the_site_wheel_leaves_the_benchmarks_out(tmp_path):
    wheel = sitebuild.pyplay_wheel(tmp_path)
    names = zipfile.ZipFile(wheel).namelist()
    assert "pyplay/ui/app.py" in names and "pyplay/__init__.py" in names
    assert [n for n in names if n.startswith("pyplay/bench")] == []
    assert (ROOT / "pyplay" / "bench" / "__main__.py").is_file()  # still in the package


def test_both_wheels_ship_the_lessons_prose(tmp_path):
    """A lesson's heading and help are Markdown beside its view (``pyplay.ui.lesson_page``):
    the page's wheel and pip's (pyproject's package-data) must both carry every such file."""
    prose = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "pyplay").rglob("*.md"))
    assert "pyplay/ui/lessons/ctc/help.md" in prose
    assert "pyplay/ui/lessons/dynamic/rtrl_help.md" in prose
    names = set(zipfile.ZipFile(sitebuild.pyplay_wheel(tmp_path)).namelist())
    assert [p for p in prose if p not in names] == []
    globs = PROJECT["tool"]["setuptools"]["package-data"]["pyplay"]
    inside = [PurePosixPath(p).relative_to("pyplay") for p in prose]
    assert [p for p in inside if not any(p.match(g) for g in globs)] == []


def test_nothing_the_page_runs_imports_the_benchmarks():
    pattern = re.compile(r"pyplay\.bench|from pyplay import bench|from \.+ import bench")
    shipped = [p for p in (ROOT / "pyplay").rglob("*.py") if "bench" not in p.parts]
    shipped += sorted((ROOT / "web" / "site").iterdir())
    assert [str(p) for p in shipped if pattern.search(p.read_text())] == []


def test_build_py_is_the_entry_point_of_the_package():
    text = (ROOT / "build.py").read_text()
    assert "from sitebuild import main" in text
    assert len(text.splitlines()) < 40


@pytest.mark.slow
def test_the_server_sends_gzip_for_what_compresses_as_static_hosts_do(tmp_path):
    import gzip
    import urllib.request

    from sitebuild.serve import Handler, serve_in_thread

    runtime = bytes(range(256)) * 400  # compresses
    (tmp_path / "a.wasm").write_bytes(runtime)
    (tmp_path / "b.whl").write_bytes(runtime)  # a zip already: sent as it is
    server, url = serve_in_thread(tmp_path)
    try:
        for name, accept, encoded in (
            ("a.wasm", "gzip, deflate", True),
            ("a.wasm", "identity", False),
            ("b.whl", "gzip", False),
        ):
            before = Handler.bytes_sent
            request = urllib.request.Request(url + name, headers={"Accept-Encoding": accept})
            with urllib.request.urlopen(request) as response:
                body = response.read()
                assert (response.headers.get("Content-Encoding") == "gzip") is encoded, name
            sent = Handler.bytes_sent - before
            assert (gzip.decompress(body) if encoded else body) == runtime
            assert sent == len(body) and (sent < len(runtime) / 10) is encoded
    finally:
        server.shutdown()
        server.server_close()
