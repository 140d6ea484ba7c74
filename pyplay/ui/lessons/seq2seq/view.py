"""The "Sequence to sequence" lesson: train an encoder-decoder, type a source, watch the decoder
attend.

Rendering only: actions call :class:`~pyplay.ui.lessons.seq2seq.state.Seq2SeqState`. Training
runs in a periodic callback (as in the recurrent lesson); a translation is revealed one output
step per tick, so the attention heatmap grows row by row as decoding advances.
"""

from __future__ import annotations

import asyncio
from typing import Any

import panel as pn

from pyplay.decode.pruning import Pruning
from pyplay.tasks.pairs import MAX_PAIR_CHARS, MAX_PAIRS, MAX_PAIRS_TEXT
from pyplay.ui.embed import widget_head
from pyplay.ui.embeddings_view import EmbeddingsView, pair_tables
from pyplay.ui.lectures import lecture
from pyplay.ui.lesson_view import LessonView
from pyplay.ui.lessons.seq2seq.beam_stepper import BEAM_MAX_LENGTH, BeamStepper
from pyplay.ui.lessons.seq2seq.by_length_view import LengthSection
from pyplay.ui.lessons.seq2seq.lexicon_view import LexiconExamples
from pyplay.ui.lessons.seq2seq.scores import SCALE_LABELS, formula_markdown
from pyplay.ui.lessons.seq2seq.search_space import PRUNING_HELP, search_space_text
from pyplay.ui.lessons.seq2seq.sentence_map_view import SentenceMapSection
from pyplay.ui.lessons.seq2seq.shared_view import SharedSection
from pyplay.ui.lessons.seq2seq.state import (
    ENCODER_LABELS,
    LENGTH_TASKS,
    PAIR_LABELS,
    WIRING_LABELS,
    Decoding,
    Seq2SeqState,
)
from pyplay.ui.lessons.seq2seq.states_view import StatesSection
from pyplay.ui.plots import (
    attention_figure,
    beam_tree_figure,
    update_attention,
    update_beam_tree,
)
from pyplay.ui.session import one_at_a_time
from pyplay.ui.text import Text
from pyplay.ui.training import int_sliders

__all__ = ["SCORES", "Seq2SeqLesson", "attention_widget", "beam_widget"]

SCORES = {  # the score selector's labels
    "general": "general",
    "dot": "dot",
    "scaled dot": "scaled_dot",
    "additive (concat)": "additive",
    "cosine (content)": "cosine",
    "location": "location",
}
HELP = {
    "decode": "Type a source and **Translate** (greedy decoding). Each heatmap row is one "
    "output step, each column one source position; bright cells are where the decoder looked. "
    "Hover a cell for the tokens and the weight.",
    "beam": "Beam search keeps the **beam width** best partial outputs at every step instead "
    "of only the best one (greedy, shown on top). **Start** with the source above, then "
    "**Step** expands every live hypothesis by every token and keeps the best; **Back** undoes "
    "a step; **Run** goes to the end. The list ranks the live, finished and pruned hypotheses "
    "(and why they were pruned); scores are log-probabilities divided by the length penalty "
    "((5 + length) / 6)^alpha, so alpha > 0 favours longer outputs. With **your pairs**, "
    "**Only words of your targets** constrains the search (and greedy) to a prefix tree of "
    "the words your targets use, as a recogniser with a dictionary does (below: the example "
    f"of {lecture('wand')}).",
    "pairs": "Paste or upload your own pairs, one per line: source, a tab, target (UTF-8, up to "
    f"{MAX_PAIRS:,} lines, {MAX_PAIR_CHARS} characters a side). They are read character by "
    "character.",
}


