"""Sampling from the character model, and bringing your own text or numbers."""

from __future__ import annotations

import panel as pn

from pyplay.ui.lessons.rnn.state import LessonState
from pyplay.ui.text import Text

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

    def generate(_: object) -> None:
        start = prompt.value or ""
        text = state.generate(start, int(length.value or 1), float(temperature.value or 0.0))
        if text is not None:
            output.object = start + text

    button.on_click(generate)
    return pn.Column(
        "## Sample from the character model",
        pn.pane.Markdown(help_text),
        pn.Row(prompt, temperature, length),
        button,
        output,
        sizing_mode="stretch_width",
    )


def data_panel(state: LessonState, help_text: str) -> pn.Column:
    """Paste or upload a text or a column of numbers; validated by the state."""
    text = pn.widgets.TextAreaInput(
        name="Your text",
        placeholder="Paste a text here...",
        height=120,
        sizing_mode="stretch_width",
    )
    text_file = pn.widgets.FileInput(accept=".txt,.md", name="Upload a text file")
    use_text = pn.widgets.Button(name="Use this text", width=150)
    numbers = pn.widgets.TextAreaInput(
        name="Your numbers",
        placeholder="One number per line",
        height=120,
        sizing_mode="stretch_width",
    )
    numbers_file = pn.widgets.FileInput(accept=".csv,.txt", name="Upload numbers")
    use_numbers = pn.widgets.Button(name="Use these numbers", width=150)

    def use_typed_text(_: object) -> None:
        state.set_user_text(text.value or "")

    def use_typed_numbers(_: object) -> None:
        state.set_user_numbers(numbers.value or "")

    use_text.on_click(use_typed_text)
    use_numbers.on_click(use_typed_numbers)
    text_file.param.watch(lambda e: e.new is not None and state.set_user_text(e.new), "value")
    numbers_file.param.watch(lambda e: e.new is not None and state.set_user_numbers(e.new), "value")
    return pn.Column(
        "## Your data",
        pn.pane.Markdown(help_text),
        pn.Row(
            pn.Column(text, pn.Row(use_text, text_file)),
            pn.Column(numbers, pn.Row(use_numbers, numbers_file)),
            sizing_mode="stretch_width",
        ),
        sizing_mode="stretch_width",
    )
