"""The export bar under a lesson's loss curve: download and load the model (``.npz``),
download the metrics (CSV) and show the setup as a runnable script.

Everything goes through the lesson state: ``save_bytes`` / ``load_bytes`` (see
:mod:`pyplay.ui.checkpoint`), ``history`` for :func:`~pyplay.ui.export.metrics_csv`, and
:func:`~pyplay.ui.export.as_code` for the lessons it supports. Problems become the state's
message; the code is shown as plain text (a :class:`~pyplay.ui.text.Text` pane), never as
HTML. Plots export as PNG through the save tool of their own toolbars.
"""

from __future__ import annotations

import io
from typing import Any

import panel as pn

from pyplay.ui.curve_points import thinned
from pyplay.ui.export import CODE_LESSONS, as_code, metrics_csv
from pyplay.ui.text import Text

__all__ = ["CODE_LESSONS", "ExportBar", "curve_data"]


def curve_data(history: dict[str, list[float]], columns: tuple[str, ...]) -> dict[str, list]:
    """The loss curve's source data drawn from a state's ``history`` (after a rebuild: empty;
    after a load: the file's curve), thinned to the points a curve keeps in the page
    (:func:`~pyplay.ui.curve_points.thinned`)."""
    return thinned({k: list(history.get(k, [])) for k in columns})


class ExportBar:
    """The export controls of lesson ``lesson`` (a key of ``LESSON_SPECS``) over its
    ``state``.

    Attributes
    ----------
    download, metrics : panel.widgets.FileDownload
        "Download model (.npz)" and "Download metrics (.csv)".
    upload : panel.widgets.FileInput
        "Load model (.npz)": the chosen file goes to ``state.load_bytes``.
    show_code : panel.widgets.Toggle or None
        "Show as code" (None for lessons :func:`as_code` does not write).
    code : panel.pane.Str
        The script, visible while ``show_code`` is on.
    """

    def __init__(self, lesson: str, state: Any) -> None:
        if not callable(getattr(state, "save_bytes", None)):
            raise TypeError(f"state must have save_bytes and load_bytes, got {type(state)}")
        self.lesson, self.state = lesson, state
        self.download = pn.widgets.FileDownload(
            callback=self.model_file,
            filename=f"pyplay-{lesson}.npz",
            label="Download model (.npz)",
            button_type="success",
            width=210,
        )
        self.upload = pn.widgets.FileInput(accept=".npz", name="Load model (.npz)", width=250)
        self.upload.param.watch(self._on_upload, "value")
        # an empty file leaves the value unset (Panel sends no bytes): only its name arrives
        self.upload.param.watch(self._on_filename, "filename")
        self.metrics = pn.widgets.FileDownload(
            callback=self.metrics_file,
            filename=f"pyplay-{lesson}-metrics.csv",
            label="Download metrics (.csv)",
            width=210,
        )
        self.show_code: pn.widgets.Toggle | None = None
        self.code = Text("", visible=False, sizing_mode="stretch_width")
        if lesson in CODE_LESSONS:
            self.show_code = pn.widgets.Toggle(name="Show as code", width=150)
            self.show_code.param.watch(lambda *_: self.refresh_code(), "value")
            state.param.watch(lambda *_: self.refresh_code(), "version")

    # ------------------------------------------------------------------ actions
    def model_file(self) -> io.BytesIO:
        """The model file (``state.save_bytes()``); empty, with a message, if it cannot be
        written."""
        try:
            return self.state.save_bytes()
        except (ValueError, TypeError) as err:
            self.state.notify(f"Not saved: {err}", "danger")
            return io.BytesIO()

    def metrics_file(self) -> io.StringIO:
        """The loss history as CSV (header only before training)."""
        try:
            return io.StringIO(metrics_csv(self.state.history))
        except ValueError as err:
            self.state.notify(f"Metrics not exported: {err}", "danger")
            return io.StringIO()

    def load(self, data: bytes) -> bool:
        """Load a model file into the state (its message says how it went; an empty file is a
        message too, and nothing changes)."""
        if not data:
            self.state.notify("Not loaded: the file is empty (0 bytes).", "danger")
            return False
        ok = bool(self.state.load_bytes(data))
        self.refresh_code()
        return ok

    def _on_upload(self, event: Any) -> None:
        if event.new is not None:
            self.load(event.new)

    def _on_filename(self, event: Any) -> None:
        if event.new and not self.upload.value:  # a file came, and no bytes with it
            self.load(b"")

    def code_text(self) -> str:
        """The lesson as a runnable script, or why it cannot be written."""
        try:
            return as_code(self.lesson, self.state)
        except (ValueError, TypeError) as err:
            return f"# No script for this setup: {err}"

    def refresh_code(self) -> None:
        """Show (or hide) the script, written from the current settings and model."""
        shown = self.show_code is not None and bool(self.show_code.value)
        self.code.object = self.code_text() if shown else ""
        self.code.visible = shown

    # ------------------------------------------------------------------ layout
    def panel(self) -> pn.Column:
        """The bar: the buttons in a row, the script below when shown."""
        row: list[Any] = [
            self.download,
            pn.Column("Load model (.npz)", self.upload, margin=(0, 10)),
            self.metrics,
        ]
        if self.show_code is not None:
            row.append(self.show_code)
        return pn.Column(
            pn.Row(*row, css_classes=["pyplay-export"]), self.code, sizing_mode="stretch_width"
        )
