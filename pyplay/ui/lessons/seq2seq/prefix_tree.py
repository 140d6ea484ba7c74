"""The prefix-tree search of Wand's lecture and its DOCK BUYS MAN example as the page shows them (no
Panel here).

:class:`PrefixTreeStepper` steps :func:`~pyplay.decode.lecture_examples.phone_search` frame by
frame and turns its records into the tree figure's columns (one dot per tree node at (depth,
row), its phone and accumulated probability as labels, the word ends drawn green as on the
slide) and a plain-text listing of every node's probability. :func:`sentence_listing` runs the
DOCK / DOG decoder with a beam width and says what it kept and found. Every number shown comes
from the search; only the tables (``PHONE_TABLE``, ``SENTENCE_TABLE``) hold given numbers.
"""

from __future__ import annotations

import math
from typing import Any

from pyplay.decode.lecture_examples import (
    EOS,
    OTHER,
    PHONE_FRAMES,
    PHONE_TABLE,
    PHONE_WORDS,
    SENTENCE_DEFAULT,
    SENTENCE_TABLE,
    Given,
    NodeValue,
    node_values,
    phone_search,
    sentence_search,
)

__all__ = ["PrefixTreeStepper", "given_markdown", "number", "sentence_listing"]

NODE_STATES = ("start", "in the beam", "passed", "ended (EOS)", "pruned", "not reached")
NODE_COLOURS = ("#555555", "#2c6fbb", "#9bbbe0", "#27ae60", "#bbbbbb", "#ffffff")
WHY = {
    "outside_beam": "pruned: outside the beam",
    "cannot_beat_finished": "pruned: cannot beat the finished ones",
    "incomplete": "dropped: no word ends here when the frames run out",
}


def number(p: float) -> str:
    """A probability as the slide writes it (0.4, 0.06, 0.0864): four significant digits."""
    return f"{p:.4g}"


class PrefixTreeStepper:
    """Step / Back / Reset through the slide's prefix-tree search with ``beam_width``."""

    def __init__(self, beam_width: int = 8) -> None:
        self.search, self.table, self.lexicon = phone_search(beam_width)
        self.reset(beam_width)

    def reset(self, beam_width: int | None = None) -> None:
        """A new search (with ``beam_width`` when given), before frame 1."""
        width = self.search.beam_width if beam_width is None else int(beam_width)
        self.search, self.table, self.lexicon = phone_search(width)
        self.eos = self.table.ids[EOS]
        self._layout = self._place()

    @property
    def frame(self) -> int:
        return self.search.step

    def step(self) -> None:
        if not self.search.done:
            self.search.advance()

    def back(self) -> None:
        if self.search.history:
            self.search.back()

    def run(self) -> None:
        self.search.run()

    # ------------------------------------------------------------------ the tree's shape
    def _place(self) -> dict[tuple[int, ...], tuple[int, float]]:
        """(depth, row) of every node: leaves on consecutive rows in phone order, a parent on
        its first child's row (so that no label sits on a slanted edge)."""
        tree, at = self.lexicon.tree, {}
        rows = [0]

        def place(node: int, prefix: tuple[int, ...]) -> float:
            kids = sorted(tree.children(node).items())
            if not kids:
                row = float(rows[0])
                rows[0] += 1
            else:
                ys = [place(child, (*prefix, k)) for k, child in kids]
                row = ys[0]
            at[prefix] = (len(prefix), row)
            return row

        place(tree.root, ())
        return at

    @property
    def rows(self) -> int:
        """Rows of the tree figure (one per leaf)."""
        return int(max(y for _, y in self._layout.values())) + 1

    def label(self, prefix: tuple[int, ...]) -> str:
        """A node's name: its phones, space-separated ("A N")."""
        return " ".join(self.table.decode(prefix)) or "start"

    def _state(self, prefix: tuple[int, ...], v: NodeValue | None) -> str:
        if not prefix:
            return "start"
        if v is None:
            return "not reached"
        if v.ended is not None:
            return "ended (EOS)"
        if v.status != "live":
            return "pruned"
        return "in the beam" if v.step == self.frame else "passed"

    def _value(self, v: NodeValue | None) -> str:
        if v is None:
            return ""
        return number(v.p) if v.status == "live" else f"{number(v.p)} pruned"

    def figure_data(self) -> tuple[dict[str, list[Any]], dict[str, list[float]]]:
        """The tree figure's node columns (x, y, phone, value, ended, node, state, final) and
        its edges (x0, y0, x1, y1); ``ended`` is the probability after EOS ("EOS 0.0864")."""
        values = node_values(self.search, self.eos)
        nodes: dict[str, list[Any]] = {
            k: [] for k in ("x", "y", "phone", "value", "ended", "node", "state", "final")
        }
        edges: dict[str, list[float]] = {"x0": [], "y0": [], "x1": [], "y1": []}
        for prefix, (x, y) in sorted(self._layout.items()):
            v = values.get(prefix)
            nodes["x"].append(x)
            nodes["y"].append(y)
            nodes["phone"].append(self.table.symbols[prefix[-1]] if prefix else "start")
            nodes["value"].append("1.0" if not prefix else self._value(v))
            nodes["ended"].append("" if v is None or v.ended is None else f"EOS {number(v.ended)}")
            nodes["node"].append(self.label(prefix))
            nodes["state"].append(self._state(prefix, v))
            nodes["final"].append("word end" if self._is_word(prefix) else "prefix")
            if prefix:
                x0, y0 = self._layout[prefix[:-1]]
                for key, val in zip(edges, (x0, y0, x, y), strict=True):
                    edges[key].append(float(val))
        return nodes, edges

    def _is_word(self, prefix: tuple[int, ...]) -> bool:
        node = self.lexicon.tree.find(prefix)
        return node is not None and self.lexicon.tree.is_word(node)

    # ------------------------------------------------------------------ text
    def listing(self) -> str:
        """Every reached node's accumulated probability (plain text), then the result."""
        s = self.search
        lines = [f"Frame {s.step} of {PHONE_FRAMES} (beam width {s.beam_width})"]
        if not s.history:
            lines.append("start  1.0  (press Step for frame 1)")
            return "\n".join(lines)
        values = node_values(s, self.eos)
        for prefix in sorted(values, key=lambda p: (len(p), self._layout[p][1])):
            v = values[prefix]
            what = WHY.get(v.status, self._state(prefix, v))
            if v.ended is not None:
                what = f"ended with EOS at frame {v.ended_step}: {number(v.ended)}"
            lines.append(f"{self.label(prefix):<12} {number(v.p):>7}  {what}")
        best = s.results()
        if s.done:
            lines.append(
                f"Result (best of the final nodes): {self.label(best[0].tokens[:-1])}, "
                f"p = {number(math.exp(best[0].log_prob))}"
                if best
                else "Result: no hypothesis reached a final node"
            )
        return "\n".join(lines)


