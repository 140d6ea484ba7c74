"""The "show as code" script of the "Textbook seq2seq" sub-lesson: the pair task, the book's
sequence-to-sequence network in the chosen form (:func:`pyplay.models.textbook.trace`)
and its ``Trainer`` (:func:`pyplay.ui.export.trainer_script`)."""

from __future__ import annotations

from typing import Any

from pyplay.ui.code_values import call_lines, keyword_args, literal
from pyplay.ui.export import trainer_code, trainer_lines

__all__ = ["as_code"]


def _parts(state: Any) -> tuple[list[str], list[str]]:
    c = state.model.config
    args = [
        "len(task.src_vocab)",
        "len(task.tgt_vocab)",
        literal(c["form"], "form"),
        *keyword_args({"hidden_size": c["hidden_size"], "D": c["D"]}, "model setting"),
        "rng=SEED",
    ]
    return ["from pyplay.models.textbook import textbook_seq2seq"], [
        *call_lines("model = textbook_seq2seq", args),
        *trainer_lines(state, {}, seeded=True),
    ]


as_code = trainer_code(_parts)
