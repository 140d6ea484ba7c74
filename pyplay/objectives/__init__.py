"""What one training step computes, for each kind of model: the strategies of
:class:`~pyplay.train.Trainer`, chosen by :func:`make_objective` from the ``objective`` the
model's class declares (:mod:`pyplay.models.contract`), never from the class itself, through
the table :data:`FACTORIES` (:mod:`.table`). Those that carry nothing from one batch to the
next build on :class:`~pyplay.objectives.base.BatchObjective` (:mod:`.base`).

:class:`SequenceObjective` (:mod:`.per_step`)
    A :class:`~pyplay.models.SequenceModel` or a causal
    :class:`~pyplay.models.transformer.lm.TransformerModel` on a per-step task (masked cross-entropy
    or MSE), optionally (recurrent models) with truncated BPTT over a text stream.
:class:`CTCObjective` (:mod:`.per_step`)
    A :class:`~pyplay.models.SequenceModel` reading frames, trained with the CTC loss on a task
    whose batches give label sequences and which declares ``objective = "ctc"``
    (:class:`~pyplay.tasks.ctc_frames.CTCFrames`).
:class:`Seq2SeqObjective` (:mod:`.seq2seq`)
    An :class:`~pyplay.models.seq2seq.EncoderDecoder` or a
    :class:`~pyplay.models.transformer.seq2seq.TransformerSeq2Seq` on a pair task: masked
    cross-entropy of the target given the source, with teacher forcing, optional *scheduled
    sampling* and optional source reversal.
:class:`PointerObjective` (:mod:`.pointer`)
    A :class:`~pyplay.models.pointer.PointerNetwork` on a pair task whose targets are source
    positions: cross-entropy of the positions, with teacher forcing.
:class:`LDDNObjective` (:mod:`.lddn`)
    An :class:`~pyplay.dynamic.LDDN` on :class:`Windows` of a series: the mean squared error.
:class:`TreeObjective` (:mod:`.tree`)
    A :class:`~pyplay.models.recursive.RecursiveNet` on a tree task: cross-entropy of the
    classes of the trees' labelled nodes.
:class:`GlimpseObjective` (:mod:`.glimpse`)
    A :class:`~pyplay.models.glimpse.GlimpseNet` on a glimpse task: cross-entropy, and for hard
    attention the score-function (REINFORCE) term with a running-mean baseline.
:class:`RamObjective` (:mod:`.ram`)
    A :class:`~pyplay.models.ram.RecurrentAttention` on an image task: the hybrid of the
    cross-entropy, REINFORCE for the glimpse locations and the learned baseline's error.
:class:`CaptionObjective` (:mod:`.caption`)
    A :class:`~pyplay.models.captioner.Captioner` on captioned scenes: teacher-forced
    cross-entropy of the words, with the hard model's running-mean baseline.

The package sits above the models, tasks, losses and decoders it uses, and imports nothing of
:mod:`pyplay.dynamic` (which imports :class:`Windows` and :class:`LDDNObjective` from here) nor
of :mod:`pyplay.train` (which imports :func:`make_objective`).
"""

from pyplay.objectives.base import BatchObjective, Factory, Options
from pyplay.objectives.caption import CaptionObjective
from pyplay.objectives.glimpse import GlimpseObjective
from pyplay.objectives.lddn import LDDNObjective, WindowBatch, Windows
from pyplay.objectives.per_step import CTCObjective, SequenceObjective, row_losses, task_loss
from pyplay.objectives.pointer import PointerObjective
from pyplay.objectives.ram import RamObjective
from pyplay.objectives.seq2seq import Seq2SeqObjective, reverse_sources
from pyplay.objectives.table import FACTORIES, make_objective
from pyplay.objectives.tree import TreeObjective

__all__ = [
    "FACTORIES",
    "BatchObjective",
    "CTCObjective",
    "CaptionObjective",
    "Factory",
    "GlimpseObjective",
    "LDDNObjective",
    "Options",
    "PointerObjective",
    "RamObjective",
    "Seq2SeqObjective",
    "SequenceObjective",
    "TreeObjective",
    "WindowBatch",
    "Windows",
    "make_objective",
    "reverse_sources",  # lives in pyplay.tasks.pairs; named here for the page's imports
    "row_losses",
    "task_loss",
]
