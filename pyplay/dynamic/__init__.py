"""Dynamic nets in the notation of Hagan's *Neural Network Design* (and MATLAB's toolbox).

- :mod:`~pyplay.dynamic.transfer`: tansig, logsig, purelin, poslin, softmax by name, with
  derivatives for backpropagation.
- :mod:`~pyplay.dynamic.tdl`: the delay, tapped delay lines (TDL) and their stacked form.
- :mod:`~pyplay.dynamic.spec`: the declarative description of an LDDN (plain data, validated).
- :mod:`~pyplay.dynamic.lddn`: the layered digital dynamic network, forward and BPTT.
- :mod:`~pyplay.dynamic.networks`: timedelaynet, distdelaynet, layrecnet, narxnet, closeloop,
  openloop, preparets.
- :mod:`~pyplay.dynamic.objective`: the LDDN's training objective (mean squared error) and its
  task, :class:`Windows` of a series, for :class:`pyplay.train.Trainer`.
- :mod:`~pyplay.dynamic.train`: :func:`fit`, a generator of losses over the trainer.
- :mod:`~pyplay.dynamic.textbook_attention`, :mod:`~pyplay.dynamic.textbook_seq2seq`: the
  textbook's seq2seq (context as a constant input; dot / general / concat attention over a TDL
  of encoder states), traced step by step on a :class:`pyplay.models.seq2seq.EncoderDecoder`.
"""

from pyplay.dynamic.lddn import LDDN, LDDNCache, LDDNGrads
from pyplay.dynamic.networks import (
    Prepared,
    closeloop,
    distdelaynet,
    layrecnet,
    narxnet,
    openloop,
    preparets,
    timedelaynet,
)
from pyplay.dynamic.objective import LDDNObjective, WindowBatch, Windows
from pyplay.dynamic.spec import LDDNSpec, parse_spec, to_dict
from pyplay.dynamic.tdl import TDL, Delay, TDL_hstack
from pyplay.dynamic.textbook_attention import TextbookAttention, source_order
from pyplay.dynamic.textbook_seq2seq import (
    TEXTBOOK_FORMS,
    TextbookSeq2Seq,
    TextbookStep,
    TextbookTrace,
    book_form,
    textbook_seq2seq,
    textbook_trace,
)
from pyplay.dynamic.train import fit, mse
from pyplay.dynamic.transfer import TRANSFERS, Transfer, get_transfer

__all__ = [
    "LDDN",
    "TDL",
    "TEXTBOOK_FORMS",
    "TRANSFERS",
    "Delay",
    "LDDNCache",
    "LDDNGrads",
    "LDDNObjective",
    "LDDNSpec",
    "Prepared",
    "TDL_hstack",
    "TextbookAttention",
    "TextbookSeq2Seq",
    "TextbookStep",
    "TextbookTrace",
    "Transfer",
    "WindowBatch",
    "Windows",
    "book_form",
    "closeloop",
    "distdelaynet",
    "fit",
    "get_transfer",
    "layrecnet",
    "mse",
    "narxnet",
    "openloop",
    "parse_spec",
    "preparets",
    "source_order",
    "textbook_seq2seq",
    "textbook_trace",
    "timedelaynet",
    "to_dict",
]