def given_markdown(givens: tuple[Given, ...], what: str) -> str:
    """A Markdown table of an example's numbers, one row per history, the slide's numbers and
    the page's apart (the tables are the module's constants, never user input)."""
    rows: dict[tuple[str, ...], dict[str, list[str]]] = {}
    for g in givens:
        symbol = "any other" if g.symbol == OTHER else g.symbol.replace(EOS, "EOS")
        cells = rows.setdefault(g.history, {"slide": [], "page": []})
        cells[g.source].append(f"{symbol} {number(g.p)}")
    sources = ("slide", "page") if any(c["slide"] for c in rows.values()) else ("page",)
    head = " | ".join(f"{what}: the {src}'s numbers" for src in sources)
    lines = [f"| after | {head} |", "|---" * (1 + len(sources)) + "|"]
    for history in sorted(rows, key=len):
        given = " | ".join(", ".join(rows[history][src]) or "-" for src in sources)
        lines.append(f"| {' '.join(history) or '(start)'} | {given} |")
    return "\n".join(lines)


def tree_words_text() -> str:
    """The tree's words and who named them."""
    by = {  # the slide spells its words as letters (ARE); the page's phones apart (AE N)
        src: ", ".join(joint.join(w) for w, s in PHONE_WORDS if s == src)
        for src, joint in (("slide", ""), ("page", " "))
    }
    return f"words named on the slide: {by['slide']}; added by the page: {by['page']}"


def sentence_listing(beam_width: int) -> str:
    """The DOCK / DOG decoder searched with ``beam_width``: what each step kept, the result,
    and greedy's result beside it (plain text)."""
    lines = []
    for width in dict.fromkeys((1, int(beam_width))):
        search, table = sentence_search(width)
        name = "greedy (beam width 1)" if width == 1 else f"beam width {width}"
        lines.append(f"{name}:")
        for rec in search.history:
            kept = [*rec.live, *rec.finished]
            shown = ", ".join(
                f"{' '.join(table.decode(h.tokens)).replace(EOS, 'EOS')} "
                f"{number(math.exp(h.log_prob))}"
                for h in kept
            )
            lines.append(f"  step {rec.step}: kept {shown}")
        best = search.results()[0]
        words = " ".join(table.decode(best.tokens[:-1]))
        lines.append(f"  result: {words}  p = {number(math.exp(best.log_prob))}")
    return "\n".join(lines)


def sentence_table_markdown() -> str:
    """The DOCK / DOG decoder's probabilities as a Markdown table."""
    ends = ", ".join(f"{k.replace(EOS, 'EOS')} {number(p)}" for k, p in SENTENCE_DEFAULT.items())
    return f"{given_markdown(SENTENCE_TABLE, 'word')}\n| any three words | {ends} |"


def phone_table_markdown() -> str:
    """The prefix-tree example's probabilities as a Markdown table."""
    return given_markdown(PHONE_TABLE, "phone")
