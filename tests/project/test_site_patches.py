"""The build's source rewrites of Bokeh and Panel (``web/tools/sitebuild/patches.py``).

Each patch must find its target exactly once (or the build stops), and the patched packages
must work without pandas: run natively in a subprocess whose imports of pandas & co. fail,
they import, build figures and data sources, stream, validate and serialise dates. With pandas
imported first, pandas input still takes the original paths. The page itself is tested in
``tests/browser/test_startup.py``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from sitebuild import assemble, config, patches
from sitebuild.a11y_patches import A11Y_PATCHES
from sitebuild.fetch import pypi_wheel
from sitebuild.patches import ASSET_PATCHES, PATCHES, Patch, PatchError, apply
from sitebuild.wheels import slim_wheel

BLOCK = """
import importlib.abc, sys
NEVER = {"pandas", "PIL", "contourpy", "pytz", "dateutil"}
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in NEVER:
            raise ImportError(f"the page must not import {name}")
sys.meta_path.insert(0, Block())
"""
USE = """
import datetime as dt
import numpy as np
import panel
from bokeh.document import Document
from bokeh.models import ColumnDataSource, DataRange1d, DateRangeSlider, DatetimeTickFormatter
from bokeh.plotting import figure
from bokeh.plotting._plot import get_range
from bokeh.util.serialization import convert_datetime_type, is_datetime_type

source = ColumnDataSource(data={"x": [0.0, 1.0], "y": [1.0, 2.0]})
source.stream({"x": [2.0], "y": [3.0]}, rollover=10)
source.stream({"x": np.array([3.0]), "y": np.array([4.0])})
assert list(source.data["x"]) == [0.0, 1.0, 2.0, 3.0], source.data
fig = figure(x_range=(0, 4), y_range=["a", "b"])
fig.line("x", "y", source=source)
assert isinstance(get_range(None), DataRange1d)
assert get_range(["a", "b"]).factors == ["a", "b"]
fig.xaxis.formatter = DatetimeTickFormatter()
day = dt.datetime(2020, 1, 2)
slider = DateRangeSlider(start=day, end=dt.datetime(2020, 2, 1), value=(day, day))
assert is_datetime_type(day) and not is_datetime_type(1.0)
assert convert_datetime_type(day) == 1577923200000.0
doc = Document()
doc.add_root(panel.Column(fig, slider).get_root(doc))
doc.to_json()
"""


@pytest.fixture(scope="module")
def patched(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The served Bokeh and Panel (slimmed and patched as the build does), unpacked."""
    folder = tmp_path_factory.mktemp("patched")
    for name in ("bokeh", "panel"):
        wheel = pypi_wheel(name, config.PYPI[name].version, False)
        served = slim_wheel(wheel, config.SLIM[name], patches.patches_for(name))
        with zipfile.ZipFile(served) as z:
            z.extractall(folder)
    return folder


def run_python(path: Path, code: str) -> subprocess.CompletedProcess:
    prelude = f"import sys\nsys.path.insert(0, {str(path)!r})\n"
    return subprocess.run(
        [sys.executable, "-c", prelude + code], capture_output=True, text=True, timeout=300
    )


def test_every_patch_belongs_to_a_served_slimmed_wheel():
    names = [p.name for p in PATCHES]
    assert len(names) == len(set(names))
    for patch in PATCHES:
        assert patch.package in config.SLIM and patch.old != patch.new and patch.why


def test_a_patch_whose_target_moved_is_refused():
    patch = Patch("p", "bokeh", "a.py", "import pandas as pd\n", "pd = None\n", "test")
    assert apply("x = 1\nimport pandas as pd\n", patch) == "x = 1\npd = None\n"
    with pytest.raises(PatchError, match="occurs 0 times"):
        apply("import pandas\n", patch)
    with pytest.raises(PatchError, match="occurs 2 times"):
        apply("import pandas as pd\n" * 2, patch)


def test_a_wheel_without_the_patched_file_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr("sitebuild.wheels.CACHE", tmp_path / "cache")
    wheel = tmp_path / "demo-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("demo/a.py", "import pandas as pd\n")
        z.writestr("demo-1.0.dist-info/RECORD", "demo/a.py,,\n")
    moved = Patch("moved", "demo", "demo/a.py", "import pandas\n", "", "test")
    with pytest.raises(PatchError, match="'moved'"):
        slim_wheel(wheel, (), (moved,))
    elsewhere = Patch("elsewhere", "demo", "demo/b.py", "x", "y", "test")
    with pytest.raises(PatchError, match=r"no demo/b\.py"):
        slim_wheel(wheel, (), (elsewhere,))
    assert not list((tmp_path / "cache").rglob("*.whl"))
    fine = Patch("fine", "demo", "demo/a.py", "import pandas as pd\n", "pd = None\n", "test")
    out = slim_wheel(wheel, (), (fine,))
    with zipfile.ZipFile(out) as z:
        assert z.read("demo/a.py") == b"pd = None\n"
        record = z.read("demo-1.0.dist-info/RECORD").decode()
    assert record.startswith("demo/a.py,sha256=") and ",10\r\n" in record


