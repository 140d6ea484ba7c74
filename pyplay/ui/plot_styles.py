"""Lines a colour-blind reader can tell apart: :func:`distinguish_lines`.

About one man in twelve does not see red and green apart (deuteranopia, protanopia), so a legend
whose entries differ only in colour leaves him guessing which line is which. WCAG 2.1 (1.4.1,
"use of color") asks that colour is never the only carrier of a meaning. Every figure of a
lesson therefore goes through :func:`distinguish_lines` when its page is built: the entries of a
legend keep their colours, and where two entries would otherwise be told apart by colour alone,
the later one gets the next dash pattern of :data:`DASHES` (a line), marker of :data:`MARKERS`
(markers only) or pair of the two (a line with markers), on every renderer of the entry, its
legend sample included (:func:`~pyplay.ui.plots.legend_key`). An entry that already differs in
dash, width or marker keeps its style. The heatmaps' colour maps (Viridis for gates and
probabilities, red-blue for signed values) are ColorBrewer's and Matplotlib's colour-blind-safe
maps.
"""

from __future__ import annotations

from typing import Any

from bokeh.models import GlyphRenderer, LegendItem, Plot
from bokeh.models.glyphs import Line, Scatter, Step

from pyplay.ui.plot_describe import legend_items

__all__ = ["DASHES", "MARKERS", "distinguish_lines", "style_of"]

DASHES: tuple[Any, ...] = (
    "solid", "dashed", "dotted", "dotdash", "dashdot", [8, 3, 2, 3, 2, 3], [12, 4], [2, 6],
    [12, 3, 3, 3, 3, 3], [4, 2, 4, 8], [1, 3, 1, 3, 8, 3], [16, 4, 2, 4],
)  # fmt: skip
MARKERS = (
    "circle", "square", "triangle", "diamond", "inverted_triangle", "star", "hex",
    "square_pin", "triangle_pin", "plus", "x", "asterisk",
)  # fmt: skip


def _dash(value: Any) -> tuple[Any, ...]:
    """A dash pattern as a comparable tuple ("solid" and [] are the same)."""
    if value in (None, "solid", []):
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(value)


def _renderers(item: LegendItem) -> list[GlyphRenderer]:
    return [r for r in item.renderers if isinstance(r, GlyphRenderer)]


def style_of(item: LegendItem) -> tuple[Any, ...]:
    """What tells ``item`` apart besides colour: its lines' dash and width, its markers."""
    dashes, widths, markers = set(), set(), set()
    for r in _renderers(item):
        glyph = r.glyph
        if isinstance(glyph, (Line, Step)):
            dashes.add(_dash(glyph.line_dash))
            widths.add(float(glyph.line_width))
        elif isinstance(glyph, Scatter) and isinstance(glyph.marker, str):
            markers.add(glyph.marker)
    return (tuple(sorted(dashes)), tuple(sorted(widths)), tuple(sorted(markers)))


def _restyle(item: LegendItem, taken: set[tuple[Any, ...]]) -> None:
    """Give ``item`` the first dash (or marker) whose style is not ``taken``."""
    lines = [r for r in _renderers(item) if isinstance(r.glyph, (Line, Step))]
    dots = [r for r in _renderers(item) if isinstance(r.glyph, Scatter)]
    dashes = DASHES if lines else (None,)
    markers = MARKERS if dots else (None,)
    for dash in dashes:  # a dash first, then a marker with it (a line with markers)
        for marker in markers:
            for r in lines:
                r.glyph.line_dash = dash
            for r in dots:
                r.glyph.marker = marker
            if style_of(item) not in taken:
                return


def distinguish_lines(fig: Plot) -> None:
    """Make every entry of ``fig``'s legends differ from the others in more than colour
    (module docstring). Entries without lines or markers (a colour bar's, a patch's) are
    left as they are."""
    taken: set[tuple[Any, ...]] = set()
    for item in legend_items(fig):
        style = style_of(item)
        if style == ((), (), ()):
            continue  # no line or marker to restyle
        if style in taken:
            _restyle(item, taken)
        taken.add(style_of(item))
