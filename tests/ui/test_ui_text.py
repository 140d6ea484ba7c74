"""Text stays text: every pane that shows what a learner typed, a model produced or a file
named escapes it (Panel 1.7's own Str pane passes HTML through)."""

from __future__ import annotations

import html

import panel as pn
import param

from paths import ROOT
from pyplay.ui.lessons.rnn.data_views import sampling_panel
from pyplay.ui.lessons.rnn.state import LessonState
from pyplay.ui.text import Text

ATTACK = "<img src=x onerror=alert(1)>"


def _shown(pane: pn.pane.Str) -> str:
    """The HTML the page receives for ``pane`` (unescaped once, as the browser does)."""
    return html.unescape(pane.get_root().text)


def test_text_escapes_plain_and_bound_values():
    class S(param.Parameterized):
        line = param.String(ATTACK)

    s = S()
    pane = Text(s.param.line)
    root = pane.get_root()
    assert html.unescape(root.text) == "<pre>&lt;img src=x onerror=alert(1)&gt;</pre>"
    s.line = "a & <b>b</b>"
    assert html.unescape(root.text) == "<pre>a &amp; &lt;b&gt;b&lt;/b&gt;</pre>"
    assert _shown(Text("")) == "<pre> </pre>"
    assert "<b>" in _shown(pn.pane.Str("<b>x</b>"))  # why Text exists


def test_a_generated_sample_with_a_typed_prompt_is_text():
    state = LessonState(hidden_size=8, seed=0)
    assert state.set_user_text(("A page: " + ATTACK + " and more text. ") * 40)
    panel = sampling_panel(state, "help")
    prompt = panel.select(pn.widgets.TextInput)[0]
    output = next(p for p in panel.select(pn.pane.Str) if p.name == "generated text")
    prompt.value = ATTACK
    panel.select(pn.widgets.Button)[0].clicks += 1
    assert output.object.startswith(ATTACK)  # the prompt and what the model went on with
    shown = _shown(output)
    assert "<img" not in shown and "&lt;img src=x onerror=alert(1)&gt;" in shown


def test_no_lesson_uses_the_raw_str_pane():
    ui = ROOT / "pyplay" / "ui"
    offenders = [
        p.name for p in ui.glob("*.py") if p.name != "text.py" and "pn.pane.Str(" in p.read_text()
    ]
    assert offenders == []
