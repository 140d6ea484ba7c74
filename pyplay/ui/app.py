"""The playground: every lesson in one page, with navigation between them.

``create_app()`` returns a servable Panel object. In the browser the static site's worker
calls it (see ``web/worker.js``); natively ``panel serve pyplay/ui/app.py`` shows the same app.

Only the first lesson is built for the first render; each other lesson is imported and built
the first time its tab is opened, so the page becomes interactive sooner (the start-up target
of the playground) and lessons nobody opens cost nothing. The open lesson's settings follow
the page address (:mod:`pyplay.ui.location`): copying it reproduces the setup.
"""

from __future__ import annotations

import importlib
from typing import Any

import panel as pn

from pyplay.ui.location import bind_location

__all__ = ["LESSONS", "Playground", "create_app"]

# tab title -> (module, class) of the lesson view; a fixed table, never user input
LESSONS: dict[str, tuple[str, str]] = {
    "Recurrent networks": ("pyplay.ui.lesson_rnn", "RecurrentLesson"),
    "Sequence to sequence": ("pyplay.ui.lesson_seq2seq", "Seq2SeqLesson"),
    "Transformers": ("pyplay.ui.lesson_transformer", "TransformerLesson"),
    "CTC": ("pyplay.ui.lesson_ctc", "CTCLesson"),
    "Dynamic networks": ("pyplay.ui.lesson_dynamic", "DynamicLesson"),
    "Time series": ("pyplay.ui.lesson_timeseries", "TimeSeriesLesson"),
    "Memory": ("pyplay.ui.lesson_memory", "MemoryLesson"),
}

ABOUT = """
**pyplay** trains small sequence models right here, in your browser: the Python runs on this
page (Pyodide), nothing is sent to a server. The same NumPy code is a Python library
(`pip install pyplay`), with hand-written backward passes checked against PyTorch.

Lessons: **Recurrent networks** (RNN, LSTM, GRU: training, gates, gradients through time);
**Sequence to sequence** (encoder-decoder with and without attention, attention heatmaps,
scheduled sampling, source reversal, beam search step by step, your own pairs);
**Transformers** (a tiny transformer beside an LSTM, every head's attention, the causal mask
and positional encodings switched off to see what breaks, sampling with a KV cache); **CTC**
(reading symbols out of unaligned frames: per-frame probabilities, best path, collapse);
**Dynamic networks** (layered digital dynamic networks in the notation of Hagan's *Neural
Network Design*: build one from a palette, its diagram and equations, run and train it; the
vanishing gradient with lw on a slider); **Time series** (a NARX network trained in open loop,
then closed for multi-step prediction, on a bundled plant or your own CSV); **Memory** (a
recurrent net with an external memory on associative recall: where its heads read and write,
overwrite or residual writes, against an LSTM and an LSTM attending to its past).
"""


class Playground:
    """The tabs of the playground; ``lessons`` maps a tab title to its lesson once built."""

    def __init__(self) -> None:
        self.lessons: dict[str, Any] = {}
        self.slots = {
            title: pn.Column(sizing_mode="stretch_width", css_classes=["pyplay-lesson"])
            for title in LESSONS
        }
        self.tabs = pn.Tabs(
            *self.slots.items(),
            ("About", pn.pane.Markdown(ABOUT)),
            dynamic=False,
            sizing_mode="stretch_width",
        )
        self.tabs.param.watch(lambda event: self.open(event.new), "active")
        self.open(0)

    def open(self, index: int) -> Any:
        """Build the lesson of tab ``index`` if it is not built yet; returns it (None for a
        tab without a lesson)."""
        titles = list(LESSONS)
        if not 0 <= index < len(titles):
            return None
        title = titles[index]
        if title not in self.lessons:
            module, name = LESSONS[title]
            lesson = getattr(importlib.import_module(module), name)()
            self.lessons[title] = lesson
            self.slots[title].objects = [lesson.panel()]
        return self.lessons[title]


def create_app() -> pn.viewable.Viewable:
    """The whole playground: a header and one tab per lesson (built when first opened)."""
    pn.extension(notifications=False)
    playground = Playground()
    bind_location(playground.tabs, playground.open)  # the settings in the page address
    header = pn.pane.Markdown("# pyplay: sequence models, live", sizing_mode="stretch_width")
    from pyplay.ui.saved_work import attach_saved_work

    saved = attach_saved_work(playground)  # autosave, the restore offer, the "Saved work" tab
    return pn.Column(header, saved.top, playground.tabs, sizing_mode="stretch_width")


if __name__.startswith("bokeh"):
    create_app().servable(title="pyplay")
