"""Named source rewrites of the served Bokeh and Panel wheels: no pandas unless it is in use,
and no work at the page's start that only help() or a repeated default needed.

The pinned Bokeh and Panel (the ``ui`` extra) import pandas (and with it pytz and dateutil) on
paths every page takes: Panel's ``panel.io.pyodide`` at import when ``pyodide_http`` is missing,
Bokeh's ``ColumnDataSource.__init__``, figure ranges, ``stream()``, date and time validation and
the DataFrame/GroupBy properties. Each of these only tests whether an object is a pandas
object, or converts pandas input. When pandas was never imported (``"pandas" not in
sys.modules``), no object can be a pandas object, so the page can skip the test; when it was
imported, the original test runs unchanged. Loading pandas cost the page about 1.5 s and 6 MB,
and nothing in it uses pandas, so the site serves neither it nor what only it needs.

Each :class:`Patch` replaces one exact piece of text in one file. :func:`apply` refuses (the
build stops, :class:`PatchError`) when that text is not found exactly once: a new Bokeh or
Panel whose code moved must be looked at again, not patched blindly. The patched wheels keep
their names; ``pyplay-lock.json`` records the original wheel's sha256 and the patches applied.
One more kind, :data:`ASSET_PATCHES`, rewrites BokehJS as the site serves it (a tab's first
drawing and a training lesson's redraws, below).
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["ASSET_PATCHES", "PATCHES", "Patch", "PatchError", "apply", "patches_for"]


class PatchError(RuntimeError):
    """A patch's target text is missing or not unique: the wheel is not the one it was
    written for."""


class Patch(NamedTuple):
    """Replace ``old`` by ``new`` (exactly one occurrence) in ``path`` of package ``package``'s
    wheel; ``why`` says what it avoids."""

    name: str
    package: str
    path: str
    old: str
    new: str
    why: str


# "pandas" in sys.modules: the one test every rewrite below uses (sys is imported by each
# patched module already, or by the patch)
PATCHES: tuple[Patch, ...] = (
    Patch(
        "panel-pyodide-read-csv",
        "panel",
        "panel/io/pyodide.py",
        "if pyodide_http is None:\n    import pandas\n",
        "if pyodide_http is None and 'pandas' in sys.modules:  # pyplay: no pandas unless in use\n"
        "    import pandas\n",
        "panel.io.pyodide imports pandas at import to wrap read_csv/read_json for URLs",
    ),
    Patch(
        "bokeh-cds-init",
        "bokeh",
        "bokeh/models/sources.py",
        "        import narwhals.stable.v1 as nw\n"
        "        import pandas as pd\n"
        "\n"
        "        if not isinstance(raw_data, dict):\n",
        "        import narwhals.stable.v1 as nw\n"
        "\n"
        "        if not isinstance(raw_data, dict):  # pyplay: pandas imported only for non-dicts\n"
        "            import pandas as pd\n",
        "ColumnDataSource(data=dict) imported pandas for a GroupBy test only non-dicts reach",
    ),
    Patch(
        "bokeh-cds-stream",
        "bokeh",
        "bokeh/models/sources.py",
        "        import pandas as pd\n"
        "\n"
        "        needs_length_check = True\n"
        "\n"
        "        if isinstance(new_data, pd.Series | pd.DataFrame):\n",
        "        import sys  # pyplay: no pandas unless in use\n"
        "\n"
        "        pd = sys.modules.get('pandas')\n"
        "        needs_length_check = True\n"
        "\n"
        "        if pd is not None and isinstance(new_data, pd.Series | pd.DataFrame):\n",
        "ColumnDataSource.stream() imported pandas to test for a Series or DataFrame",
    ),
    Patch(
        "bokeh-cds-stream-lengths",
        "bokeh",
        "bokeh/models/sources.py",
        "            arr_types = (np.ndarray, pd.Series)\n",
        "            arr_types = (np.ndarray, pd.Series) if pd is not None else (np.ndarray,)\n",
        "stream()'s length check names pd.Series (pd is None without pandas: bokeh-cds-stream)",
    ),
    Patch(
        "bokeh-stream-event",
        "bokeh",
        "bokeh/document/events.py",
        "        import pandas as pd\n        if isinstance(data, pd.DataFrame):\n",
        "        import sys  # pyplay: no pandas unless in use\n"
        "        pd = sys.modules.get('pandas')\n"
        "        if pd is not None and isinstance(data, pd.DataFrame):\n",
        "ColumnsStreamedEvent imported pandas to test for a DataFrame",
    ),
    Patch(
        "bokeh-get-range",
        "bokeh",
        "bokeh/plotting/_plot.py",
        "    import pandas as pd\n"
        "    from pandas.core.groupby import GroupBy\n"
        "\n"
        "    if range_input is None:\n"
        "        return DataRange1d()\n"
        "    if isinstance(range_input, GroupBy):\n"
        "        return FactorRange(factors=sorted(list(range_input.groups.keys())))\n"
        "    if isinstance(range_input, Range):\n"
        "        return range_input\n"
        "    if isinstance(range_input, pd.Series):\n",
        "    import sys  # pyplay: no pandas unless in use\n"
        "\n"
        "    pd = sys.modules.get('pandas')\n"
        "    if range_input is None:\n"
        "        return DataRange1d()\n"
        "    if pd is not None and isinstance(range_input, pd.core.groupby.GroupBy):\n"
        "        return FactorRange(factors=sorted(list(range_input.groups.keys())))\n"
        "    if isinstance(range_input, Range):\n"
        "        return range_input\n"
        "    if pd is not None and isinstance(range_input, pd.Series):\n",
        "figure(x_range=...) imported pandas to test for a GroupBy or a Series",
    ),
    Patch(
        "bokeh-datetime-types",
        "bokeh",
        "bokeh/util/serialization.py",
        "@lru_cache(None)\ndef _compute_datetime_types() -> set[type]:\n    import pandas as pd\n",
        "def _compute_datetime_types() -> set[type]:  # pyplay: no pandas unless in use\n"
        "    import sys\n"
        "    if 'pandas' not in sys.modules:\n"
        "        return {dt.time, dt.datetime, np.datetime64}\n"
        "    return _compute_pandas_datetime_types()\n"
        "\n"
        "@lru_cache(None)\n"
        "def _compute_pandas_datetime_types() -> set[type]:\n"
        "    import pandas as pd\n",
        "is_datetime_type (every Datetime property's validation) imported pandas for its types",
    ),
    Patch(
        "bokeh-convert-datetime",
        "bokeh",
        "bokeh/util/serialization.py",
        "    import pandas as pd\n"
        "\n"
        "    # Pandas NaT\n"
        "    if obj is pd.NaT:\n"
        "        return np.nan\n"
        "\n"
        "    # Pandas Period\n"
        "    if isinstance(obj, pd.Period):\n"
        "        return obj.to_timestamp().value / 10**6.0\n"
        "\n"
        "    # Pandas Timestamp\n"
        "    if isinstance(obj, pd.Timestamp):\n"
        "        return obj.value / 10**6.0\n"
        "\n"
        "    # Pandas Timedelta\n"
        "    elif isinstance(obj, pd.Timedelta):\n",
        "    import sys  # pyplay: no pandas unless in use\n"
        "\n"
        "    pd = sys.modules.get('pandas')\n"
        "    # Pandas NaT\n"
        "    if pd is not None and obj is pd.NaT:\n"
        "        return np.nan\n"
        "\n"
        "    # Pandas Period\n"
        "    if pd is not None and isinstance(obj, pd.Period):\n"
        "        return obj.to_timestamp().value / 10**6.0\n"
        "\n"
        "    # Pandas Timestamp\n"
        "    if pd is not None and isinstance(obj, pd.Timestamp):\n"
        "        return obj.value / 10**6.0\n"
        "\n"
        "    # Pandas Timedelta\n"
        "    elif pd is not None and isinstance(obj, pd.Timedelta):\n",
        "serialising a date or time imported pandas to test for its NaT, Period and Timestamp",
    ),
    # the six below are not about pandas: Bokeh's three do once what the page's start did for
    # every class or every read (measured in Pyodide under Node: the module imports 1.36 ->
    # 1.17 s, the first lesson's build 2.0 -> 1.87 s); Panel's three import what the page
    # never uses only when it is used
    Patch(
        "bokeh-no-model-signatures",
        "bokeh",
        "bokeh/model/model.py",
        "            parameters = [x[0] for x in  cls.parameters()]\n"
        "            cls.__init__.__signature__ = Signature(parameters=parameters)\n",
        "            pass  # pyplay: no __signature__ (help() and IDEs only; the page asks none)\n",
        "every model class of bokeh.models computed the default of each of its properties at "
        "import, to build an __init__ signature for help() and IDEs",
    ),
    Patch(
        "bokeh-stable-defaults-once",
        "bokeh",
        "bokeh/core/property/descriptors.py",
        "        default = self.instance_default(obj)\n",
        "        # pyplay: an immutable default that no theme overrides is one value per class:\n"
        "        # copied, validated and prepared once per (class, property), not at every read\n"
        "        stable = _PYPLAY_STABLE_DEFAULTS if not is_themed else None\n"
        "        key = (obj.__class__, self.name)\n"
        "        if stable is not None and key in stable:\n"
        "            return stable[key]\n"
        "        default = self.instance_default(obj)\n"
        "        if (stable is not None and type(default) in (str, int, float, bool, type(None))\n"
        "                and not self.has_unstable_default(obj)):\n"
        "            stable[key] = default\n",
        "reading a property left at its default (every property of every model, when a document "
        "is serialised) copied, validated and prepared the class's default again",
    ),
    Patch(
        "bokeh-stable-defaults-table",
        "bokeh",
        "bokeh/core/property/descriptors.py",
        'T = TypeVar("T")\n',
        'T = TypeVar("T")\n'
        "_PYPLAY_STABLE_DEFAULTS: dict = {}  # pyplay: (class, property) -> its stable default\n",
        "the table of bokeh-stable-defaults-once",
    ),
    Patch(
        "panel-chat-and-templates-when-used",
        "panel",
        "panel/__init__.py",
        "from . import chat  # isort:skip noqa has to be after widgets\n",
        "def __getattr__(name):  # pyplay: pn.chat, pn.template, pn.Template imported when used\n"
        "    if name in ('chat', 'template'):\n"
        "        import importlib\n"
        "        return importlib.import_module(f'.{name}', __name__)\n"
        "    if name == 'Template':\n"
        "        from .template import Template\n"
        "        return Template\n"
        "    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')\n",
        "import panel imported its chat components and every page template, which the page "
        "never uses (with the two below: 0.05 s of the page's imports)",
    ),
    Patch(
        "panel-template-when-used",
        "panel",
        "panel/__init__.py",
        "from . import template  # noqa\n",
        "",
        "see panel-chat-and-templates-when-used",
    ),
    Patch(
        "panel-template-class-when-used",
        "panel",
        "panel/__init__.py",
        "from .template import Template  # noqa\n",
        "",
        "see panel-chat-and-templates-when-used",
    ),
    Patch(
        "bokeh-dataframe-property",
        "bokeh",
        "bokeh/core/property/data_frame.py",
        "        import pandas as pd\n        if isinstance(value, pd.DataFrame):\n",
        "        import sys  # pyplay: no pandas unless in use\n"
        "        pd = sys.modules.get('pandas')\n"
        "        if pd is not None and isinstance(value, pd.DataFrame):\n",
        "validating a property that accepts a DataFrame imported pandas",
    ),
    Patch(
        "bokeh-groupby-property",
        "bokeh",
        "bokeh/core/property/data_frame.py",
        "        from pandas.core.groupby import GroupBy\n        if isinstance(value, GroupBy):\n",
        "        import sys  # pyplay: no pandas unless in use\n"
        "        pd = sys.modules.get('pandas')\n"
        "        if pd is not None and isinstance(value, pd.core.groupby.GroupBy):\n",
        "validating a figure's range (RangeLike accepts a GroupBy) imported pandas",
    ),
)


# The pinned BokehJS (``bokeh.min.js``, served from ``./bokeh/``): a visual property read (a line's
# colour, a label's font, ...) first asks the CSS cascade for a ``--bk-*`` variable
# (``getComputedStyle(el).getPropertyValue``) and falls back to the model's value when there is
# none. No stylesheet of this site defines one (tests/project/test_site_patches.py checks pyplay's,
# Panel's and Bokeh's), so the answer is always "" and the model's value is drawn; but each
# read forces the browser to recompute styles: 7,800 reads, about a quarter of the 1.3-1.7 s
# that opening the Transformers tab took (bokeh#15286; bokeh#15205 caches them in later Bokeh).
ASSET_PATCHES: tuple[Patch, ...] = (
    Patch(
        "bokehjs-no-css-visuals",
        "bokehjs",
        "bokeh.min.js",
        "_get_css_value(t){return getComputedStyle(this.obj.el).getPropertyValue"
        "(`${this.css_prefix}${t}`)}",
        '_get_css_value(t){return""/* pyplay: this site defines no --bk-* variables */}',
        "every visual property read recomputed the page's styles to find no --bk-* variable",
    ),
    # the plots' font size, read for every axis and tick label a plot measures: asked of the
    # cascade once per task for all plots (the stylesheets do not change while BokehJS lays
    # out and paints), as bokeh#15205 caches the CSS reads above. It is exact here: the value
    # only turns "em" font sizes (and MathText, which the site does not use) into pixels, and
    # every plot of the site sizes its text in px or pt. One read per plot recomputed the
    # styles of a tab being shown once per plot: the reads took 514 ms of main-thread time
    # over eight tab switches, 262 ms once shared
    Patch(
        "bokehjs-font-size-once-per-task",
        "bokehjs",
        "bokeh.min.js",
        "get base_font_size(){const e=getComputedStyle(this.el).fontSize,",
        "get base_font_size(){const e=globalThis.__pyplay_font_size??(queueMicrotask((()=>{"
        "globalThis.__pyplay_font_size=void 0})),globalThis.__pyplay_font_size="
        "getComputedStyle(this.el).fontSize),",
        "every plot recomputed the page's styles for its font size at every label it measured",
    ),
    # every renderer of a plot (glyphs, axes, grids, legend) writes its position stylesheet at
    # every paint, the same text as before unless the plot was laid out again; a <style> whose
    # text is set is parsed again and marks the page's active stylesheets changed, so the next
    # canvas font set or size read recomputed the whole page's styles. While a lesson trained,
    # this was most of the main thread's time in long tasks (one trace of the soft and hard
    # attention lesson with a second browser busy: 4.3 s of style recalculation in 7.6 s of
    # long tasks, 2,255 stylesheets parsed in 24 s). Unchanged text is now left alone.
    Patch(
        "bokehjs-stylesheet-unchanged",
        "bokehjs",
        "bokeh.min.js",
        "_update(t){this.el.textContent=t}",
        "_update(t){this.el.textContent!==t&&(this.el.textContent=t)/* pyplay: unchanged */}",
        "every paint set each renderer's position stylesheet again, restyling the whole page",
    ),
)


def apply(text: str, patch: Patch) -> str:
    """``text`` with ``patch`` applied; :class:`PatchError` unless its ``old`` text occurs
    exactly once."""
    found = text.count(patch.old)
    if found != 1:
        raise PatchError(
            f"patch {patch.name!r}: its target text occurs {found} times in {patch.path} "
            f"(expected exactly once); the {patch.package} wheel is not the one it was written "
            "for: check the patch against the new source"
        )
    return text.replace(patch.old, patch.new)


def patches_for(package: str) -> tuple[Patch, ...]:
    """The patches of ``package``'s wheel, or of its files served as they are (``bokehjs``)."""
    return tuple(p for p in (*PATCHES, *ASSET_PATCHES) if p.package == package)