@pytest.mark.slow
def test_the_patched_packages_work_without_pandas(patched):
    result = run_python(patched, BLOCK + USE + "print(sorted(sys.modules)[:0], 'ok')")
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().endswith("ok")


@pytest.mark.slow
def test_the_unpatched_packages_import_pandas():
    """The patches are needed: the installed (unpatched) Bokeh's data source imports pandas,
    so the check above can fail."""
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            BLOCK + "from bokeh.models import ColumnDataSource\n"
            "ColumnDataSource(data={'x': [1]})\n",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode != 0 and "must not import pandas" in result.stderr


@pytest.mark.slow
def test_pandas_input_still_works_once_pandas_is_in_use(patched):
    pytest.importorskip("pandas")
    code = (
        "import pandas as pd\n"
        "from bokeh.models import ColumnDataSource\n"
        "from bokeh.util.serialization import is_datetime_type\n"
        "s = ColumnDataSource(data={'index': [0], 'x': [1.0]})\n"
        "s.stream(pd.DataFrame({'x': [2.0]}))\n"
        "assert list(s.data['x']) == [1.0, 2.0], s.data\n"
        "from bokeh.plotting._plot import get_range\n"
        "assert get_range(pd.Series([0.0, 2.0])).end == 2.0\n"
        "assert is_datetime_type(pd.Timestamp('2020-01-01'))\n"
        "print('ok')\n"
    )
    result = run_python(patched, code)
    assert result.returncode == 0, result.stderr[-3000:]


# a document of the kinds of models the page draws (a log-axis figure with a line, legend and
# hover tool, an image with a colour mapper and bar, Panel widgets and layouts): printed as
# its JSON (twice: the second after every property was read) and every property's value as
# read, twice (the second read of a default is the one the patch caches), by model id
DOCUMENT = """
import json
import warnings

import numpy as np
import panel as pn
import panel.chat  # noqa: F401  (as the installed Panel does: their models are in "defs")
import panel.template  # noqa: F401
from bokeh.document import Document
from bokeh.models import ColorBar, HoverTool, LinearColorMapper
from bokeh.plotting import figure

warnings.simplefilter("ignore")  # reading every property reads deprecated ones too


def plain(obj):  # a buffer by its bytes (its repr has an address)
    return obj.to_base64() if hasattr(obj, "to_base64") else str(obj)


def canonical(doc):  # its JSON, the model definitions by name (their order is import order)
    doc["defs"] = sorted(doc.get("defs", []), key=lambda d: d["name"])
    return json.dumps(doc, sort_keys=True, default=plain)


def read(model, name):  # a property's value, or the error reading it raises
    try:
        return repr(getattr(model, name))
    except Exception as err:
        return type(err).__name__


fig = figure(height=200, tools=[HoverTool()], title="loss", y_axis_type="log")
fig.line([0, 1, 2], [1.0, 0.5, 0.2], legend_label="loss")
heat = figure(height=120, x_range=(0, 4), y_range=(0, 2))
mapper = LinearColorMapper(palette="Viridis256", low=-1, high=1)
heat.image(image=[np.zeros((2, 4))], x=0, y=0, dw=4, dh=2, color_mapper=mapper)
heat.add_layout(ColorBar(color_mapper=mapper), "right")
layout = pn.Column(
    pn.widgets.Button(name="Train"), pn.widgets.IntSlider(name="n", start=0, end=5), fig, heat
)
doc = Document()
doc.add_root(layout.get_root(doc))
first = canonical(doc.to_json())
models = sorted(doc.models, key=lambda m: m.id)
values = [{m.id: {k: read(m, k) for k in sorted(m.properties())} for m in models} for _ in "ab"]
again = canonical(doc.to_json())
print(json.dumps({"doc": first, "values": values, "again": again}))
"""


@pytest.mark.slow
def test_the_patched_bokeh_gives_the_same_document_and_values(patched):
    """``bokeh-stable-defaults-once`` and ``bokeh-no-model-signatures`` change no value: a
    document built and serialised with the served Bokeh is exactly the installed Bokeh's
    (with Panel's chat and templates imported on both sides, as the installed Panel does)
    (same JSON, same value of every property of every model, read twice), and the served
    one did keep defaults once per class and build no signatures."""
    served = run_python(
        patched,
        DOCUMENT
        + "from bokeh.core.property import descriptors\n"
        + "from bokeh.models import Plot\n"
        + "import sys\n"
        + "print(len(descriptors._PYPLAY_STABLE_DEFAULTS), hasattr(Plot.__init__, "
        + "'__signature__'), file=sys.stderr)\n",
    )
    assert served.returncode == 0, served.stderr[-3000:]
    installed = subprocess.run(
        [sys.executable, "-c", DOCUMENT], capture_output=True, text=True, timeout=300
    )
    assert installed.returncode == 0, installed.stderr[-3000:]
    mine, theirs = json.loads(served.stdout), json.loads(installed.stdout)
    assert len(theirs["values"][0]) > 40  # every model of the document, by id
    assert mine == theirs
    kept, signed = served.stderr.split()[-2:]
    assert int(kept) > 100 and signed == "False"


