"""Decoding: greedy and steppable beam search over any decoder (with an optional lexicon
constraint), and CTC's alignment-free loss and decoders over per-frame class scores."""

from pyplay.decode.beam import (
    FATES,
    BeamSearch,
    BeamStep,
    Candidates,
    Constraint,
    GreedyResult,
    Hypothesis,
    Reorder,
    StepFunction,
    greedy_decode,
    length_penalty,
    reorder_rows,
)
from pyplay.decode.ctc import ctc_loss, ctc_loss_logits
from pyplay.decode.ctc_decode import (
    ctc_best_path,
    ctc_collapse,
    ctc_greedy_decode,
    ctc_prefix_beam_search,
)
from pyplay.decode.lexicon import LexiconConstraint, PrefixTree

__all__ = [
    "FATES",
    "BeamSearch",
    "BeamStep",
    "Candidates",
    "Constraint",
    "GreedyResult",
    "Hypothesis",
    "LexiconConstraint",
    "PrefixTree",
    "Reorder",
    "StepFunction",
    "ctc_best_path",
    "ctc_collapse",
    "ctc_greedy_decode",
    "ctc_loss",
    "ctc_loss_logits",
    "ctc_prefix_beam_search",
    "greedy_decode",
    "length_penalty",
    "reorder_rows",
]
