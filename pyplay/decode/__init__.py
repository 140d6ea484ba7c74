"""Decoding: greedy and steppable beam search over any decoder (with an optional lexicon
constraint), and CTC's alignment-free loss and decoders over per-frame class scores."""

from pyplay.decode.beam import (
    FATES,
    BeamSearch,
    BeamStep,
    Candidates,
    Hypothesis,
    length_penalty,
)
from pyplay.decode.ctc import ctc_loss, ctc_loss_logits
from pyplay.decode.ctc_decode import (
    ctc_best_path,
    ctc_collapse,
    ctc_greedy_decode,
    ctc_prefix_beam_search,
)
from pyplay.decode.ctc_lattice import Lattice, ctc_lattice, ctc_paths, path_log_prob
from pyplay.decode.ctc_lexicon import ctc_lexicon_beam_search
from pyplay.decode.greedy import GreedyResult, greedy_decode
from pyplay.decode.lexicon import LexiconConstraint, PrefixTree, WordSequences
from pyplay.decode.pruning import Pruning
from pyplay.decode.step import Constraint, Reorder, StepFunction, reorder_rows

__all__ = [
    "FATES",
    "BeamSearch",
    "BeamStep",
    "Candidates",
    "Constraint",
    "GreedyResult",
    "Hypothesis",
    "Lattice",
    "LexiconConstraint",
    "PrefixTree",
    "Pruning",
    "Reorder",
    "StepFunction",
    "WordSequences",
    "ctc_best_path",
    "ctc_collapse",
    "ctc_greedy_decode",
    "ctc_lattice",
    "ctc_lexicon_beam_search",
    "ctc_loss",
    "ctc_loss_logits",
    "ctc_paths",
    "ctc_prefix_beam_search",
    "greedy_decode",
    "length_penalty",
    "path_log_prob",
    "reorder_rows",
]
