"""The book's sequence-to-sequence network exactly as eq. 6.5-6.18 write it, in Hagan's layer
notation (one-hot words, layer 1 the encoder, layer 2 the decoder, layer 3 the output).

- :mod:`.attention` the context and the dot / general / concat attention of one decoder step
  over the delay line :math:`A^1(T)` of ``D`` encoder states, queried with the decoder's
  previous output :math:`a^2(t-1)`;
- :mod:`.seq2seq` :class:`TextbookSeq2Seq`, the batched model trained by
  :class:`pyplay.train.Trainer` (parameters named as the book: ``"IW1,1"``, ``"LW2,2"``, ...);
- :mod:`.trace` :func:`textbook_trace`, one pair recomputed equation by equation, each
  quantity with its number in the chapter, the code that computes it and its value;
- :mod:`.pinned` :func:`pinned_contexts`, the attention weights pinned one-hot on
  :math:`a^1(T)` beside the plain seq2seq of Figure 6.4 (the remark on eq. 6.10-6.11).

Luong's form (scored with the decoder's current output) is the library's
:class:`~pyplay.models.seq2seq.EncoderDecoder` with ``wiring="attention"``.
"""

from pyplay.models.textbook.pinned import (
    PinnedContexts,
    first_tap_weights,
    pinned_contexts,
    plain_seq2seq,
)
from pyplay.models.textbook.seq2seq import BOOK_CHOICES, TEXTBOOK_FORMS, TextbookSeq2Seq
from pyplay.models.textbook.trace import (
    TextbookStep,
    TextbookTrace,
    textbook_seq2seq,
    textbook_trace,
)

__all__ = [
    "BOOK_CHOICES",
    "TEXTBOOK_FORMS",
    "PinnedContexts",
    "TextbookSeq2Seq",
    "TextbookStep",
    "TextbookTrace",
    "first_tap_weights",
    "pinned_contexts",
    "plain_seq2seq",
    "textbook_seq2seq",
    "textbook_trace",
]
