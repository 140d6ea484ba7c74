"""The lessons of the playground, registered in one place: :data:`LESSONS`, in tab order.

Each lesson is a folder ``pyplay/ui/lessons/<key>/`` with its ``state.py`` (settings and
actions, no Panel), ``view.py`` (the page) and ``code.py`` (its "show as code" script); its
:class:`~pyplay.ui.lessons.spec.LessonSpec` below is all the rest of the page needs to know
(tabs, address, embedding, lesson files, saved work, export). Importing this module imports
no lesson: classes are named as strings and imported when first needed.
"""

from __future__ import annotations

from pyplay.ui.lectures import lecture, lecture_label
from pyplay.ui.lessons.experiment import Experiment
from pyplay.ui.lessons.spec import Embed, LessonSpec

__all__ = ["COURSE", "LESSONS", "SPECS", "Embed", "Experiment", "LessonSpec", "spec_of"]

_DYN = "pyplay.ui.lessons.dynamic"  # the dynamic lesson's sub-tabs that are lessons of their own
_DEEP = {"cell": "gru", "num_layers": 6, "hidden_size": 16}  # a deep stack on the adding problem

# fmt: off
LESSONS: tuple[LessonSpec, ...] = (
    LessonSpec(
        "rnn", "Recurrent networks", "state:LessonState", "view:RecurrentLesson",
        "task cell nonlinearity forget_gate peephole forget_bias hidden_size num_layers "
        "bidirectional residual feedforward_layers seq_len lr optimizer clip batch_size tbptt "
        "seed",
        exclude={"task": ("series",)},
        widgets=(Embed("gates", "Gates and states over time", "view:gates_widget"),
                 Embed("gradient", "Gradient through time", "view:gradient_widget")),
        about="RNN, LSTM, GRU: training, gates, gradients through time",
        experiments=(
            Experiment("LSTM, adding problem, T=10", {}, 300,
                       "the loss falls far below the dashed baseline: the LSTM finds the two "
                       "marked numbers and adds them", below=0.2, relative=True),
            Experiment("Plain RNN, adding problem, T=40", {"cell": "rnn", "seq_len": 40}, 300,
                       "the loss stays near the baseline: the gradient from the last step "
                       "vanishes before it reaches the marked numbers (see Gradient through "
                       "time)", above=0.8, relative=True),
            Experiment("Six GRU layers, plain", _DEEP, 150,
                       "the loss stays at the baseline: through six layers the gradient that "
                       "reaches the lowest ones fades (Every layer, under Gradient through "
                       "time)", above=0.8, relative=True),
            Experiment("Six GRU layers, residual", {**_DEEP, "residual": True}, 150,
                       "the same stack with residual connections (GNMT) learns the sum: the "
                       "loss falls below 0.1 x baseline (Compare, under Residual connections)",
                       below=0.1, relative=True),
        ),
    ),
    LessonSpec(
        "seq2seq", "Sequence to sequence", "state:Seq2SeqState", "view:Seq2SeqLesson",
        "task cell wiring score scale_by hidden_size num_layers bidirectional encoder share_rnn "
        "lr batch_size sampling reverse_source min_len max_len seed",
        exclude={"task": ("pairs",)},
        aliases={"task": {"reverse": "reversal", "copy": "copy_var", "sort": "sorting"}},
        source=True,
        widgets=(Embed("attention", "Attention heatmap", "view:attention_widget"),
                 Embed("beam", "Beam search, step by step", "view:beam_widget")),
        about="encoder-decoder with and without attention, attention heatmaps, stacked and "
        "bidirectional encoders with their states, Google's NMT (GNMT) with its residual "
        "stacks, one shared RNN against two, scheduled "
        "sampling, source reversal, beam search step by step, your own pairs",
        experiments=(
            Experiment("Reversal with attention", {"hidden_size": 24, "batch_size": 16}, 150,
                       "the loss falls below 0.8 and the attention heatmap turns into an "
                       "anti-diagonal: each output looks at its mirrored input", below=0.8),
            Experiment("Reversal without attention",
                       {"hidden_size": 24, "batch_size": 16, "wiring": "init"}, 150,
                       "the loss stays above 0.9: the whole source must squeeze through "
                       "one state", above=0.9),
        ),
    ),
    LessonSpec(
        "transformer", "Transformers", "state:TransformerLessonState", "view:TransformerLesson",
        "arch task pair_task d_model nhead num_layers positional causal seq_len lr seed "
        "compare_lstm value_function",
        aliases={"arch": {"encoder-decoder": "encoder_decoder", "seq2seq": "encoder_decoder"},
                 "pair_task": {"reverse": "reversal", "copy": "copy_var", "sort": "sorting"}},
        widgets=(Embed("heads", "Every attention head", "view:heads_widget"),),
        about="a tiny transformer beside an LSTM, every head's attention, the causal mask and "
        "positional encodings switched off to see what breaks, sampling with a KV cache; a "
        "transformer encoder-decoder beside the LSTM with attention on pairs, its encoder, "
        "masked decoder and cross-attention",
        experiments=(
            Experiment("Copy with positions",
                       {"num_layers": 1, "seq_len": 6, "compare_lstm": False}, 150,
                       "the loss falls below 0.1 x baseline; open the heads to see where "
                       "each one looks", below=0.1, relative=True),
            Experiment("Copy without positions",
                       {"num_layers": 1, "seq_len": 6, "compare_lstm": False,
                        "positional": "none"}, 150,
                       "the loss stays above 0.5 x baseline: without positions attention "
                       "cannot tell which step is which", above=0.5, relative=True),
            Experiment("Copy without a value function",
                       {"num_layers": 1, "seq_len": 6, "compare_lstm": False,
                        "value_function": "identity"}, 150,
                       "the loss still falls below 0.1 x baseline: each output is a weighted "
                       "sum of the inputs themselves (Solberg's first form), and copying "
                       "needs no more", below=0.1, relative=True),
            Experiment("Reversal, encoder-decoder",
                       {"arch": "encoder_decoder", "num_layers": 1, "seq_len": 6}, 200,
                       "the transformer's loss falls below 0.3 (the LSTM with attention beside "
                       "it gets there sooner); its cross-attention turns into a blurred "
                       "anti-diagonal: the first letter written looks at the last letter read",
                       below=0.3),
        ),
    ),
    LessonSpec(
        "ctc", "CTC", "state:CTCState", "view:CTCLesson",
        "cell hidden_size bidirectional delay noise compare beam_width lexicon lr seed",
        about="reading symbols out of unaligned frames: per-frame probabilities, best path, "
        "collapse, prefix and lexicon beam search",
        experiments=(
            Experiment("Bidirectional GRU", {}, 100,
                       "the loss falls below 0.15 x baseline and best path reads the "
                       "symbols out of the frames", below=0.15, relative=True),
            Experiment("One-way small RNN",
                       {"cell": "rnn", "bidirectional": False, "hidden_size": 16}, 100,
                       "the loss stays above 0.1 x baseline after as many steps: one "
                       "direction and a plain cell see less", above=0.1, relative=True),
        ),
    ),
    LessonSpec(
        "dynamic", "Dynamic networks", "state:LDDNLessonState", "view:DynamicLesson",
        "preset signal steps a0 system lr seed", exclude={"signal": ("typed",)},
        about=f"layered digital dynamic networks in the notation of {lecture('hagan')}: build "
        "one from a palette, its diagram and equations, run and train it; the "
        "vanishing gradient with lw on a slider; an LMS adaptive filter, the eigenvalues of "
        "LW¹˒¹ and memory, RTRL beside BPTT",
        experiments=(
            Experiment("Moving average imitates first order", {}, 200,
                       "the loss falls below 0.003: three taps approximate the decaying "
                       "response as well as they can, never exactly", below=0.003),
            Experiment("Feedback learns first order",
                       {"preset": "impulse response"}, 200,
                       "the loss falls below 0.005: with feedback, iw moves to 1/2 and the "
                       "network matches the system", below=0.005),
        ),
    ),
    LessonSpec(
        "textbook", "Textbook seq2seq", "state:TextbookSeq2SeqState", "view:TextbookSeq2SeqView",
        "form hidden_size D lr seed", parent="dynamic",
        about=f"the seq2seq network with attention of {lecture('hagan')} (eq. 6.5-6.18): "
        "dot, general or concatenation scores, the book's figures drawn from the model, "
        "decoding step by step, and the one-hot weights that give back the plain context",
    ),
    LessonSpec(
        "adaptive", "Adaptive filter", f"{_DYN}.adaptive_state:AdaptiveFilterState",
        f"{_DYN}.adaptive_view:AdaptiveFilterView", "lr n_taps seed", parent="dynamic",
        code=None, about="an LMS adaptive filter removing noise, its weights beside the Wiener "
        "solution",
    ),
    LessonSpec(
        "stability", "Stability and memory", f"{_DYN}.stability_state:StabilityState",
        f"{_DYN}.stability_view:StabilityView", "radius angle steps transfer", parent="dynamic",
        code=None, about="the eigenvalues of LW¹˒¹ decide whether a recurrent layer forgets, "
        "remembers or explodes, and how far back its gradient reaches",
    ),
    LessonSpec(
        "rtrl", "RTRL and BPTT", f"{_DYN}.rtrl_state:RTRLState", f"{_DYN}.rtrl_view:RTRLView",
        "hidden_size seq_len lr seed", parent="dynamic", code=None,
        about="real-time recurrent learning beside backpropagation through time: the same "
        "gradient, computed forward in time",
    ),
    LessonSpec(
        "lecture_rnn", f"LSTM and GRU ({lecture_label('nlp')})", f"{_DYN}.book_state:BookRNNState",
        f"{_DYN}.book_view:BookRNNView",
        "network hidden_size forget_gate peephole forget_bias signal steps system lr seed",
        parent="dynamic", code=None,
        about=f"the LSTM and GRU of {lecture('nlp')} as layered networks, gate by gate",
    ),
    LessonSpec(
        "timeseries", "Time series", "state:NARXState", "view:TimeSeriesLesson",
        "hidden_size input_delays feedback_delays lr seed",
        about="a NARX network trained in open loop, then closed for multi-step prediction, on "
        "a bundled plant or your own CSV",
        experiments=(
            Experiment("NARX on the Narendra plant", {}, 200,
                       "the open-loop loss falls below 0.03; then switch to Closed loop and "
                       "watch the multi-step prediction drift", below=0.03),
            Experiment("One neuron, one delay each",
                       {"hidden_size": 1, "input_delays": 1, "feedback_delays": 1}, 200,
                       "the loss still falls below 0.06: one step ahead is easy; closed loop "
                       "shows what the small net misses", below=0.06),
        ),
    ),
    LessonSpec(
        "memory", "Memory", "state:MemoryLessonState", "view:MemoryLesson",
        "model task addressing key_function update hard feedback attend_form read_heads "
        "write_heads memory_size n_pairs seq_len lr seed",
        about="a recurrent net with an external memory on associative recall and copy: where "
        "its heads read and write, by content or by location, soft or hard (one drawn cell), "
        "overwrite or residual writes, against an LSTM and an LSTM attending to its past",
        experiments=(
            Experiment("Memory net, 3 pairs", {"n_pairs": 3}, 300,
                       "the loss falls below 0.6 x baseline; watch where the heads read "
                       "and write", below=0.6, relative=True),
            Experiment("LSTM, 3 pairs", {"n_pairs": 3, "model": "lstm"}, 300,
                       "the loss falls below 0.6 x baseline too: with three pairs the LSTM "
                       "still keeps them in its state; try 12 pairs", below=0.6, relative=True),
        ),
    ),
    LessonSpec(
        "recursive", "Recursive networks", "state:RecursiveLessonState", "view:RecursiveLesson",
        "task max_depth hidden_size compare_chain lr seed", source=True,
        about="one composition over the nodes of a tree learns arithmetic and the sentiment of "
        "phrases, beside a chain LSTM reading the same text; type an expression, see its tree",
        experiments=(
            Experiment("Expressions, two levels deep", {"max_depth": 2}, 400,
                       "the recursive net's loss falls below 0.3 x baseline; the chain LSTM "
                       "reading the same text (dotted) stays far above it", below=0.3,
                       relative=True),
            Experiment("Sentiment of phrases", {"task": "sentiment", "compare_chain": False}, 300,
                       "the loss falls below 0.05 x baseline: every phrase right; type "
                       "((not (very good)) movie) and watch 'not' turn it around", below=0.05,
                       relative=True),
        ),
    ),
    LessonSpec(
        "glimpse", "Soft and hard attention", "state:GlimpseLessonState", "view:GlimpseLesson",
        "seq_len n_symbols hidden_size baseline lr seed",
        about="one glimpse at a marked symbol: soft attention (a weighted average) beside hard "
        "attention (one position drawn, trained with REINFORCE), and how much a baseline "
        "lowers the variance of the hard one's gradient",
        experiments=(
            Experiment("Hard attention with a baseline, T=20", {"seq_len": 20}, 200,
                       "the hard model's loss falls below 0.1 x baseline: its weights settle "
                       "on the marked position; the soft one (dotted) learns too", below=0.1,
                       relative=True),
            Experiment("Hard attention without a baseline, T=20",
                       {"seq_len": 20, "baseline": False}, 200,
                       "the hard model's loss stays above 0.8 x baseline after as many steps: "
                       "with b = 0 its gradient estimate varies far more (see the variance "
                       "plot) while the soft one learns as before", above=0.8, relative=True),
        ),
    ),
    LessonSpec(
        "images", "Image attention", "state:ImagesLessonState", "view:ImagesLesson",
        "task attention compare shapes hidden_size glimpses scales clutter lr seed",
        about="a captioner looking at a grid of image features for each word it writes, soft "
        "beside hard (REINFORCE with a baseline) on the same batches; a recurrent attention "
        "model taking a few small glimpses of a cluttered canvas, its path learned by a policy "
        "gradient, beside the same model with random glimpses",
        experiments=(
            Experiment("Soft attention beside hard", {}, 150,
                       "the soft captioner's loss falls below 0.5 x baseline and its maps "
                       "settle on the shape each word names; the hard one beside it (dotted), "
                       "learning from draws, is still near the baseline", below=0.5,
                       relative=True),
            Experiment("Hard attention alone", {"attention": "hard", "compare": False}, 300,
                       "the hard captioner's loss falls below 0.9 x baseline: learning where "
                       "to look only from the cells it drew (REINFORCE), it is far slower "
                       "than the soft one of the first experiment; its maps gather on a few "
                       "cells", below=0.9, relative=True),
            Experiment("Glimpses on cluttered digits", {"task": "cluttered", "compare": False},
                       600, "the loss falls below 0.9 x baseline (ln 10): the model learns to "
                       "read the digit from a few crops; watch where the glimpses go", below=0.9,
                       relative=True),
            Experiment("Learned glimpses against random ones",
                       {"task": "cluttered", "compare": True, "glimpses": 2}, 2000,
                       "after 2,000 steps the status line reads an accuracy of about 0.6-0.65 "
                       "for the learned glimpses and about 0.5 for the random ones (dotted); "
                       "the learned loss falls below 0.55 x baseline while the random one "
                       "stays near 0.6 x; about a quarter of the learned second glimpses land "
                       "on the digit (random ones: under a tenth)", below=0.55, relative=True),
        ),
    ),
    LessonSpec(
        "pointer", "Pointer networks", "state:PointerLessonState", "view:PointerLesson",
        "task cell hidden_size min_len max_len lr batch_size seed",
        about="an encoder-decoder whose outputs are positions of its input: sorting digits and "
        "the convex hull of points, its pointing weights as a heatmap",
        experiments=(
            Experiment("Sort 3-6 digits", {}, 300,
                       "the loss falls below 0.2 (pointing uniformly: 1.5) and greedy "
                       "decoding sorts most examples exactly", below=0.2),
            Experiment("Hull of 4-6 points", {"task": "hull", "max_len": 6, "min_len": 4}, 500,
                       "the loss falls below 0.8 (pointing uniformly: 1.8); the predicted "
                       "polygon starts to follow the true hull", below=0.8),
        ),
    ),
)
# fmt: on

# the lessons in the order of a course on recurrent networks and attention ("Start here");
# from the book's delays and feedback to LSTMs, alignment, attention, memory, transformers
# the course, from the simplest (a plain RNN) to the most advanced: the order of the tabs and of
# "Start here" (the page opens on the first)
COURSE: tuple[str, ...] = (
    "rnn", "timeseries", "dynamic", "ctc", "seq2seq", "pointer", "recursive", "memory",
    "glimpse", "images", "transformer",
)  # fmt: skip

SPECS: dict[str, LessonSpec] = {spec.key: spec for spec in LESSONS}


def spec_of(cls: type) -> LessonSpec:
    """The spec of the lesson whose state class is ``cls`` or one of its bases (a subclass,
    e.g. in a test, is the same lesson). KeyError when ``cls`` is no lesson's state."""
    for base in cls.__mro__:
        for spec in LESSONS:
            if spec.owns(base):
                return spec
    raise KeyError(f"{cls.__name__} is not the state of a registered lesson")
