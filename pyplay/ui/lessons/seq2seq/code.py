"""The "show as code" script of the "Sequence to sequence" lesson: the pair task, an
``EncoderDecoder`` with the lesson's wiring and score, and a ``Trainer`` with its scheduled
sampling and source reversal (:func:`pyplay.ui.export.trainer_script`)."""

from __future__ import annotations

from typing import Any

from pyplay.ui.code_values import call_lines, keyword_args
from pyplay.ui.export import trainer_code, trainer_lines

__all__ = ["as_code"]


def _parts(state: Any) -> tuple[list[str], list[str]]:
    m = state.model
    settings = {
        "embedding_dim": m.enc_emb.embedding_dim,
        "hidden_size": m.hidden_size,
        "num_layers": m.num_layers,
        "cell": m.cell,
        "bidirectional_encoder": m.bidirectional_encoder,
        "wiring": m.wiring,
        "score": state.score,
        "share_rnn": m.share_rnn,
    }
    if m.scale_by != "key_size":  # the default goes unsaid
        settings["scale_by"] = m.scale_by
    if m.encoder != "stack":  # GNMT's encoder and decoder (the default goes unsaid)
        settings["encoder"] = m.encoder
    options: dict[str, Any] = {
        "sampling": float(state.sampling),
        "reverse_source": bool(state.reverse_source),
    }
    return ["from pyplay.models.seq2seq import EncoderDecoder"], [
        *call_lines(
            "model = EncoderDecoder",
            [
                "len(task.src_vocab)",
                "len(task.tgt_vocab)",
                *keyword_args(settings, "model setting"),
                "rng=SEED",
            ],
        ),
        *trainer_lines(state, options, seeded=True),
    ]


as_code = trainer_code(_parts)
