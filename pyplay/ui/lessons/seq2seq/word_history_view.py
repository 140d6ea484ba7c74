"""Word histories through the prefix tree with a language model: a section of the "Sequence to
sequence" lesson, below Wand's prefix-tree example. The search is
:func:`~pyplay.decode.word_histories.history_search`; this module lists, frame by frame, every
node of the tree that holds hypotheses and the word histories it holds, and the result, for
the count per node the learner picks.
"""

from __future__ import annotations

import math
from typing import Any

import panel as pn

from pyplay.decode.beam import Hypothesis
from pyplay.decode.word_histories import (
    EOS,
    FRAMES,
    LM,
    OTHER,
    SEP,
    SYMBOLS,
    history_search,
    words_of,
)
from pyplay.ui.lectures import lecture
from pyplay.ui.lessons.seq2seq.prefix_tree import number
from pyplay.ui.text import Text

__all__ = ["WordHistorySection", "frames_markdown", "history_listing"]

BEAM_WIDTH = 4  # wide enough for every hypothesis the frames allow: only the count per node prunes
PER_NODE = {"no limit": 0, "2 per node": 2, "1 per node": 1}

HELP = (
    f"{lecture('wand')} skips a detail: to recognise a sequence of words, a hypothesis that "
    "reaches a word end goes back to the start node of the tree, a language model's "
    "probability of the word given the words before is multiplied in, and a node then holds "
    "**several hypotheses with different word histories**. Here the words DOG, DOCK, BITES, "
    "BUYS and MAN are spelled letter by letter (the slide gives no numbers; every number is "
    "the page's own): the frames favour DOCK BUYS (0.5 against 0.4 on six frames), the "
    "language model favours MAN after DOG BITES (0.9) over MAN after DOCK BUYS (0.1). "
    "␣ is the word end. With **no limit** or **2 per node**, the start node after frame 10 "
    "holds both histories and MAN decides: DOG BITES MAN. With **1 per node** it keeps only "
    "the likelier so far, DOCK BUYS, and the search ends with the worse sentence."
)


def _node(h: Hypothesis) -> tuple[str, str]:
    """(node, word history) of a live hypothesis: the letters since the last word end
    ("start" when none) and the words before them."""
    symbols = [SYMBOLS[k] for k in h.tokens]
    cut = len(symbols) - symbols[::-1].index(SEP) if SEP in symbols else 0
    node = " ".join(symbols[cut:]) or "start"
    return node, " ".join(words_of(symbols[:cut])) or "(none)"


def history_listing(per_node: int) -> str:
    """Every frame's nodes with the histories they hold (probability = frames x language
    model), the hypotheses the count per node dropped, and the result (plain text)."""
    search = history_search(BEAM_WIDTH, per_node or None)
    search.run()
    limit = f"{per_node} per node" if per_node else "no limit per node"
    lines = [f"beam width {BEAM_WIDTH}, {limit}"]
    for rec in search.history:
        at: dict[str, list[str]] = {}
        for h in rec.live:
            node, history = _node(h)
            at.setdefault(node, []).append(f"after {history} {number(math.exp(h.log_prob))}")
        shown = "; ".join(f"[{node}] " + ", ".join(hs) for node, hs in at.items())
        ended = ", ".join(
            f"{' '.join(words_of([SYMBOLS[k] for k in h.tokens]))} {number(math.exp(h.log_prob))}"
            for h in rec.finished
        )
        lines.append(f"frame {rec.step:>2}: {shown or '(none live)'}")
        if ended:
            lines.append(f"          ended with EOS: {ended}")
        for h in rec.pruned:
            if h.status == "per_node":
                node, history = _node(h)
                lines.append(
                    f"          dropped at [{node}]: after {history} "
                    f"{number(math.exp(h.log_prob))} (node full)"
                )
    best = search.results()
    if best:
        words = " ".join(words_of([SYMBOLS[k] for k in best[0].tokens]))
        lines.append(f"result: {words}  p = {number(math.exp(best[0].log_prob))}")
    return "\n".join(lines)


def _name(symbol: str) -> str:
    return "EOS" if symbol == EOS else symbol


def frames_markdown() -> str:
    """The example's numbers: each frame's row and the language model (constants only)."""
    rows = [
        f"| {t} | "
        + ", ".join(f"{_name(s)} {number(p)}" for s, p in f.items() if s != OTHER)
        + " |"
        for t, f in enumerate(FRAMES, start=1)
    ]
    lm = "; ".join(
        f"P({w} | {' '.join(h) or 'start'}) = {number(p)}"
        for h, row in LM.items()
        for w, p in row.items()
    )
    return (
        "\n".join(
            [
                "| frame | the page's numbers (the rest: letters outside the words) |",
                "|---|---|",
                *rows,
            ]
        )
        + f"\n\nLanguage model (the page's numbers): {lm}."
    )


class WordHistorySection:
    """The section's widgets: the count per node and the listing."""

    def __init__(self) -> None:
        self.per_node = pn.widgets.RadioButtonGroup(
            name="Hypotheses per node", options=PER_NODE, value=0
        )
        self.per_node.param.watch(lambda e: self.show(), "value")
        self.text = Text("", css_classes=["pyplay-word-histories"])
        self.show()

    def show(self) -> None:
        self.text.object = history_listing(int(self.per_node.value or 0))

    def sections(self) -> list[Any]:
        return [
            "## Word histories and a language model in the prefix tree",
            pn.pane.Markdown(HELP),
            self.per_node,
            self.text,
            pn.pane.Markdown(frames_markdown(), css_classes=["pyplay-given"]),
        ]
