"""The "Time series" lesson: train a NARX network in open loop on the bundled Narendra plant or
the user's own CSV, then close the loop and watch its multi-step prediction of the held-out
stretch drift (or not) away from the measurements.

Rendering only: actions call :class:`~pyplay.ui.lessons.timeseries.state.NARXState`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import panel as pn
from bokeh.models import ColumnDataSource

from pyplay.ui.inputs import paste_box
from pyplay.ui.lesson_view import LessonView
from pyplay.ui.lessons.rnn.state import MAX_UPLOAD_BYTES
from pyplay.ui.lessons.timeseries.state import NARXState
from pyplay.ui.plots import (
    legend_outside,
    line_figure,
    set_data,
    set_title,
    watch_placeholder,
)
from pyplay.ui.text import Text
from pyplay.ui.training import int_sliders

__all__ = ["TimeSeriesLesson"]

DATA_HELP = (
    "Paste or upload a CSV: one column (y only: the network learns y from its own past) or two "
    "columns u, y (input, output); an optional header line; 20 to 20,000 rows. The last 20 % "
    "is held out. Values are standardised."
)


class TimeSeriesLesson(LessonView):
    """Builds the time-series lesson around a :class:`NARXState`."""

    state_class = NARXState
    status_css = "pyplay-narx-status"
    controls_width = 330

    def build(self) -> None:
        tools = "pan,wheel_zoom,box_zoom,reset,save"
        self.pred_fig = line_figure(
            "Held-out stretch: open loop (one step ahead)", "sample", "y", height=280,
            tools=tools, box=((0.0, 1.0), (-1.0, 1.0)),
        )  # fmt: skip
        legend_outside(self.pred_fig)
        self.pred_source = ColumnDataSource({"t": [], "y": [], "pred": []})
        watch_placeholder(self.pred_fig, self.pred_source)
        self.pred_fig.line(
            "t",
            "y",
            source=self.pred_source,
            color="#7f8c8d",
            line_width=2,
            legend_label="measured",
        )
        self.pred_line = self.pred_fig.line(
            "t",
            "pred",
            source=self.pred_source,
            color="#2c6fbb",
            line_width=1.5,
            legend_label="prediction",
        )
        self.scores = Text("", css_classes=["pyplay-narx-scores"])
        self.equations = Text("", css_classes=["pyplay-narx-equations"])
        self.state.param.watch(lambda *_: self.refresh(), "loop")
        self.watch_version()

    def refresh(self, *_: Any) -> None:
        s = self.state
        p = s.predict()
        self.baseline.location = p.baseline
        closed = s.loop == "closed"
        pred = p.closed if closed else p.open
        set_data(self.pred_source, {"t": p.t, "y": p.y, "pred": np.asarray(pred)})
        title = "Held-out stretch: " + (
            "closed loop (free run)" if closed else "open loop (one step ahead)"
        )
        set_title(self.pred_fig, title)
        self.pred_line.glyph.line_color = "#c0392b" if closed else "#2c6fbb"
        self.scores.object = (
            f"showing: {title}\n"
            f"mean squared error on the {p.t.size} held-out samples\n"
            f"  open loop, one step ahead : {p.mse_open:.5f}\n"
            f"  closed loop, free run     : {p.mse_closed:.5f}\n"
            f"  predicting the mean       : {p.baseline:.5f}"
        )
        self.equations.object = "\n".join(s.equations())

    def controls(self) -> list[Any]:
        s = self.state
        return [
            *int_sliders(
                s,
                hidden_size="Hidden neurons",
                input_delays="Input delays d_u",
                feedback_delays="Feedback delays d_y",
            ),
        ]

    def controls_below(self) -> list[Any]:
        s = self.state
        text, cut = paste_box(  # a paste up to the file limit, or a note that it was cut
            "Your series (CSV)", MAX_UPLOAD_BYTES, height=120, placeholder="u,y\n0.1,0.0\n..."
        )
        upload = pn.widgets.FileInput(accept=".csv,.txt", name="Upload a CSV")
        use = pn.widgets.Button(name="Use this series", width=150)
        bundled = pn.widgets.Button(name="Use the Narendra plant", width=190)
        use.on_click(lambda _: s.set_user_series(text.value or ""))
        upload.param.watch(lambda e: e.new is not None and s.set_user_series(e.new), "value")
        bundled.on_click(lambda _: s.use_bundled())
        return [
            "## Your data",
            pn.pane.Markdown(DATA_HELP),
            text,
            cut,
            pn.Row(use, upload),
            bundled,
        ]

    def inside(self) -> list[Any]:
        """The workbench's view: the prediction in open or closed loop, live."""
        return [
            pn.widgets.RadioButtonGroup.from_param(
                self.state.param.loop,
                name="Loop",
                options={"Open loop": "open", "Closed loop": "closed"},
            ),
            pn.pane.Bokeh(self.pred_fig, sizing_mode="stretch_width"),
            self.scores,
        ]

    def sections(self) -> list[Any]:
        return [
            "### Equations",
            self.equations,
        ]
