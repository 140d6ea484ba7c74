"""The "show as code" script of the "Transformers" lesson: the task, a ``TransformerModel`` with the
lesson's width, heads, layers, positional encoding and mask, and its ``Trainer``
(:func:`pyplay.ui.export.trainer_script`); with the encoder-decoder, the pair task and a
``TransformerSeq2Seq`` with as many encoder as decoder layers. The model trained beside it for
comparison is left out."""

from __future__ import annotations

from typing import Any

from pyplay.ui.code_values import call_lines, keyword_args
from pyplay.ui.export import trainer_code, trainer_lines

__all__ = ["as_code"]


def _parts(state: Any) -> tuple[list[str], list[str]]:
    m = state.model
    if state.encoder_decoder:  # as many encoder as decoder layers; always causal
        layers = {
            "num_encoder_layers": m.num_encoder_layers,
            "num_decoder_layers": m.num_decoder_layers,
        }
        module, head = "transformer.seq2seq import TransformerSeq2Seq", "TransformerSeq2Seq"
        args = ["len(task.src_vocab)", "len(task.tgt_vocab)"]
    else:
        layers = {"num_layers": m.num_layers}
        module, head = "transformer.lm import TransformerModel", "TransformerModel.for_task"
        args = ["task"]
    settings = {
        "d_model": m.d_model, "nhead": m.nhead, **layers, "positional": m.positional,
        **({} if state.encoder_decoder else {"causal": m.causal}), "max_len": m.max_len,
        **({"value_function": m.value_function} if m.value_function != "linear" else {}),
    }  # fmt: skip
    return [f"from pyplay.models.{module}"], [
        *call_lines(
            f"model = {head}", [*args, *keyword_args(settings, "model setting"), "rng=SEED"]
        ),
        *trainer_lines(state, {}),
    ]


as_code = trainer_code(_parts)
