"""The playground: every lesson in one page, with navigation between them.

``create_app()`` returns a servable Panel object. In the browser the static site's worker
calls it (see ``web/worker.js``); natively ``panel serve pyplay/ui/app.py`` shows the same app.
"""

from __future__ import annotations

import panel as pn

from pyplay.ui.lesson_ctc import CTCLesson
from pyplay.ui.lesson_dynamic import DynamicLesson
from pyplay.ui.lesson_rnn import RecurrentLesson
from pyplay.ui.lesson_seq2seq import Seq2SeqLesson
from pyplay.ui.lesson_timeseries import TimeSeriesLesson
from pyplay.ui.lesson_transformer import TransformerLesson

__all__ = ["create_app"]

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
then closed for multi-step prediction, on a bundled plant or your own CSV).
"""


def create_app() -> pn.viewable.Viewable:
    """The whole playground: a header and one tab per lesson."""
    pn.extension(notifications=False)
    lessons = pn.Tabs(
        ("Recurrent networks", RecurrentLesson().panel()),
        ("Sequence to sequence", Seq2SeqLesson().panel()),
        ("Transformers", TransformerLesson().panel()),
        ("CTC", CTCLesson().panel()),
        ("Dynamic networks", DynamicLesson().panel()),
        ("Time series", TimeSeriesLesson().panel()),
        ("About", pn.pane.Markdown(ABOUT)),
        dynamic=False,
        sizing_mode="stretch_width",
    )
    header = pn.pane.Markdown("# pyplay: sequence models, live", sizing_mode="stretch_width")
    return pn.Column(header, lessons, sizing_mode="stretch_width")


if __name__.startswith("bokeh"):
    create_app().servable(title="pyplay")
