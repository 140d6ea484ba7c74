"""The "show as code" script of the "Recursive networks" lesson: the tree task, the recursive
net and its ``Trainer``, and the chain LSTM trained beside it on the same examples
(:func:`pyplay.ui.export.trainer_script`)."""

from __future__ import annotations

from typing import Any

from pyplay.ui.code_values import call_lines, keyword_args
from pyplay.ui.export import trainer_code, trainer_lines

__all__ = ["as_code"]


def _parts(state: Any) -> tuple[list[str], list[str]]:
    c = state.model.config
    size = keyword_args({"hidden_size": c["hidden_size"]}, "model setting")
    model_args = ["len(task.vocab)", "task.num_classes", *size, "rng=SEED"]
    lines = [
        *call_lines("model = RecursiveNet", model_args),
        *trainer_lines(state, {}),
    ]
    return ["from pyplay.models.recursive import RecursiveNet"], lines


as_code = trainer_code(_parts)
