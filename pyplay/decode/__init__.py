"""Decoding and alignment-free losses over per-frame class scores."""

from pyplay.decode.ctc import ctc_loss, ctc_loss_logits
from pyplay.decode.ctc_decode import (
    ctc_best_path,
    ctc_collapse,
    ctc_greedy_decode,
    ctc_prefix_beam_search,
)

__all__ = [
    "ctc_best_path",
    "ctc_collapse",
    "ctc_greedy_decode",
    "ctc_loss",
    "ctc_loss_logits",
    "ctc_prefix_beam_search",
]