class Seq2SeqLesson(LessonView):
    """Builds the lesson's layout around a :class:`Seq2SeqState`."""

    state_class = Seq2SeqState

    def build(self) -> None:
        self._reveal: Any = None
        self.baseline.visible = False
        self.attn_fig, self.attn_source = attention_figure(name="seq2seq-attention")
        self.source_box = pn.widgets.TextInput(
            name="Source",
            value=self.state.example_source(),
            min_width=200,
            max_width=320,
            sizing_mode="stretch_width",  # 320 px, less in a narrow column
        )
        self.output = Text("", name="output", css_classes=["pyplay-output"])
        self.decoding: Decoding | None = None
        self.shown_rows = 0
        self.tree_fig, self.tree_nodes, self.tree_edges = beam_tree_figure()
        self.beam: BeamStepper | None = None
        self.beam_width = pn.widgets.IntSlider(name="Beam width", start=1, end=8, value=3)
        self.alpha = pn.widgets.FloatSlider(
            name="Length penalty alpha", start=0.0, end=2.0, step=0.1, value=0.0
        )
        self.per_node = pn.widgets.IntSlider(name="Per node (0: no limit)", start=0, end=8, value=0)
        self.threshold = pn.widgets.FloatSlider(
            name="Threshold below the best score (0: off)", start=0.0, end=10.0, step=0.5, value=0.0
        )
        self.search_space = pn.pane.Markdown("", css_classes=["pyplay-search-space"])
        self.beam_text = Text("", css_classes=["pyplay-beam"])

        self.embeddings = EmbeddingsView(lambda: pair_tables(self.state.model, self.state.task_obj))
        self.beam_lexicon = pn.widgets.Checkbox(name="Only words of your targets (lexicon)")
        self.lexicon = LexiconExamples()  # Wand's prefix tree and DOCK / DOG examples
        self.by_length = LengthSection(self)  # plain against attention by source length
        self.shared = SharedSection(self)  # separate against shared encoder-decoder RNNs
        one_at_a_time(self.session, self.by_length.session, self.shared.session)
        self.sentences = SentenceMapSection(self._map_inputs)  # the encoder's sentence vectors
        self.sentences.clear()
        self.states = StatesSection()  # every layer's and direction's states
        self.states.follow_model(self.state.model)
        self.show_search_space()
        self.state.param.watch(self._on_version, "version")

    # ------------------------------------------------------------------ training
    def _on_version(self, *_: Any) -> None:
        self.session.pause()
        self.reset_curve()
        self.attn_source.data = {"x": [], "y": [], "weight": [], "src": [], "out": []}
        self.decoding = None
        self.output.object = ""
        self.beam = None
        self.beam_text.object = ""
        update_beam_tree(self.tree_nodes, self.tree_edges, None)
        self.states.follow_model(self.state.model)
        self.states.update(None)
        self.sentences.clear()
        self.show_search_space()
        self.new_example()

    def _map_inputs(self) -> tuple[Any, Any, str, bool]:
        s = self.state
        return s.model, s.task_obj, self.source_text(), bool(s.reverse_source)

    def show_search_space(self) -> None:
        """M^T for the current task's target vocabulary (Wand's count of paths)."""
        task = self.state.task_obj
        if task is not None:
            self.search_space.object = search_space_text(len(task.tgt_vocab), BEAM_MAX_LENGTH)

    # ------------------------------------------------------------------ decoding
    def _decode(self) -> Decoding | None:
        """Decode the source in the box with the model as it is now and show the output and
        the states; None (nothing shown) when there is nothing to decode."""
        result = self.state.translate(self.source_text())
        if result is None:
            return None
        self.decoding = result
        self.output.object = f"Output: {result.text}"
        self.states.update(result)
        return result

    def translate(self, *_: Any) -> None:
        result = self._decode()
        if result is None:
            return
        if result.weights is None:
            self.attn_source.data = {"x": [], "y": [], "weight": [], "src": [], "out": []}
            self.state.notify("This wiring has no attention to show.", "info")
            return
        self.shown_rows = 0
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop (a script): all rows at once
            self.shown_rows = result.weights.shape[0] - 1
            self._reveal_row()
            return
        self._reveal = loop.create_task(self._reveal_rows(result))

    async def _reveal_rows(self, decoding: Decoding) -> None:
        """One more output step of the heatmap every 0.25 s, while ``decoding`` is shown (a
        task that ends by itself: never cancelled, which Pyodide reports as an error)."""
        assert decoding.weights is not None
        while self.decoding is decoding and self.shown_rows < decoding.weights.shape[0]:
            self._reveal_row()
            await asyncio.sleep(0.25)

    def _reveal_row(self) -> None:
        """One more output step of the heatmap."""
        d = self.decoding
        if d is None or d.weights is None:
            return
        self.shown_rows = min(self.shown_rows + 1, d.weights.shape[0])
        update_attention(
            self.attn_fig, self.attn_source, d.weights, d.source, d.output, self.shown_rows
        )

    def refresh(self, *_: Any) -> None:
        """The attention of the source in the box as the model decodes it now, every row at
        once (while training, and after it); the embeddings follow the model too."""
        self.embeddings.refresh()
        if self.state.model is None or not self.source_text().strip():
            return
        result = self._decode()
        if result is not None and result.weights is not None:
            self.shown_rows = result.weights.shape[0]
            update_attention(
                self.attn_fig, self.attn_source, result.weights, result.source, result.output
            )

    # ------------------------------------------------------------------ beam search
    def beam_start(self, *_: Any) -> None:
        box = self.source_box
        self.beam = self.state.start_beam(
            box.value_input or box.value or "",
            int(self.beam_width.value or 1),
            float(self.alpha.value or 0.0),
            bool(self.beam_lexicon.value),
            self.pruning(),
        )
        self._show_beam()

    def pruning(self) -> Pruning:
        """The limits chosen beside the width (0 on a slider: that limit off)."""
        per_node, threshold = int(self.per_node.value or 0), float(self.threshold.value or 0.0)
        return Pruning(per_node or None, threshold or None)

    def beam_move(self, how: str) -> None:
        if self.beam is None:
            self.beam_start()
        if self.beam is None:
            return
        {"step": self.beam.step, "back": self.beam.back, "run": self.beam.run}[how]()
        self._show_beam()

    def _beam_action(self, how: str) -> Any:
        if not how:
            return self.beam_start
        return lambda *_: self.beam_move(how)

    def _show_beam(self) -> None:
        if self.beam is None:
            return
        self.beam_text.object = self.beam.listing()
        update_beam_tree(self.tree_nodes, self.tree_edges, self.beam.tree())

    def use_pairs(self, text: str) -> None:
        self.state.set_user_pairs(text)

    def new_example(self, *_: Any) -> None:
        example = self.state.example_source()
        self.source_box.param.update(value=example, value_input=example)

    # ------------------------------------------------------------------ layout
    def controls(self) -> list[Any]:
        s = self.state
        widgets = [
            pn.widgets.Select.from_param(s.param.task, name="Task", options=PAIR_LABELS),
            pn.widgets.RadioButtonGroup.from_param(
                s.param.wiring, name="Wiring", options=WIRING_LABELS
            ),
            self.score_control(),
            pn.widgets.RadioButtonGroup.from_param(
                s.param.cell, name="Cell", options={"GRU": "gru", "LSTM": "lstm", "RNN": "rnn"}
            ),
            *int_sliders(s, hidden_size="Hidden size", num_layers="Layers"),
            pn.widgets.RadioButtonGroup.from_param(
                s.param.encoder, name="Encoder", options=ENCODER_LABELS
            ),
            pn.widgets.Checkbox.from_param(
                s.param.bidirectional,
                name="Bidirectional encoder",
                visible=pn.bind(_is_stacked, s.param.encoder),  # GNMT's: its bottom layer only
            ),
            pn.widgets.Checkbox.from_param(s.param.share_rnn, name="Share one RNN"),
            pn.widgets.FloatSlider.from_param(
                s.param.sampling, name="Scheduled sampling (0 = teacher forcing)", step=0.05
            ),
            pn.widgets.Checkbox.from_param(s.param.reverse_source, name="Reverse source"),
            *self.length_sliders(),
        ]
        return widgets

    def score_control(self) -> pn.Column:
        """The score selector with, beside it, the chosen score's formula in the notation of
        Schmidt's Table 1 (:mod:`~pyplay.ui.lessons.seq2seq.scores`) and, for the scaled dot
        product, the choice of its divisor, √d or √n_source; one control of the key four."""
        s = self.state
        select = pn.widgets.Select.from_param(s.param.score, name="Attention score", options=SCORES)
        scale = pn.widgets.RadioButtonGroup.from_param(
            s.param.scale_by,
            name="Scaled dot divides by",
            options=SCALE_LABELS,
            visible=pn.bind(_is_scaled_dot, s.param.score),
        )
        self.formula = pn.pane.Markdown(
            pn.bind(formula_markdown, s.param.score, s.param.scale_by),
            css_classes=["pyplay-score-formula"],
            sizing_mode="stretch_width",
        )
        return pn.Column(select, scale, self.formula, sizing_mode="stretch_width")

    def length_sliders(self) -> list[Any]:
        """The training lengths of reversal and copy (shown only for those tasks)."""
        shown = pn.bind(lambda task: task in LENGTH_TASKS, self.state.param.task)
        return [
            pn.widgets.IntSlider.from_param(
                self.state.param.min_len, name="Shortest source", visible=shown
            ),
            pn.widgets.IntSlider.from_param(
                self.state.param.max_len, name="Longest source", visible=shown
            ),
        ]

    def beam_buttons(self) -> pn.Row:
        """Beam: Start, Step, Back and Run."""
        buttons = []
        for label, how in (("Start", ""), ("Step", "step"), ("Back", "back"), ("Run", "run")):
            button = pn.widgets.Button(name=f"Beam: {label}", width=110)
            button.on_click(self._beam_action(how))
            buttons.append(button)
        return pn.Row(*buttons)

    def inside(self) -> list[Any]:
        """The workbench's view: a source, its decoding and the attention, live."""
        return [_decode_row(self), self.output, pn.pane.Bokeh(self.attn_fig)]

    def sections(self) -> list[Any]:
        s = self.state
        pairs_box = pn.widgets.TextAreaInput(  # room for all the pairs the help promises
            name="Your pairs (source<TAB>target per line)", height=100, max_width=400,
            sizing_mode="stretch_width",
            max_length=MAX_PAIRS_TEXT,
        )  # fmt: skip
        use_pairs = pn.widgets.Button(name="Use these pairs", width=140)
        use_pairs.on_click(lambda *_: self.use_pairs(pairs_box.value or ""))
        upload = pn.widgets.FileInput(accept=".tsv,.txt", width=250)
        upload.param.watch(lambda e: e.new is not None and s.set_user_pairs(e.new), "value")
        return [
            "## Decode and look at the attention",
            pn.pane.Markdown(HELP["decode"]),
            *self.states.panel(),
            *self.by_length.panel(),
            *self.shared.panel(),
            "## Beam search, step by step",
            self.search_space,
            pn.pane.Markdown(HELP["beam"]),
            pn.Row(self.beam_width, self.alpha),
            pn.pane.Markdown(PRUNING_HELP),
            pn.Row(self.per_node, self.threshold),
            self.beam_lexicon,
            self.beam_buttons(),
            self.beam_text,
            pn.pane.Bokeh(self.tree_fig, sizing_mode="stretch_width"),
            *self.lexicon.sections(),
            self.embeddings.panel,
            *self.sentences.panel(),
            "## Your pairs",
            pn.pane.Markdown(HELP["pairs"]),
            pairs_box,
            pn.Row(use_pairs, upload),
        ]


def _is_scaled_dot(score: str) -> bool:
    return score == "scaled_dot"


def _is_stacked(encoder: str) -> bool:
    return encoder == "stack"


# ------------------------------------------------------------------ embedded parts
def _decode_row(view: Any) -> pn.Row:
    translate = pn.widgets.Button(name="Translate", button_type="primary", width=100)
    translate.on_click(view.translate)
    example = pn.widgets.Button(name="New example", width=120)
    example.on_click(view.new_example)
    return pn.Row(view.source_box, translate, example)


def attention_widget(view: Any) -> pn.viewable.Viewable:
    return pn.Column(
        *widget_head(view),
        _decode_row(view),
        view.output,
        pn.pane.Bokeh(view.attn_fig),
        sizing_mode="stretch_width",
    )


def beam_widget(view: Any) -> pn.viewable.Viewable:
    return pn.Column(
        *widget_head(view),
        _decode_row(view),
        pn.Row(view.beam_width, view.alpha),
        view.beam_buttons(),
        view.beam_text,
        pn.pane.Bokeh(view.tree_fig, sizing_mode="stretch_width"),
        sizing_mode="stretch_width",
    )
