"""The "show as code" script of the "Recurrent networks" lesson: the task, a ``SequenceModel``
and its ``Trainer`` (truncated backpropagation through time for the character model), the
training loop, then the model saved as ``.npz`` and compared with its PyTorch twin
(:func:`pyplay.ui.export.trainer_script`)."""

from __future__ import annotations

from pyplay.ui.export import recurrent_parts, trainer_code

__all__ = ["as_code"]


as_code = trainer_code(recurrent_parts, recurrent=True)
