"""The figures of the "Image attention" lesson, drawn in image pixels: each captioner's
greedy caption, one small copy of the scene per word, lit where the model looked as it wrote
that word (Xu et al.'s picture); the glimpse model's path over a few cluttered canvases, each
glimpse's crops as squares numbered in order, the digit's box dashed; the batch accuracy of
the model and of the one beside it (the captioner with the other attention, or random
glimpses). Each builder returns the figure and its sources; ``show_*`` fills them."""

from __future__ import annotations

import numpy as np
from bokeh.core.properties import value
from bokeh.models import ColumnDataSource, LegendItem, LinearColorMapper, Range1d
from bokeh.palettes import Greys256
from bokeh.plotting import figure

from pyplay.ui.lessons.images.state import CaptionView, PathView
from pyplay.ui.plots import keep_legend_samples, legend_outside, line_figure, set_data, set_title

__all__ = [
    "MAIN",
    "OTHER",
    "PER_ROW",
    "accuracy_figure",
    "caption_figure",
    "glimpse_figure",
    "lit",
    "name_accuracy_curves",
    "show_captions",
    "show_paths",
]

MAIN, OTHER, TARGET = "#2c6fbb", "#27ae60", "#e74c3c"  # main model, the one beside, the digit
STEPS = ("#ff9f1a", "#f1c40f", "#1abc9c", "#9b59b6", "#e84393", "#00cec9")  # glimpse 1, 2 ...
PER_ROW = 5  # words a row (a shape's four words and "and")
GAP, ROW = 4, 10  # pixels between tiles; above each tile, room for its word
LABEL = 34  # room on the left for the model's name
DIM = 0.3  # brightness of the scene where the model does not look
FULL = 0.2  # a cell with this weight or more is fully lit, whatever the largest weight


