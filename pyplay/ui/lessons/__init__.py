"""The lessons of the playground, registered in one place: :data:`LESSONS`, in tab order.

Each lesson is a folder ``pyplay/ui/lessons/<key>/`` with its ``state.py`` (settings and
actions, no Panel), ``view.py`` (the page) and ``code.py`` (its "show as code" script); its
:class:`~pyplay.ui.lessons.spec.LessonSpec` below is all the rest of the page needs to know
(tabs, address, embedding, lesson files, saved work, export). Importing this module imports
no lesson: classes are named as strings and imported when first needed.
"""

from __future__ import annotations

from pyplay.ui.lessons.spec import Embed, LessonSpec

__all__ = ["LESSONS", "SPECS", "Embed", "LessonSpec", "spec_of"]

# fmt: off
LESSONS: tuple[LessonSpec, ...] = (
    LessonSpec(
        "rnn", "Recurrent networks", "state:LessonState", "view:RecurrentLesson",
        "task cell nonlinearity hidden_size num_layers seq_len lr optimizer clip batch_size seed",
        exclude={"task": ("series",)},
        widgets=(Embed("gates", "Gates and states over time", "view:gates_widget"),
                 Embed("gradient", "Gradient through time", "view:gradient_widget")),
        about="RNN, LSTM, GRU: training, gates, gradients through time",
    ),
    LessonSpec(
        "seq2seq", "Sequence to sequence", "state:Seq2SeqState", "view:Seq2SeqLesson",
        "task cell wiring score hidden_size lr batch_size sampling reverse_source seed",
        exclude={"task": ("pairs",)},
        aliases={"task": {"reverse": "reversal", "copy": "copy_var", "sort": "sorting"}},
        source=True,
        widgets=(Embed("attention", "Attention heatmap", "view:attention_widget"),
                 Embed("beam", "Beam search, step by step", "view:beam_widget")),
        about="encoder-decoder with and without attention, attention heatmaps, scheduled "
        "sampling, source reversal, beam search step by step, your own pairs",
    ),
    LessonSpec(
        "transformer", "Transformers", "state:TransformerLessonState", "view:TransformerLesson",
        "task d_model nhead num_layers positional causal seq_len lr seed compare_lstm",
        widgets=(Embed("heads", "Every attention head", "view:heads_widget"),),
        about="a tiny transformer beside an LSTM, every head's attention, the causal mask and "
        "positional encodings switched off to see what breaks, sampling with a KV cache",
    ),
    LessonSpec(
        "ctc", "CTC", "state:CTCState", "view:CTCLesson",
        "cell hidden_size bidirectional noise lr seed",
        about="reading symbols out of unaligned frames: per-frame probabilities, best path, "
        "collapse",
    ),
    LessonSpec(
        "dynamic", "Dynamic networks", "state:LDDNLessonState", "view:DynamicLesson",
        "preset signal steps system lr seed", exclude={"signal": ("typed",)},
        about="layered digital dynamic networks in the notation of Hagan's *Neural Network "
        "Design*: build one from a palette, its diagram and equations, run and train it; the "
        "vanishing gradient with lw on a slider",
    ),
    LessonSpec(
        "textbook", "Textbook seq2seq", "state:TextbookSeq2SeqState", "view:TextbookSeq2SeqView",
        "form hidden_size lr seed", parent="dynamic",
    ),
    LessonSpec(
        "timeseries", "Time series", "state:NARXState", "view:TimeSeriesLesson",
        "hidden_size input_delays feedback_delays lr seed",
        about="a NARX network trained in open loop, then closed for multi-step prediction, on "
        "a bundled plant or your own CSV",
    ),
    LessonSpec(
        "memory", "Memory", "state:MemoryLessonState", "view:MemoryLesson",
        "model update read_heads write_heads memory_size n_pairs lr seed",
        about="a recurrent net with an external memory on associative recall: where its heads "
        "read and write, overwrite or residual writes, against an LSTM and an LSTM attending "
        "to its past",
    ),
    LessonSpec(
        "recursive", "Recursive networks", "state:RecursiveLessonState", "view:RecursiveLesson",
        "task max_depth hidden_size compare_chain lr seed", source=True,
        about="one composition over the nodes of a tree learns arithmetic and the sentiment of "
        "phrases, beside a chain LSTM reading the same text; type an expression, see its tree",
    ),
)
# fmt: on

SPECS: dict[str, LessonSpec] = {spec.key: spec for spec in LESSONS}


def spec_of(cls: type) -> LessonSpec:
    """The spec of the lesson whose state class is ``cls`` or one of its bases (a subclass,
    e.g. in a test, is the same lesson). KeyError when ``cls`` is no lesson's state."""
    for base in cls.__mro__:
        for spec in LESSONS:
            if spec.owns(base):
                return spec
    raise KeyError(f"{cls.__name__} is not the state of a registered lesson")
