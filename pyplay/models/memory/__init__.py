"""Memory-augmented recurrent nets: :class:`MemoryNet` (an LSTM controller reading and writing
an external memory by content, overwrite or residual writes, several heads, soft or hard) and
:class:`AttendRNN` (an LSTM attending to its own previous states, its read an extra input or,
the lecture's form, replacing the previous state). Both follow the protocol of
:class:`~pyplay.models.SequenceModel` (``forward``/``backward``/``params``), so
:class:`pyplay.train.Trainer` trains them on the per-step tasks."""

from pyplay.models.memory.attend_rnn import AttendCache, AttendRNN, AttendState
from pyplay.models.memory.heads import UPDATES
from pyplay.models.memory.memnet import MemoryCache, MemoryNet, MemoryState

__all__ = [
    "UPDATES",
    "AttendCache",
    "AttendRNN",
    "AttendState",
    "MemoryCache",
    "MemoryNet",
    "MemoryState",
]
