"""The beam search in a prefix tree of Wand's lecture, and DOCK BUYS MAN against DOG BITES MAN: two
sections of the "Sequence to sequence" lesson (rendering only; the searches are
:mod:`pyplay.ui.lessons.seq2seq.prefix_tree` and :mod:`pyplay.decode.lecture_examples`).

Neither needs the trained model: the decoder's softmax outputs are the slide's numbers (and
the page's completion of them, said beside the view), so the learner can check every product
by hand.
"""

from __future__ import annotations

from typing import Any

import panel as pn
from bokeh.models import CategoricalColorMapper, ColumnDataSource, HoverTool, Range1d
from bokeh.plotting import figure

from pyplay.decode.lecture_examples import PHONE_FRAMES
from pyplay.ui.lectures import lecture, lecture_label
from pyplay.ui.lessons.seq2seq.prefix_tree import (
    NODE_COLOURS,
    NODE_STATES,
    PrefixTreeStepper,
    phone_table_markdown,
    sentence_listing,
    sentence_table_markdown,
    tree_words_text,
)
from pyplay.ui.lessons.seq2seq.word_history_view import WordHistorySection
from pyplay.ui.plot_tree import key_legend, node_labels, tree_frame
from pyplay.ui.text import Text

__all__ = ["LexiconExamples", "prefix_tree_figure"]

HELP = {
    "tree": f"The speech example of {lecture('wand')}: the words are phone sequences in a "
    "**prefix tree** "
    "(green rings: word ends, the slide's green nodes). The search starts at the root with "
    "probability 1.0; every **Step** is one frame of the decoder's softmax: each hypothesis "
    "moves to the successor nodes and its probability is multiplied by that phone's "
    "probability given its history, so every node holds the accumulated probability of its "
    "prefix (frame 1: A 0.4, AE 0.06, B 0.34; frame 2: A R 0.2 x 0.4 = 0.08, ...). A "
    "hypothesis in a word end may move to itself once with the probability of EOS; then it "
    "is finished. When the frames are exhausted the result is the best hypothesis of all "
    "final nodes. The **beam width** keeps only that many hypotheses per frame.",
    "given": "**What the slide gives:** the words ARE, ART, ARTIST, ANT, AN, AND; frame 1's "
    "A 0.4, AE 0.06, B 0.34; frame 2's R 0.2 and N 0.4 after A, N 0.5 after AE. **What the "
    "page chose** (the smallest completion): AE N and B end words (a leaf of a prefix tree "
    "always does), the rest of each row goes to phones outside the tree ('any other', which "
    "the tree never lets in), and frames 3 and 4 with EOS after the word ends, so that words "
    f"can finish within {PHONE_FRAMES} frames (ARTIST cannot). Every number in the tree is "
    "computed by pyplay's lexicon-constrained beam search from this table:",
    "greedy": f"A warning of {lecture('wand')}: a recogniser may settle on **DOCK BUYS MAN** "
    "although "
    "only the end of the phrase shows that **DOG BITES MAN** was much more probable; beam "
    "search may miss the optimum when the beam is too narrow. The numbers here are the "
    "page's own (the slide gives none): DOCK sounds likelier than DOG and BUYS likelier "
    "after DOCK, but MAN fits DOG BITES far better. Greedy decoding (beam width 1) keeps "
    "only DOCK BUYS; a beam of width 2 keeps DOG BITES too and finds the better sentence.",
}


