"""Looking at an embedding table in the page: a 2-D PCA map of its rows, a word's nearest
neighbours and analogies (a - b + c), for the bundled table
(:func:`pyplay.word_vectors.bundled_table`) and any table a lesson's trained model has.
Everything shown is computed by :class:`pyplay.embeddings.EmbeddingTable`; typed words are
looked up, never evaluated or shown as HTML."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import panel as pn
from bokeh.models import ColumnDataSource, HoverTool
from bokeh.plotting import figure

from pyplay.embeddings import EmbeddingTable
from pyplay.ui.text import Text
from pyplay.word_vectors import DIM, PEOPLE, SENTENCES, WINDOW, bundled_table

__all__ = ["BUNDLED", "EmbeddingsSection", "EmbeddingsView", "model_tables", "pair_tables"]

BUNDLED = "Bundled: generated royal corpus (PPMI + SVD)"
MAX_POINTS = 80  # rows drawn on the map
HELP = (
    "Each row of an embedding table is a word's vector. Words used alike end up close: "
    "**Nearest** ranks the rows by cosine similarity; **Analogy** looks for the word nearest to "
    "a − b + c (king − man + woman ≈ queen, Mikolov et al. 2013); the map projects the rows on "
    "their two principal axes (for the bundled table, its eight person words). The bundled "
    "table is made here, not trained: "
    f"{SENTENCES:,} sentences from a small grammar in which eight person words differ by sex, "
    f"rank and age, co-occurrence counts within {WINDOW} words, positive PMI and a "
    f"{DIM}-dimensional SVD (what word2vec factorises). Its analogies hold because the grammar "
    "gives each difference its own contexts; on real text this takes millions of words. A "
    "trained model's table shows what its task needed: often no analogies at all."
)


def _listing(pairs: list[tuple[str, float]]) -> str:
    return ", ".join(f"{w} {s:.3f}" for w, s in pairs)


class EmbeddingsView:
    """The embeddings section (``panel``). ``sources()`` returns the trained tables a lesson
    offers now (name -> table); the bundled table is always first."""

    def __init__(self, sources: Callable[[], dict[str, EmbeddingTable]] | None = None) -> None:
        self.sources = sources or dict
        self.table = pn.widgets.Select(name="Table", options=[BUNDLED], value=BUNDLED, width=360)
        self.word = pn.widgets.TextInput(name="Nearest to", value="king", width=160)
        self.a = pn.widgets.TextInput(name="a", value="king", width=110)
        self.b = pn.widgets.TextInput(name="− b", value="man", width=110)
        self.c = pn.widgets.TextInput(name="+ c", value="woman", width=110)
        self.nearest_out = Text("", css_classes=["pyplay-emb-nearest"], sizing_mode="stretch_width")
        self.analogy_out = Text("", css_classes=["pyplay-emb-analogy"], sizing_mode="stretch_width")
        self.heading = Text("", css_classes=["pyplay-emb-title"])
        self.source = ColumnDataSource({"x": [0.0], "y": [0.0], "word": [""]})
        self.fig = figure(
            height=320, width=460, tools="pan,wheel_zoom,reset,save",
            x_axis_label="principal axis 1", y_axis_label="principal axis 2",
        )  # fmt: skip
        self.fig.scatter("x", "y", source=self.source, size=7, color="#4c78a8")
        self.fig.text("x", "y", text="word", source=self.source, x_offset=5, y_offset=-3,
                      text_font_size="9pt")  # fmt: skip
        self.fig.add_tools(HoverTool(tooltips=[("word", "@word")]))
        self.fig.x_range.range_padding = 0.3  # room for the labels right of the points
        self.fig.y_range.range_padding = 0.15
        self._tables: dict[str, EmbeddingTable] = {}
        self.table.param.watch(lambda *_: self.show(), "value")
        self.word.param.watch(lambda *_: self.nearest(), "value")
        for w in (self.a, self.b, self.c):
            w.param.watch(lambda *_: self.analogy(), "value")
        self.panel = pn.Column(
            "## Embeddings",
            pn.pane.Markdown(HELP),
            self.table,
            self.heading,
            pn.pane.Bokeh(self.fig),
            self.word,
            self.nearest_out,
            pn.Row(self.a, self.b, self.c),
            self.analogy_out,
            sizing_mode="stretch_width",
        )
        self.refresh()

    def current(self) -> EmbeddingTable:
        return self._tables.get(self.table.value) or bundled_table()

    def refresh(self, *_: Any) -> None:
        """Offer the tables there are now (a trained model's change as it trains) and redraw."""
        self._tables = {BUNDLED: bundled_table(), **self.sources()}
        options = list(self._tables)
        if self.table.options != options:
            keep = self.table.value if self.table.value in options else BUNDLED
            self.table.param.update(options=options, value=keep)
        self.show()

    def show(self) -> None:
        """The map, then the neighbours and the analogy, for the chosen table."""
        table = self.current()
        mapped = table
        if self.table.value == BUNDLED:  # the person words: their axes are sex, rank, age
            mapped = EmbeddingTable(table.weight, table.words, [table.index(w) for w in PEOPLE])
        pca = mapped.pca()
        rows = mapped.rows[:MAX_POINTS]
        self.source.data = {
            "x": pca.xy[: len(rows), 0],
            "y": pca.xy[: len(rows), 1],
            "word": np.array([table.words[r] for r in rows]),
        }
        more = f" (the map: {len(rows)} of them)" if len(rows) < len(table.rows) else ""
        self.heading.object = (
            f"{self.table.value}: {len(table.rows)} words × {table.weight.shape[1]} dimensions; "
            f"the map's axes explain {100 * pca.explained[0]:.0f}% and "
            f"{100 * pca.explained[1]:.0f}% of the variance{more}"
        )
        self.nearest()
        self.analogy()

    def nearest(self) -> None:
        word = (self.word.value or "").strip()
        try:
            found = self.current().nearest(word, k=5)
        except ValueError as err:
            self.nearest_out.object = f"Nearest to: {err}."
            return
        self.nearest_out.object = f"Nearest to {word}: {_listing(found)}"

    def analogy(self) -> None:
        a, b, c = ((w.value or "").strip() for w in (self.a, self.b, self.c))
        try:
            found = self.current().analogy(a, b, c, k=3)
        except ValueError as err:
            self.analogy_out.object = f"Analogy: {err}."
            return
        best, *rest = found
        self.analogy_out.object = (
            f"{a} − {b} + {c} ≈ {best[0]} (cosine {best[1]:.3f}); next: {_listing(rest)}"
        )


class EmbeddingsSection:
    """The embeddings section of a lesson whose default model has no table to show (the page's
    start-up path builds no figure for it): ``waiting`` until ``sources()`` first offers a
    table, then an :class:`EmbeddingsView` built once and refreshed with the model."""

    def __init__(self, sources: Callable[[], dict[str, EmbeddingTable]], waiting: str) -> None:
        self.sources = sources
        self.view: EmbeddingsView | None = None
        self.panel = pn.Column(
            "## Embeddings", pn.pane.Markdown(waiting), sizing_mode="stretch_width"
        )

    def refresh(self, *_: Any) -> None:
        """Redraw the view; build it when the model first has a table."""
        if self.view is not None:
            self.view.refresh()
        elif self.sources():
            self.view = EmbeddingsView(self.sources)
            self.panel.objects = [self.view.panel]


def pair_tables(model: Any, task: Any) -> dict[str, EmbeddingTable]:
    """The embedding tables of a trained sequence-to-sequence ``model`` (recurrent:
    ``encoder.embedding``, ``decoder.embedding``; transformer: ``src_embedding``,
    ``tgt_embedding``) for ``task``'s vocabularies: the source words' and the target words',
    without the three special tokens."""
    out: dict[str, EmbeddingTable] = {}
    params = getattr(model, "params", {})
    for keys, vocab, side in (
        (("encoder.embedding.weight", "src_embedding.weight"), getattr(task, "src_vocab", None),
         "source"),
        (("decoder.embedding.weight", "tgt_embedding.weight"), getattr(task, "tgt_vocab", None),
         "target"),
    ):  # fmt: skip
        weight = next((params[k] for k in keys if k in params), None)
        if weight is None or vocab is None or len(vocab) != weight.shape[0]:
            continue
        words = [f"⟨{k}⟩" for k in range(3)] + list(vocab.symbols)
        name = f"This lesson's model: {side} embedding ({len(vocab.symbols)} symbols)"
        out[name] = EmbeddingTable(weight, words, rows=range(3, weight.shape[0]))
    return out


SHOWN = {"\n": "⏎", " ": "␣"}  # characters a learner could not type or see, as words


def model_tables(model: Any, task: Any) -> dict[str, EmbeddingTable]:
    """Every embedding table of a trained ``model`` whose rows ``task`` names: a
    sequence-to-sequence model's (:func:`pair_tables`), or a character model's
    ``embedding`` (one row per character of ``task.vocab``; newline and space shown as ⏎ and
    ␣). Tasks whose tokens are bare ids offer none."""
    out = pair_tables(model, task)
    weight = getattr(model, "params", {}).get("embedding.weight")
    vocab = getattr(task, "vocab", None)
    if weight is not None and isinstance(vocab, list) and len(vocab) == weight.shape[0]:
        words = [SHOWN.get(str(c), str(c)) for c in vocab]
        name = f"This lesson's model: character embedding ({len(words)})"
        out[name] = EmbeddingTable(weight, words)
    return out