@pytest.mark.slow
def test_the_served_panel_imports_chat_and_templates_only_when_used(patched):
    code = (
        "import sys\n"
        "import panel as pn\n"
        "assert 'panel.chat' not in sys.modules and 'panel.template' not in sys.modules\n"
        "from panel import Template\n"
        "assert Template is pn.template.Template and pn.chat.ChatInterface\n"
        "try:\n"
        "    pn.no_such_name\n"
        "except AttributeError as err:\n"
        "    assert 'no_such_name' in str(err)\n"
        "else:\n"
        "    raise AssertionError('pn.no_such_name did not raise')\n"
        "print('ok')\n"
    )
    result = run_python(patched, code)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "ok"


# a CSS custom property for a Bokeh visual, defined (in a stylesheet, or as a styles key)
BK_VARIABLE = re.compile(r"--bk-[\w-]+[\"']?\s*:")


def test_the_bokehjs_rewrite_finds_its_target_in_the_pinned_bokehjs(tmp_path):
    """The site's ``bokeh/bokeh.min.js`` is the native (pinned) one with every asset patch
    applied once: the original reads the CSS cascade for visuals and the font size, the served
    one does not (once per task for the font size), and writes a stylesheet only when its text
    changes."""
    assert patches.patches_for("bokehjs") == ASSET_PATCHES
    assemble._copy_ui_assets(tmp_path)
    import bokeh

    native = (Path(bokeh.__file__).parent / "server/static/js/bokeh.min.js").read_text()
    served = (tmp_path / "bokeh" / "bokeh.min.js").read_text()
    expected = native
    for patch in ASSET_PATCHES:
        assert native.count(patch.old) == 1
        assert patch.old not in served and served.count(patch.new) == 1
        expected = apply(expected, patch)
    for patch in A11Y_PATCHES:
        if patch.path == "bokeh.min.js":
            expected = apply(expected, patch)
    assert served == expected
    assert served.count("getComputedStyle(this.obj.el)") == 0  # the visuals' reads
    assert served.count("getComputedStyle(this.el).fontSize") == 1  # once a task, shared
    assert "_update(t){this.el.textContent!==t&&(this.el.textContent=t)" in served
    assert native.count("getComputedStyle(this.obj.el)") == 1
    assert "_update(t){this.el.textContent=t}" in native


def test_the_accessibility_rewrites_find_their_targets_in_the_pinned_bokehjs(tmp_path):
    """Every rewrite of :data:`A11Y_PATCHES` replaced its one target in the served BokehJS or
    Panel JS file it names (the tabs' roles and keys, the sliders', checkboxes', spin buttons'
    and file inputs' names), and nothing else of those files changed."""
    assemble._copy_ui_assets(tmp_path)
    import bokeh
    import panel

    native_dirs = {
        "bokehjs": (Path(bokeh.__file__).parent / "server/static/js", "bokeh"),
        "paneljs": (Path(panel.__file__).parent / "dist", "panel"),
    }
    assert {(p.package, p.path) for p in A11Y_PATCHES} == {
        ("bokehjs", "bokeh.min.js"),
        ("bokehjs", "bokeh-widgets.min.js"),
        ("paneljs", "panel.min.js"),
    }
    expected: dict[tuple[str, str], str] = {}
    for patch in A11Y_PATCHES:
        native_dir, folder = native_dirs[patch.package]
        native = (native_dir / patch.path).read_text()
        served = (tmp_path / folder / patch.path).read_text()
        assert native.count(patch.old) == 1, patch.name
        assert served.count(patch.new) == 1, patch.name  # the old text only where new keeps it
        assert served.count(patch.old) == patch.new.count(patch.old), patch.name
        if patch.path != "bokeh.min.js":  # (that one also has the ASSET_PATCHES: test above)
            key = (patch.package, patch.path)
            expected[key] = apply(expected.get(key, native), patch)
    for (package, path), text in expected.items():
        assert (tmp_path / native_dirs[package][1] / path).read_text() == text


@pytest.mark.slow
def test_no_stylesheet_of_the_site_defines_a_bokeh_visual_variable():
    """The BokehJS rewrite is exact only while nothing the page loads defines a ``--bk-*``
    variable (pyplay's styles, the site's files, Panel's and Bokeh's CSS and JS): then the
    cascade's answer was always "" and the model's value was drawn, as now."""
    import bokeh
    import panel

    roots = [
        config.ROOT / "pyplay",
        config.ROOT / "web" / "site",
        Path(panel.__file__).parent / "dist",
        Path(bokeh.__file__).parent / "server" / "static",
    ]
    files = [
        f for root in roots for f in root.rglob("*") if f.suffix in {".py", ".css", ".js", ".html"}
    ]
    assert len(files) > 500  # the scan reads them all, not an empty folder
    assert BK_VARIABLE.search('styles={"--bk-major-label-text-color": "red"}')
    assert BK_VARIABLE.search(":host { --bk-line-color: red; }")
    assert not BK_VARIABLE.search("`--bk-${name}`")
    found = [f for f in files if BK_VARIABLE.search(f.read_text(errors="ignore"))]
    assert found == []
