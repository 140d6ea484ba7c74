"""Inputs that say what they did with what was typed: :class:`NumberBox`, a number setting
typed as text, and :func:`paste_box`, a text box that says when a paste was cut at its limit.

Bokeh's number inputs read what is typed in the browser and drop what they cannot use (``nan``,
words, ``1e30`` past their range) without telling Python: the box quietly showed the old
number again. A :class:`NumberBox` is a plain text box instead, so every text typed reaches
Python. It is read with the page address's own grammar and range (:func:`~pyplay.ui.urlstate.
number_field`: the parameter's ``softbounds``, declared once on the parameter) and either set
on the parameter or refused. A refused text never reaches the parameter, so Reset, Load model
and every other control go on with the last good value; the box shows that value again and a
note under it says what was expected, what was given and what was kept, e.g. "Seed: expected
an integer from 0 to 4294967295; got -5. Kept 0.". The note is a
:class:`~pyplay.ui.text.Text` pane: what was typed is shown as text, never as HTML.

A text area cuts a paste at its ``max_length`` in the browser (Panel's default is 5,000
characters), and Python only receives what was kept. :func:`paste_box` takes a paste up to
the limit its caller gives (the lesson's file limit) and says so, under the box, when what
arrived fills it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import panel as pn
import param

from pyplay.ui.text import Text
from pyplay.ui.urlstate import number_field

__all__ = ["NumberBox", "cut_note", "paste_box", "shown_text"]

SHOWN_CHARS = 40  # what a note repeats of a refused text, at most


def shown_text(text: str) -> str:
    """What a note repeats of a typed ``text``: a number as typed (``-5``, ``1e30``,
    ``nan``), anything else quoted and cut to :data:`SHOWN_CHARS` characters."""
    stripped = text.strip()
    try:
        float(stripped)
        if len(stripped) <= SHOWN_CHARS and stripped.isascii():
            return stripped
    except ValueError:
        pass
    quoted = repr(text)
    return quoted if len(quoted) <= SHOWN_CHARS else quoted[: SHOWN_CHARS - 4] + "...'"


class NumberBox(pn.viewable.Viewer):
    """A text box for the number parameter ``p`` (of a lesson state) named ``label``, and
    the note under it of the last text it refused.

    Parameters
    ----------
    p : param.Number
        The parameter, as ``state.param.<name>`` (its owner is the state). A
        :class:`param.Integer` takes whole numbers; its range is ``p.get_soft_bounds()``.
    label : str
        The box's name (its label in the page, how tests and people find it).
    note_css : sequence of str
        CSS classes the note takes besides ``pyplay-number-note`` (``pyplay-local-note`` is
        the note of an action, e.g. under Generate, not of a box).

    Attributes
    ----------
    box : panel.widgets.TextInput
        What the learner types in; ``box.value`` is read on Enter or when the box is left.
    note : str
        Why the last text was refused ("" once a value was taken, or the parameter was set
        from elsewhere: a Try this setup, an address, a lesson file).
    """

    disabled = param.Boolean(default=False, doc="greys the box out")
    note = param.String(default="", doc="why the last text typed was refused")

    def __init__(self, p: param.Number, label: str, note_css: Sequence[str] = ()) -> None:
        super().__init__(name=label)
        self.owner, self.key, self.label = p.owner, str(p.name), label
        self.field = number_field(p)
        self.box = pn.widgets.TextInput(name=label, value=self.current())
        self.note_pane = Text(
            self.param.note,
            visible=pn.bind(bool, self.param.note),
            css_classes=["pyplay-number-note", *note_css],
            sizing_mode="stretch_width",
        )
        self._quiet = False
        self._layout = pn.Column(self.box, self.note_pane, margin=0)
        self.box.param.watch(self._typed, "value")
        self.owner.param.watch(self._followed, self.key)
        self.param.watch(lambda e: setattr(self.box, "disabled", e.new), "disabled")

    def __panel__(self) -> pn.Column:
        return self._layout

    def current(self) -> str:
        """The parameter's value as the box shows it (as the page address writes it)."""
        return self.field.format(getattr(self.owner, self.key))

    def _show(self) -> None:
        """Put the parameter's value in the box (and in what the browser holds typed)."""
        text = self.current()
        self._quiet = True
        try:
            self.box.param.update(value=text, value_input=text)
        finally:
            self._quiet = False

    def _typed(self, event: Any) -> None:
        if self._quiet:
            return
        text = str(event.new or "")
        try:
            value = self.field.parse(text)
        except ValueError as err:
            self._refuse(text, f"expected {err}")
            return
        try:
            if value != getattr(self.owner, self.key):
                setattr(self.owner, self.key, value)
        except (ValueError, TypeError) as err:  # the parameter's own bounds said no
            self._refuse(text, str(err))
            return
        self.note = ""
        self._show()  # as the address writes it: "1e-3" shows as 0.001

    def _refuse(self, text: str, why: str) -> None:
        """The box back to the last good value, and the note saying why. The box is put
        back once the event that brought the text is handled: Panel does not send the page
        a value set while it takes in that same value from the page (the box kept showing
        the refused text)."""
        self.note = f"{self.label}: {why}; got {shown_text(text)}. Kept {self.current()}."
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop (a script, a test): at once
            self._show()
            return
        loop.call_soon(self._show)

    def _followed(self, *_: Any) -> None:
        """The parameter changed (typed here, or set elsewhere): the box shows it."""
        self.note = ""
        self._show()


def cut_note(name: str, text: str, limit: int) -> str:
    """What :func:`paste_box` says under box ``name`` holding ``text``: that it kept only
    the first ``limit`` characters (when ``text`` fills the box; counted as the browser
    counts, in UTF-16 units), else ""."""
    if len(text.encode("utf-16-le")) // 2 < limit:
        return ""
    return (
        f"{name}: kept the first {limit:,} characters of what was pasted, the most this box "
        "holds; anything after them was left out."
    )


def paste_box(name: str, limit: int, **options: Any) -> tuple[pn.widgets.TextAreaInput, Text]:
    """A text area ``name`` that takes up to ``limit`` characters, and the note under it that
    says when a paste filled it (:func:`cut_note`); ``options`` go to the text area."""
    box = pn.widgets.TextAreaInput(name=name, max_length=limit, **options)
    note = Text("", visible=False, css_classes=["pyplay-cut-note"], sizing_mode="stretch_width")

    def check(*_: Any) -> None:
        said = cut_note(name, str(box.value_input or box.value or ""), limit)
        note.object, note.visible = said, bool(said)

    box.param.watch(check, ["value", "value_input"])
    return box, note
