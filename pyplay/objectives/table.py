"""The table of objectives: from the ``objective`` a model's class declares
(:mod:`pyplay.models.contract`) to the factory that builds what trains it, and
:func:`make_objective`, which looks the kind up there.

Each entry is a factory ``(model, task, options) -> objective``
(:data:`~pyplay.objectives.base.Factory`) that refuses the trainer's options that do not fit
its kind and builds the objective:

==============  ==========================================================================
``objective``   factory
==============  ==========================================================================
``per_step``    :func:`~pyplay.objectives.per_step.make_per_step` (sequence, or CTC when the
                task declares it)
``seq2seq``     :func:`~pyplay.objectives.seq2seq.make_seq2seq`
``pointer``     :class:`~pyplay.objectives.pointer.PointerObjective`, no options
``lddn``        :func:`~pyplay.objectives.lddn.make_lddn`
``tree``        :class:`~pyplay.objectives.tree.TreeObjective`, no options
``glimpse``     :class:`~pyplay.objectives.glimpse.GlimpseObjective`, no options
``ram``         :class:`~pyplay.objectives.ram.RamObjective`, no options
``caption``     :class:`~pyplay.objectives.caption.CaptionObjective`, no options
==============  ==========================================================================

A kind that is not in the table (or a model that declares none) is refused with the TypeError
of :func:`~pyplay.objectives.base.not_a_model`, and so is an option given to a kind that takes
none. A new kind of model adds its objective module to this package and its entry here
(``tests/objectives/test_objectives.py`` checks that every model class's declared kind has one).
"""

from __future__ import annotations

from typing import Any

from pyplay.objectives.base import Factory, Options, batch_only, not_a_model
from pyplay.objectives.caption import CaptionObjective
from pyplay.objectives.glimpse import GlimpseObjective
from pyplay.objectives.lddn import make_lddn
from pyplay.objectives.per_step import make_per_step
from pyplay.objectives.pointer import PointerObjective
from pyplay.objectives.ram import RamObjective
from pyplay.objectives.seq2seq import make_seq2seq
from pyplay.objectives.tree import TreeObjective

__all__ = ["FACTORIES", "make_objective"]

FACTORIES: dict[str, Factory] = {
    "per_step": make_per_step,
    "seq2seq": make_seq2seq,
    "pointer": batch_only(PointerObjective),
    "lddn": make_lddn,
    "tree": batch_only(TreeObjective),
    "glimpse": batch_only(GlimpseObjective),
    "ram": batch_only(RamObjective),
    "caption": batch_only(CaptionObjective),
}


def make_objective(
    model: Any, task: Any, tbptt: bool, sampling: float, reverse_source: bool, rng: Any
) -> Any:
    """The objective that trains ``model``: the one its class declares (``objective``, see
    :mod:`pyplay.models.contract`), built by its entry of :data:`FACTORIES`; CTC when a
    per-step model meets a task that declares it (``task.objective == "ctc"``). Options that
    do not fit the model are refused."""
    kind = getattr(type(model), "objective", None)
    factory = FACTORIES.get(kind) if isinstance(kind, str) else None
    if factory is None:
        raise not_a_model(model)
    return factory(model, task, Options(tbptt, sampling, reverse_source, rng))
