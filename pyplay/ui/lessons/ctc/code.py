"""The "show as code" script of the "CTC" lesson: the noisy frames, a ``SequenceModel`` and
its ``Trainer`` with the CTC loss, the training loop, then the model saved as ``.npz`` and
compared with its PyTorch twin (:func:`pyplay.ui.export.trainer_script`)."""

from __future__ import annotations

from typing import Any

from pyplay.ui.export import recurrent_parts, trainer_script

__all__ = ["as_code"]


def as_code(spec: Any, state: Any, *, steps: int, log_every: int) -> str:
    """The lesson's script (see :func:`pyplay.ui.export.as_code`)."""
    return trainer_script(
        spec, state, recurrent_parts, steps=steps, log_every=log_every, recurrent=True
    )
