"""The CTC lesson's decoding panel: best path, prefix beam search and lexicon (prefix-tree) beam
search side by side on the example on screen, with the beam width and the lexicon as controls
(a lexicon that cannot be used is explained next to its box, the typed text kept). Rendering
only: the numbers come from :mod:`pyplay.ui.lessons.ctc.decoding`."""

from __future__ import annotations

from typing import Any

import panel as pn

from pyplay.ui.lectures import lecture, lecture_label
from pyplay.ui.lessons.ctc.decoding import SHOWN, Decodings
from pyplay.ui.lessons.ctc.state import CTCState
from pyplay.ui.text import Text

__all__ = ["DecodingViews"]

COLUMN_PX = 290  # each decoder's list: three side by side at 1280 px, wrapped below that

DECODING_HELP = (
    "Three ways to read a labelling out of the frames above. **Best path** takes the likeliest "
    "class of each frame and collapses it: the log-probability is that of the one path. "
    "**Prefix beam search** keeps the likeliest prefixes frame by frame, each adding up all "
    "its paths (a blank or a repeat leaves it as it is): its log p(l|x) is the labelling's. "
    f"**Lexicon beam search** is the prefix-tree search of {lecture('wand')}: every prefix "
    "also carries where it is in the tree of the words below, may only grow along the tree's "
    "edges (or, at a word's end, start the next word), and only whole words count at the "
    f"end. Where two paths reach the same hypothesis {lecture_label('wand')} keeps the better "
    "one; here they are added, as CTC's p(l|x) does, so a wide beam gives the exact "
    "probabilities."
)


def _column(title: str, rows: list[tuple[str, float]]) -> str:
    lines = [title, "log p    labelling"]
    lines += [f"{lp:7.3f}  {text}" for text, lp in rows]
    return "\n".join(lines)


class DecodingViews:
    """The decoding panel, redrawn by :meth:`update` with the lesson's current example."""

    def __init__(self, state: CTCState) -> None:
        self.state = state
        self.beam_width = pn.widgets.IntSlider.from_param(
            state.param.beam_width, name="Beam width", width=200
        )
        self.lexicon = pn.widgets.TextInput.from_param(
            state.param.lexicon, name="Lexicon (words over the symbols)", width=260
        )
        self.problem = Text("", css_classes=["pyplay-ctc-lexicon-note"])
        self.columns = {
            key: Text("", css_classes=[f"pyplay-ctc-{key}"], width=COLUMN_PX)
            for key in ("best", "beam", "lexicon")
        }
        self.last: Decodings | None = None

    def update(self, found: Decodings) -> None:
        """Show ``found``; a lexicon problem goes next to the lexicon box."""
        self.last = found
        self.columns["best"].object = _column("best path", [found.best_path])
        self.columns["beam"].object = _column(f"prefix beam search (top {SHOWN})", found.beam)
        self.columns["lexicon"].object = _column(
            f"lexicon beam search (top {SHOWN})", found.lexicon
        )
        self.problem.object = (
            f"Lexicon not used: {found.lexicon_error}" if found.lexicon_error else ""
        )

    def sections(self) -> list[Any]:
        return [
            "## Decoding: best path, beam, lexicon",
            pn.pane.Markdown(DECODING_HELP),
            self.beam_width,
            self.lexicon,
            self.problem,
            pn.Row(*self.columns.values()),  # the page's rows wrap: one under the other
        ]
