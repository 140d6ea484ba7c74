"""The models: whole networks built from :mod:`pyplay.nn` layers, each trained by
:class:`pyplay.train.Trainer`.

- :mod:`.contract` what every model class follows (``params``, ``forward`` with an explicit
  cache, ``backward(dout, cache) -> Backward``, ``config``/``from_config``, a size estimate,
  the declared ``objective``), and the pieces the classes share to follow it;
- :mod:`.sequence` one output per input step: :class:`SequenceModel` (RNN/GRU/LSTM stacks);
- :mod:`.seq2seq` the recurrent encoder-decoder with its Luong and Bahdanau wirings;
- :mod:`.transformer` the decoder-only :class:`TransformerModel` and :class:`TransformerSeq2Seq`;
- :mod:`.pointer` the pointer network; :mod:`.memory` networks with an external memory;
- :mod:`.recursive` the recursive network over binary trees (:class:`RecursiveNet`);
- :mod:`.glimpse` soft and hard attention on one glimpse (:class:`GlimpseNet`);
- :mod:`.registry` the model classes a file may name, and how one is rebuilt from a file.

Each class below is imported when first asked for (:mod:`pyplay._lazy`):
``from pyplay.models import SequenceModel`` imports :mod:`.sequence` and its layers only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyplay._lazy import lazy_names

if TYPE_CHECKING:
    from pyplay.models.glimpse import GlimpseNet
    from pyplay.models.memory import AttendRNN, MemoryNet
    from pyplay.models.pointer import PointerNetwork
    from pyplay.models.recursive import RecursiveNet
    from pyplay.models.seq2seq import EncoderDecoder
    from pyplay.models.sequence import SequenceModel
    from pyplay.models.transformer import TransformerModel, TransformerSeq2Seq

# each name -> the module that defines it
HOMES = {
    "AttendRNN": "pyplay.models.memory",
    "EncoderDecoder": "pyplay.models.seq2seq",
    "GlimpseNet": "pyplay.models.glimpse",
    "MemoryNet": "pyplay.models.memory",
    "PointerNetwork": "pyplay.models.pointer",
    "RecursiveNet": "pyplay.models.recursive",
    "SequenceModel": "pyplay.models.sequence",
    "TransformerModel": "pyplay.models.transformer",
    "TransformerSeq2Seq": "pyplay.models.transformer",
}

__all__ = [
    "AttendRNN",
    "EncoderDecoder",
    "GlimpseNet",
    "MemoryNet",
    "PointerNetwork",
    "RecursiveNet",
    "SequenceModel",
    "TransformerModel",
    "TransformerSeq2Seq",
]

__getattr__, __dir__ = lazy_names(__name__, HOMES, globals())
