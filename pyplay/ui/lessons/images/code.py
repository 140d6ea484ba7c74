"""The "show as code" script of the "Image attention" lesson: the task (captioned scenes
or cluttered digits), the model (``Captioner`` or ``RecurrentAttention``) with its settings and
its ``Trainer``; with a model beside it (the captioner with the other attention, or the glimpse
model with random glimpses), that one too, trained on the same batches
(:func:`pyplay.ui.export.trainer_script`)."""

from __future__ import annotations

from typing import Any

from pyplay.ui.code_values import call_lines, identifier, keyword_args
from pyplay.ui.export import trainer_code, trainer_lines
from pyplay.ui.lessons.images.state import beside_name

__all__ = ["as_code"]


def _model_lines(model: Any, name: str) -> list[str]:
    """``name = Captioner(...)`` or ``RecurrentAttention(...)`` with ``model``'s settings."""
    cls = identifier(type(model).__name__, "the model class")
    config = {k: v for k, v in model.config.items() if k != "dtype"}
    return call_lines(f"{name} = {cls}", [*keyword_args(config, "setting"), "rng=SEED"])


def _parts(state: Any) -> tuple[list[str], list[str]]:
    module = type(state.model).__module__
    cls = identifier(type(state.model).__name__, "the model class")
    lines = [*_model_lines(state.model, "model"), *trainer_lines(state, {})]
    return [f"from {module} import {cls}"], lines


def _beside_lines(state: Any) -> list[str]:
    """The model beside: the same task's batches (the same seed), its own trainer."""
    beside = state.beside
    if beside is None:
        return []
    return [
        "",
        f"# {beside_name(state.task, state.attention)} beside it, on the same batches (the same "
        "seed draws them)",
        f"other_task = {identifier(type(state.task_obj).__name__, 'the task')}"
        "(**task.config, rng=SEED)",
        *_model_lines(beside.model, "other"),
        *trainer_lines(state, {}, variables=("other_trainer", "other", "other_task")),
        "for record in other_trainer.run(STEPS):",
        "    if record.step % LOG_EVERY == 0:",
        '        print(f"step {record.step}: loss beside {record.loss:.6f}")',
        'print("beside, on fresh examples:", other_trainer.evaluate(batch_size=64))',
    ]


as_code = trainer_code(_parts, after=_beside_lines)
