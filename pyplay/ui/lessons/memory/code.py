"""The "show as code" script of the "Memory" lesson: associative recall, the lesson's network (a
``MemoryNet``, the ``AttendRNN`` or the LSTM of equal width) and its ``Trainer``
(:func:`pyplay.ui.export.trainer_script`)."""

from __future__ import annotations

from typing import Any

from pyplay.ui.code_values import call_lines, keyword_args
from pyplay.ui.export import sequence_model_lines, trainer_code, trainer_lines

__all__ = ["as_code"]


def _parts(state: Any) -> tuple[list[str], list[str]]:
    """The memory lesson's network: a MemoryNet, the AttendRNN or the LSTM of equal width."""
    c = state.net.config
    kind = type(state.net).__name__
    if kind == "SequenceModel":
        return ["from pyplay.models import SequenceModel"], [
            *sequence_model_lines(state, state.net),
            *trainer_lines(state, {}),
        ]
    keys = ["hidden_size"]
    if kind == "MemoryNet":
        keys += [
            "memory_size",
            "memory_width",
            "read_heads",
            "write_heads",
            "update",
            "addressing",
            "key_function",
            "hard",
            "feedback",
        ]
    elif kind == "AttendRNN":
        keys.append("form")
    else:
        raise ValueError(f"unknown memory network {kind}")
    args = ["task", *keyword_args({k: c[k] for k in keys}, "model setting"), "rng=SEED"]
    return [f"from pyplay.models.memory import {kind}"], [
        *call_lines(f"model = {kind}.for_task", args),
        *trainer_lines(state, {}),
    ]


as_code = trainer_code(_parts)
