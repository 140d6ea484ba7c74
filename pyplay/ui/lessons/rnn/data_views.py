"""Sampling from the character model, and bringing your own text or numbers."""

from __future__ import annotations

from typing import Any

import panel as pn

from pyplay.tasks import NumberSeries
from pyplay.ui.inputs import paste_box
from pyplay.ui.lessons.rnn.state import MAX_UPLOAD_BYTES, LessonState
from pyplay.ui.text import Text
from pyplay.ui.training import local_note

__all__ = ["data_panel", "sampling_panel"]


def sampling_panel(state: LessonState, help_text: str) -> pn.Column:
    """Prompt, temperature and length; the generated text is shown as text (a
    :class:`~pyplay.ui.text.Text` pane), never as HTML."""
    prompt = pn.widgets.TextInput(name="Prompt", value="Alice ", width=300)
    temperature = pn.widgets.FloatSlider(
        name="Temperature", start=0.0, end=2.0, step=0.05, value=0.8, width=250
    )
    length = pn.widgets.IntSlider(name="Length", start=10, end=500, step=10, value=200, width=250)
    output = Text("", sizing_mode="stretch_width", name="generated text")
    button = pn.widgets.Button(name="Generate", button_type="primary", width=120)
    note, near = local_note(state)  # why it could not generate: under the button

    def generate(_: object) -> None:
        start = prompt.value or ""
        settings = (start, int(length.value or 1), float(temperature.value or 0.0))
        text = near(lambda: state.generate(*settings))
        if text is not None:
            output.object = start + text

    button.on_click(generate)
    return pn.Column(
        "## Sample from the character model",
        pn.pane.Markdown(help_text),
        pn.Row(prompt, temperature, length),
        button,
        note,
        output,
        sizing_mode="stretch_width",
    )


def _data_input(
    name: str, placeholder: str, accept: str, upload: str, button: str, use: Any
) -> pn.Column:
    """A text box, its "use" button and a file input; ``use(text or bytes)`` takes either.
    The box takes a paste up to the file limit (:data:`MAX_UPLOAD_BYTES` characters) and says
    under it when a paste filled it (:func:`~pyplay.ui.inputs.paste_box`)."""
    box, cut = paste_box(
        name, MAX_UPLOAD_BYTES, placeholder=placeholder, height=120, sizing_mode="stretch_width"
    )
    file = pn.widgets.FileInput(accept=accept, name=upload)
    use_box = pn.widgets.Button(name=button, width=150)
    use_box.on_click(lambda _: use(box.value or ""))
    file.param.watch(lambda e: e.new is not None and use(e.new), "value")
    return pn.Column(box, cut, pn.Row(use_box, file))


def data_panel(state: LessonState, help_text: str) -> pn.Column:
    """Paste or upload a text or a column of numbers; validated by the state."""
    text = _data_input(
        "Your text",
        "Paste a text here...",
        ".txt,.md",
        "Upload a text file",
        "Use this text",
        state.set_user_text,
    )
    numbers = _data_input(
        NumberSeries.title,
        "One number per line",
        ".csv,.txt",
        "Upload numbers",
        "Use these numbers",
        state.set_user_numbers,
    )
    return pn.Column(
        "## Your data",
        pn.pane.Markdown(help_text),
        pn.Row(text, numbers, sizing_mode="stretch_width"),
        sizing_mode="stretch_width",
    )
