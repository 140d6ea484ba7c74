"""The "show as code" script of the "Soft and hard attention" lesson: the marked-symbol task, the
hard-attention ``GlimpseNet`` and its ``Trainer`` (with or without the baseline), then the
soft one trained beside it on the same batches (:func:`pyplay.ui.export.trainer_script`)."""

from __future__ import annotations

from typing import Any

from pyplay.ui.code_values import call_lines, identifier, keyword_args, literal
from pyplay.ui.export import trainer_code, trainer_lines

__all__ = ["as_code"]


def _model_lines(state: Any, name: str, attention: str) -> list[str]:
    c = state.model.config
    size = keyword_args({"hidden_size": c["hidden_size"], "attn_size": c["attn_size"]}, "setting")
    args = ["task.input_size", "task.num_classes", literal(attention, "attention"), *size]
    return call_lines(f"{name} = GlimpseNet", [*args, "rng=SEED"])


def _parts(state: Any) -> tuple[list[str], list[str]]:
    lines = [*_model_lines(state, "model", "hard"), *trainer_lines(state, {})]
    if not state.trainer.objective.use_baseline:
        lines.append("trainer.objective.use_baseline = False  # b = 0: plain REINFORCE")
    return ["from pyplay.models.glimpse import GlimpseNet"], lines


def _soft_lines(state: Any) -> list[str]:
    """The soft model beside it: the same task's batches (the same seed), its own trainer."""
    return [
        "",
        "# soft attention beside it, on the same batches (the same seed draws them)",
        f"soft_task = {identifier(type(state.task_obj).__name__, 'the task')}"
        "(**task.config, rng=SEED)",
        *_model_lines(state, "soft", "soft"),
        *trainer_lines(state, {}, variables=("soft_trainer", "soft", "soft_task")),
        "for record in soft_trainer.run(STEPS):",
        "    if record.step % LOG_EVERY == 0:",
        '        print(f"step {record.step}: soft loss {record.loss:.6f}")',
        'print("soft attention on fresh examples:", soft_trainer.evaluate(batch_size=64))',
    ]


as_code = trainer_code(_parts, after=_soft_lines)
