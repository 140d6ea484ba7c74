"""The "show as code" script of the "Transformers" lesson: the task, a ``TransformerModel`` with the
lesson's width, heads, layers, positional encoding and mask, and its ``Trainer``
(:func:`pyplay.ui.export.trainer_script`)."""

from __future__ import annotations

from typing import Any

from pyplay.ui.export import call_lines, keyword_args, trainer_lines, trainer_script

__all__ = ["as_code"]


def _parts(state: Any) -> tuple[list[str], list[str]]:
    m = state.model
    settings = {
        "d_model": m.d_model,
        "nhead": m.nhead,
        "num_layers": m.num_layers,
        "positional": m.positional,
        "causal": m.causal,
        "max_len": m.max_len,
    }
    return ["from pyplay.models.transformer.lm import TransformerModel"], [
        *call_lines(
            "model = TransformerModel.for_task",
            ["task", *keyword_args(settings, "model setting"), "rng=SEED"],
        ),
        *trainer_lines(state, {}),
    ]


def as_code(spec: Any, state: Any, *, steps: int, log_every: int) -> str:
    """The lesson's script (see :func:`pyplay.ui.export.as_code`)."""
    return trainer_script(spec, state, _parts, steps=steps, log_every=log_every)