def prefix_tree_figure(rows: int) -> tuple[figure, ColumnDataSource, ColumnDataSource]:
    """The tree figure (``rows`` leaves, one row each), its node source (columns of
    :meth:`~pyplay.ui.lessons.seq2seq.prefix_tree.PrefixTreeStepper.figure_data`) and its edge
    source."""
    columns = ("x", "y", "phone", "value", "ended", "node", "state", "final")
    nodes = ColumnDataSource({k: [] for k in columns}, name="prefix-tree-nodes")
    fig, edges = tree_frame(
        "#999999", 1, height=460, title="Prefix tree: accumulated probabilities",
        x_axis_label="frame (depth in the tree)", tools="pan,wheel_zoom,reset,save",
        name="prefix-tree",
    )  # fmt: skip
    fill = CategoricalColorMapper(factors=list(NODE_STATES), palette=list(NODE_COLOURS))
    ring = CategoricalColorMapper(factors=["word end", "prefix"], palette=["#1e8449", "#555555"])
    dots = fig.scatter(
        "x", "y", source=nodes, size=16, line_width={"value": 3},
        fill_color={"field": "state", "transform": fill},
        line_color={"field": "final", "transform": ring},
    )  # fmt: skip
    for field, dy, size, style in (
        ("phone", 9, "9pt", "bold"),
        ("value", -21, "8pt", "normal"),
        ("ended", -35, "8pt", "italic"),
    ):
        node_labels(
            fig, nodes, field, x_offset=11, y_offset=dy, text_font_size=size,
            text_font_style=style, text_color="#222222",
        )  # fmt: skip
    key_legend(
        fig,
        [
            *((state, {"size": 10, "color": colour, "line_color": "#555555"})
              for state, colour in zip(NODE_STATES, NODE_COLOURS, strict=True)),
            ("word end", {"size": 10, "fill_color": "#ffffff", "line_color": "#1e8449",
                          "line_width": 3}),
        ],
    )  # fmt: skip
    fig.add_tools(
        HoverTool(
            renderers=[dots], tooltips=[("node", "@node"), ("p", "@value @ended"), ("", "@state")]
        )
    )
    fig.x_range.range_padding = 0.2
    fig.y_range = Range1d(rows - 0.4, -0.8)  # flipped: the first row on top, room for labels
    fig.yaxis.visible = False
    fig.ygrid.visible = False
    return fig, nodes, edges


class LexiconExamples:
    """The two sections' widgets and their actions."""

    def __init__(self) -> None:
        self.stepper = PrefixTreeStepper()
        self.fig, self.nodes, self.edges = prefix_tree_figure(self.stepper.rows)
        self.tree_width = pn.widgets.IntSlider(  # as wide as its column, up to 300 px (a phone)
            name="Tree beam width", start=1, end=8, value=self.stepper.search.beam_width,
            sizing_mode="stretch_width", max_width=300,
        )  # fmt: skip
        self.tree_width.param.watch(lambda e: self.tree_move("reset"), "value")
        self.tree_text = Text("", css_classes=["pyplay-prefix-tree"])
        self.sentence_width = pn.widgets.IntSlider(
            name="Sentence beam width", start=1, end=4, value=1
        )
        self.sentence_width.param.watch(lambda e: self.show_sentences(), "value")
        self.sentence_text = Text("", css_classes=["pyplay-dock-dog"])
        self.histories = WordHistorySection()
        self.show_tree()
        self.show_sentences()

    def tree_move(self, how: str) -> None:
        """Step, Back, Run or Reset (Reset reads the width slider)."""
        s = self.stepper
        if how == "reset":
            s.reset(int(self.tree_width.value or 1))
        else:
            {"step": s.step, "back": s.back, "run": s.run}[how]()
        self.show_tree()

    def show_tree(self) -> None:
        nodes, edges = self.stepper.figure_data()
        self.nodes.data = nodes
        self.edges.data = edges
        self.tree_text.object = self.stepper.listing()

    def show_sentences(self) -> None:
        self.sentence_text.object = sentence_listing(int(self.sentence_width.value or 1))

    def tree_buttons(self) -> pn.Row:
        buttons = []
        for label in ("Step", "Back", "Run", "Reset"):
            button = pn.widgets.Button(name=f"Tree: {label}", width=110)
            button.on_click(self._tree_action(label.lower()))
            buttons.append(button)
        return pn.Row(*buttons)

    def _tree_action(self, how: str) -> Any:
        return lambda *_: self.tree_move(how)

    def sections(self) -> list[Any]:
        return [
            f"## Beam search in a prefix tree ({lecture_label('wand')}'s example)",
            pn.pane.Markdown(HELP["tree"]),
            self.tree_width,
            self.tree_buttons(),
            pn.pane.Bokeh(self.fig, sizing_mode="stretch_width"),
            self.tree_text,
            pn.pane.Markdown(f"{HELP['given']} {tree_words_text()}."),
            pn.pane.Markdown(phone_table_markdown(), css_classes=["pyplay-given"]),
            "## Greedy versus beam: DOCK BUYS MAN or DOG BITES MAN",
            pn.pane.Markdown(HELP["greedy"]),
            self.sentence_width,
            self.sentence_text,
            pn.pane.Markdown(sentence_table_markdown(), css_classes=["pyplay-given"]),
            *self.histories.sections(),
        ]
