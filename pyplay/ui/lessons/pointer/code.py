"""The "show as code" script of the "Pointer networks" lesson: the task (sorting digits, or the
convex hull of points), the pointer network and its ``Trainer``
(:func:`pyplay.ui.export.trainer_script`)."""

from __future__ import annotations

from typing import Any

from pyplay.ui.code_values import call_lines, keyword_args
from pyplay.ui.export import trainer_code, trainer_lines

__all__ = ["as_code"]


def _parts(state: Any) -> tuple[list[str], list[str]]:
    c = state.model.config
    size = "vocab_size=len(task.src_vocab)"
    if c["input_size"] is not None:
        size = "vocab_size=None, input_size=task.input_size"
    keys = ("embedding_dim", "hidden_size", "cell")
    model_args = [size, *keyword_args({k: c[k] for k in keys}, "model setting"), "rng=SEED"]
    lines = [*call_lines("model = PointerNetwork", model_args), *trainer_lines(state, {})]
    return ["from pyplay.models.pointer import PointerNetwork"], lines


as_code = trainer_code(_parts)
