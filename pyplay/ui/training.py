"""What every lesson does with its :class:`~pyplay.train.Trainer`: run steps within a time
budget (errors become messages), carry the optimiser across a settings change, and stream the
records into the loss curve. Shared by the lesson states and views."""

from __future__ import annotations

import time
from typing import Any

from bokeh.models import ColumnDataSource

from pyplay.train import StepRecord, Trainer

__all__ = ["carry_over", "run_steps", "stream_losses"]


def run_steps(state: Any, steps: int | None, budget_s: float | None) -> list[StepRecord]:
    """Run ``steps`` steps of ``state.trainer``, or as many as fit in ``budget_s`` seconds,
    appending to ``state.history`` and ``state._elapsed``; a diverging run stops
    ``state.running`` with a message (the trainer restores its parameters). Updates
    ``state.status`` and returns the records."""
    if state.trainer is None:
        return []
    records = []
    start = time.perf_counter()
    for record in state.trainer.run(steps):
        if record.status != "ok":
            state.running = False
            state.notify(record.message, "danger")
            break
        records.append(record)
        state.history["step"].append(record.step)
        state.history["loss"].append(record.loss)
        state._elapsed += record.seconds
        if budget_s is not None and time.perf_counter() - start >= budget_s:
            break
    state.status = state._status_text()
    return records


def carry_over(old: Trainer, new: Trainer) -> Trainer:
    """``new`` (new training settings, same model) continuing ``old``: its step count, and the
    optimiser's moments when the optimiser kind is the same (with the new learning rate)."""
    if type(new.optimizer) is type(old.optimizer):
        moments = old.optimizer.state_dict()
        moments["lr"] = new.optimizer.lr
        new.optimizer.load_state_dict(moments)
    new.step_count = old.step_count
    return new


def stream_losses(source: ColumnDataSource, records: list[StepRecord]) -> None:
    """Append the records' losses to a loss curve's source."""
    if records:
        source.stream(
            {"step": [r.step for r in records], "loss": [r.loss for r in records]},
            rollover=20_000,
        )
