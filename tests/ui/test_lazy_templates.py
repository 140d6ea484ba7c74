"""Jinja2 templates compiled when first used during the page's import (``web/site/boot.py``)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

jinja2 = pytest.importorskip("jinja2")

from pyplay.ui.lazy_templates import LazyTemplate, compiled_when_used  # noqa: E402

SOURCES = {
    "base.html": "<h1>{% block title %}{{ title }}{% endblock %}</h1>",
    "page.html": "{% extends 'base.html' %}{% block title %}Page: {{ title }}{% endblock %}",
    "broken.html": "{% if %}",
}


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the templates Jinja2 compiles, in order."""
    made: list[str] = []
    compile_ = jinja2.Environment.compile

    def counted(self: jinja2.Environment, source: str, name: str | None = None, *a, **k):
        made.append(str(name))
        return compile_(self, source, name, *a, **k)

    monkeypatch.setattr(jinja2.Environment, "compile", counted)
    return made


def _environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.DictLoader(SOURCES))


def test_a_template_is_compiled_when_first_used_and_renders_the_same(compiles):
    env = _environment()
    with compiled_when_used():
        page = env.get_template("page.html")
    assert isinstance(page, LazyTemplate)
    assert not page.compiled and compiles == []
    assert page.render(title="RNN") == "<h1>Page: RNN</h1>"
    assert page.compiled and compiles == ["page.html", "base.html"]
    assert page.render(title="LSTM") == _environment().get_template("page.html").render(
        title="LSTM"
    )
    assert compiles.count("page.html") == 2  # once lazily, once for the comparison: not again
    assert page.blocks.keys() == {"title"}  # any attribute is the template's
    assert "compiled" in repr(page)


def test_get_template_is_jinja2s_own_after_the_block_also_when_it_raises():
    own = jinja2.Environment.get_template
    with pytest.raises(RuntimeError, match="inside"), compiled_when_used():
        assert jinja2.Environment.get_template is not own
        raise RuntimeError("inside")
    assert jinja2.Environment.get_template is own
    assert isinstance(_environment().get_template("base.html"), jinja2.Template)


def test_a_template_object_passes_through_and_errors_come_at_first_use():
    env = _environment()
    made = env.get_template("base.html")
    with compiled_when_used():
        assert env.get_template(made) is made
        lazy = env.get_template("page.html")
        assert env.get_template(lazy) is lazy
        broken = env.get_template("broken.html")
        missing = env.get_template("missing.html")
    with pytest.raises(jinja2.TemplateSyntaxError):
        broken.render()
    with pytest.raises(jinja2.TemplateNotFound, match=r"missing\.html"):
        missing.render()


def test_panel_imported_inside_the_block_compiles_its_templates_only_when_used():
    """In a fresh interpreter, as the page's worker imports the app: Panel's module-level
    templates are not compiled by the import, and render as Jinja2's own when used."""
    script = textwrap.dedent(
        """
        import jinja2
        compiled = []
        compile_ = jinja2.Environment.compile
        def counted(self, source, name=None, *a, **k):
            compiled.append(name)
            return compile_(self, source, name, *a, **k)
        jinja2.Environment.compile = counted
        from pyplay.ui.lazy_templates import LazyTemplate, compiled_when_used
        with compiled_when_used():
            import panel.io.resources as resources
        assert compiled == [], compiled
        assert isinstance(resources.ERROR_TEMPLATE, LazyTemplate)
        lazy = resources.ERROR_TEMPLATE.render(error_type="E", error="e", title="t")
        own = resources._env.get_template("error.html").render(
            error_type="E", error="e", title="t")
        assert lazy == own and "<html" in lazy.lower(), lazy[:200]
        print("ok", len(compiled))
        """
    )
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("ok ")