def lit(image: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """``image`` (S, S, 3) in [0, 1] lit by the attention map ``alpha`` (g_h, g_w): each
    pixel keeps ``DIM`` of its colour plus the rest and a white glow in proportion to its
    cell's weight over the largest weight, or over :data:`FULL` when the largest is smaller
    (so that a map spread over the whole grid stays dim rather than all lit); RGBA bytes
    packed as (S, S) uint32, bottom row first (Bokeh's images start at the bottom)."""
    S_h, S_w = image.shape[:2]
    g_h, g_w = alpha.shape
    rows = np.arange(S_h) * g_h // S_h  # (S,) the cell of each pixel row
    cols = np.arange(S_w) * g_w // S_w  # (S,)
    w = alpha[rows][:, cols] / max(float(alpha.max()), FULL)  # (S, S) in [0, 1]
    rgb = image * (DIM + (1 - DIM) * w[..., None]) + 0.45 * w[..., None]  # (S, S, 3)
    rgba = np.empty((S_h, S_w, 4), dtype=np.uint8)
    rgba[..., :3] = np.clip(rgb * 255, 0, 255).astype(np.uint8)
    rgba[..., 3] = 255
    return rgba[::-1].copy().view(np.uint32)[..., 0]  # (S, S)


def caption_figure(size: int) -> tuple[figure, ColumnDataSource, ColumnDataSource]:
    """Tiles of ``size`` pixels, one per word of each caption, the word above each; returns
    the figure and the sources of the tiles and of the texts."""
    tiles = ColumnDataSource({"image": [], "x": [], "y": [], "dw": [], "dh": []},
                             name="images-captions")  # fmt: skip
    texts = ColumnDataSource({"x": [], "y": [], "text": [], "align": [], "colour": []})
    fig = figure(
        width=620, height=260, title="Where each word looked", tools="save",
        x_range=Range1d(-LABEL, PER_ROW * (size + GAP)), y_range=Range1d(-2 * (size + ROW), 0),
    )  # fmt: skip
    fig.image_rgba(image="image", x="x", y="y", dw="dw", dh="dh", source=tiles)
    fig.text(
        "x", "y", text="text", source=texts, text_align="align", text_baseline="bottom",
        text_font_size="11px", text_color="colour",
    )  # fmt: skip
    fig.axis.visible = False
    fig.grid.visible = False
    fig.outline_line_color = None
    return fig, tiles, texts


def show_captions(
    fig: figure, sources: tuple[ColumnDataSource, ColumnDataSource], view: CaptionView, k: int
) -> None:
    """Draw ``view`` (scene ``k``, counted from 0) in :func:`caption_figure`: each model's
    words in rows of :data:`PER_ROW`, its name at the left of its first row."""
    tiles, texts = sources
    S = view.image.shape[0]
    cols: dict[str, list] = {"image": [], "x": [], "y": [], "dw": [], "dh": []}
    words: dict[str, list] = {"x": [], "y": [], "text": [], "align": [], "colour": []}
    row = 0
    for m, (name, said, maps) in enumerate(zip(view.names, view.words, view.maps, strict=True)):
        colour = MAIN if m == 0 else OTHER
        words["x"].append(-2)
        words["y"].append(-(row + 1) * (S + ROW) + S / 2)
        words["text"].append(name)
        words["align"].append("right")
        words["colour"].append(colour)
        for j, (word, alpha) in enumerate(zip(said, maps, strict=True)):
            r, c = row + j // PER_ROW, j % PER_ROW
            x0, y0 = c * (S + GAP), -(r + 1) * (S + ROW)
            cols["image"].append(lit(view.image, alpha))
            cols["x"].append(x0)
            cols["y"].append(y0)
            cols["dw"].append(S)
            cols["dh"].append(S)
            words["x"].append(x0 + S / 2)
            words["y"].append(y0 + S + 1)
            words["text"].append(word)
            words["align"].append("center")
            words["colour"].append(colour)
        row += max(1, -(-len(said) // PER_ROW))
    tiles.data = cols
    set_data(texts, words)
    bottom = -row * (S + ROW)
    if fig.y_range.start != bottom:
        fig.y_range.start = bottom
        fig.height = 60 + row * 100
    set_title(fig, f"Scene {k + 1}, truly: {view.truth}")


def glimpse_figure(size: int, n: int = 4) -> tuple[figure, dict[str, ColumnDataSource]]:
    """``n`` canvases of ``size`` pixels side by side with the glimpse path over each: the
    crops as squares coloured by their glimpse, the centres numbered, the digit's box dashed,
    below each the digit and the model's answer. Returns the figure and its sources by name
    (``canvas``, ``boxes``, ``path``, ``centres``, ``digit``, ``answer``)."""
    sources = {
        "canvas": ColumnDataSource({"image": [], "x": [], "y": [], "dw": [], "dh": []},
                                   name="images-canvas"),
        "boxes": ColumnDataSource({"x": [], "y": [], "side": [], "colour": [], "alpha": []},
                                  name="images-glimpses"),
        "path": ColumnDataSource({"xs": [], "ys": []}),
        "centres": ColumnDataSource({"x": [], "y": [], "text": [], "colour": []}),
        "digit": ColumnDataSource({"x": [], "y": [], "w": [], "h": []}),
        "answer": ColumnDataSource({"x": [], "y": [], "text": []}),
    }  # fmt: skip
    width = n * (size + GAP)
    fig = figure(
        width=620, height=int(620 * (size + 8) / width) + 40, title="Where the glimpses land",
        tools="save", x_range=Range1d(-1, width), y_range=Range1d(-size - 7, 1),
    )  # fmt: skip
    mapper = LinearColorMapper(palette=Greys256[::-1], low=0.0, high=1.0)  # ink white
    fig.image(image="image", x="x", y="y", dw="dw", dh="dh", source=sources["canvas"],
              color_mapper=mapper)  # fmt: skip
    fig.rect("x", "y", "w", "h", source=sources["digit"], fill_alpha=0, line_color=TARGET,
             line_dash="dashed", line_width=2, legend_label="the digit")  # fmt: skip
    fig.rect("x", "y", "side", "side", source=sources["boxes"], fill_alpha=0,
             line_color="colour", line_alpha="alpha", line_width=2)  # fmt: skip
    fig.multi_line("xs", "ys", source=sources["path"], line_color="white", line_alpha=0.6)
    fig.circle("x", "y", radius=1.3, source=sources["centres"], fill_color="colour",
               line_color="black")  # fmt: skip
    fig.text("x", "y", text="text", source=sources["centres"], text_align="center",
             text_baseline="middle", text_font_size="9px", text_color="black")  # fmt: skip
    fig.text("x", "y", text="text", source=sources["answer"], text_align="center",
             text_baseline="top", text_font_size="11px")  # fmt: skip
    legend_outside(fig, "below")
    fig.axis.visible = False
    fig.grid.visible = False
    return fig, sources


def show_paths(sources: dict[str, ColumnDataSource], view: PathView) -> None:
    """Draw ``view`` in :func:`glimpse_figure`: pixel (row, column) of canvas i is drawn at
    (x0 + column, -row), x0 = i (S + GAP)."""
    n, S = view.images.shape[:2]
    p = view.path
    x0 = np.arange(n) * (S + GAP)  # (n,)
    set_data(sources["canvas"], {
        "image": [img[::-1] for img in view.images], "x": x0, "y": np.full(n, -S),
        "dw": np.full(n, S), "dh": np.full(n, S),
    })  # fmt: skip
    cx = x0[:, None] + p.centres[:, :, 1]  # (n, tau)
    cy = -p.centres[:, :, 0]  # (n, tau)
    tau, k = cx.shape[1], len(p.sizes)
    colours = [STEPS[t % len(STEPS)] for t in range(tau)]
    set_data(sources["boxes"], {
        "x": np.repeat(cx.reshape(-1), k), "y": np.repeat(cy.reshape(-1), k),
        "side": np.tile(np.asarray(p.sizes, dtype=np.float64), n * tau),
        "colour": [c for _ in range(n) for c in colours for _ in range(k)],
        "alpha": np.tile(np.linspace(1.0, 0.45, k), n * tau),
    })  # fmt: skip
    sources["path"].data = {"xs": [list(r) for r in cx], "ys": [list(r) for r in cy]}
    set_data(sources["centres"], {
        "x": cx.reshape(-1), "y": cy.reshape(-1),
        "text": [str(t + 1) for _ in range(n) for t in range(tau)], "colour": colours * n,
    })  # fmt: skip
    top, left, h, w = (view.boxes[:, i].astype(np.float64) for i in range(4))
    set_data(sources["digit"], {"x": x0 + left + w / 2, "y": -(top + h / 2), "w": w, "h": h})
    marks = ["right" if a == b else "wrong" for a, b in zip(p.predicted, view.targets, strict=True)]
    set_data(sources["answer"], {
        "x": x0 + S / 2, "y": np.full(n, -S - 1.0),
        "text": [f"{t}: reads {a} ({m})" for t, a, m in zip(view.targets, p.predicted, marks,
                                                            strict=True)],
    })  # fmt: skip


def accuracy_figure() -> tuple[figure, ColumnDataSource]:
    """Accuracy on each training batch (words right for a captioner, digits for the glimpse
    model) of the main model (solid) and the one beside it (dotted), and the share of last
    glimpses on the digit (dashed); :func:`name_accuracy_curves` names the first two."""
    source = ColumnDataSource({"step": [], "accuracy": [], "beside": [], "on_target": []})
    fig = line_figure("Accuracy on each training batch", "step", "share", height=220,
                      box=((0.0, 1.0), (0.0, 1.0)))  # fmt: skip
    legend_outside(fig)
    fig.line("step", "accuracy", source=source, line_width=2, color=MAIN, legend_label="model")
    fig.line("step", "beside", source=source, line_width=2, color=OTHER, line_dash="dotted",
             legend_label="model beside")  # fmt: skip
    fig.line("step", "on_target", source=source, line_width=2, color=TARGET,
             line_dash="dashed", legend_label="last glimpse on the digit")  # fmt: skip
    keep_legend_samples(fig)
    return fig, source


def name_accuracy_curves(fig: figure, main: str, beside: str | None) -> None:
    """Name the accuracy curves of :func:`accuracy_figure`: the main model's ``main``, the
    one beside it ``beside`` (its entry hidden when None: no model beside)."""
    for item in fig.legend[0].items:
        if not isinstance(item, LegendItem):
            continue
        field = getattr(item.renderers[0].glyph, "y", None)
        if field == "accuracy":
            item.label = value(main)
        elif field == "beside":
            item.update(label=value(beside or "model beside"), visible=beside is not None)
