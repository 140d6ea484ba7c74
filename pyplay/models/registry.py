"""The model classes a checkpoint may name, and how one is rebuilt from a file.

A model file (see :func:`pyplay.io.save_model`) records its model as
``{"class": key, "config": {...}}``: ``key`` is the name of one of the classes of
:data:`REGISTERED`, a fixed list written here (:data:`MODEL_CLASSES` maps the names to the
classes), and ``config`` the constructor arguments (each class's ``config`` property). A package
above the models adds its own classes when it is imported, by code (:func:`register`):
:mod:`pyplay.dynamic` its :class:`~pyplay.dynamic.LDDN`, which :data:`PROVIDED_BY` names so that
a file of one read before that import says which package to import.
Loading never imports a name read from a file: the key only selects a class of the list. Files
of the textbook lesson's earlier model (``"LuongSeq2Seq"``) load as the :class:`EncoderDecoder`
they were, their config converted (:mod:`pyplay.models.seq2seq.earlier`).

Before a model is built its size is estimated from the config (each class's
``estimate_parameters``, :mod:`pyplay.models.contract`): a config describing far more
parameters than the file holds, or more than :data:`pyplay.limits.MAX_PARAMETERS`, is refused,
so a small corrupt file cannot make the loader allocate gigabytes (and every array the
constructor then makes is checked against :data:`pyplay.limits.MAX_ELEMENTS` first).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from pyplay import limits
from pyplay.models.captioner import Captioner
from pyplay.models.contract import Model, config_kwargs, copy_params
from pyplay.models.glimpse import GlimpseNet
from pyplay.models.memory import AttendRNN, MemoryNet
from pyplay.models.pointer import PointerNetwork
from pyplay.models.ram import RecurrentAttention
from pyplay.models.recursive import RecursiveNet
from pyplay.models.seq2seq import EncoderDecoder
from pyplay.models.seq2seq.earlier import earlier_entry
from pyplay.models.sequence import SequenceModel
from pyplay.models.textbook import TextbookSeq2Seq
from pyplay.models.transformer import TransformerModel, TransformerSeq2Seq

__all__ = [
    "MODEL_CLASSES",
    "PROVIDED_BY",
    "REGISTERED",
    "build_model",
    "config_kwargs",
    "copy_params",
    "describe_model",
    "estimate_parameters",
    "model_class",
    "register",
]

# the classes a file may name: a fixed list, never extended from a file
REGISTERED: list[type[Model]] = [
    SequenceModel,
    EncoderDecoder,
    TransformerModel,
    TransformerSeq2Seq,
    MemoryNet,
    AttendRNN,
    TextbookSeq2Seq,
    PointerNetwork,
    RecursiveNet,
    GlimpseNet,
    Captioner,
    RecurrentAttention,
]
PROVIDED_BY = {"LDDN": "pyplay.dynamic"}  # classes registered by a package above the models
MODEL_CLASSES: dict[str, type[Model]] = {cls.__name__: cls for cls in REGISTERED}  # key: class name
_SLACK, _FLOOR = 4, 1_000_000  # a config may describe at most max(4 x the file, 1e6) numbers


def register(cls: type[Model]) -> type[Model]:
    """Add ``cls`` to :data:`REGISTERED` under its name (a package above the models calls this
    for its own classes when imported); registering the same class again changes nothing.

    Raises
    ------
    TypeError
        ``cls`` is not a model class (``config``, ``from_config``, ``estimate_parameters``,
        ``objective``).
    ValueError
        Another class is registered under the same name.
    """
    needed = ("config", "from_config", "estimate_parameters", "objective")
    if not isinstance(cls, type) or not all(hasattr(cls, a) for a in needed):
        raise TypeError(f"cls must be a model class with {', '.join(needed)}, got {cls!r}")
    held = MODEL_CLASSES.get(cls.__name__)
    if held is not None and held is not cls:
        raise ValueError(f"another class is registered as {cls.__name__!r}: {held!r}")
    if held is None:
        REGISTERED.append(cls)
        MODEL_CLASSES[cls.__name__] = cls
    return cls


def model_class(key: Any) -> type[Model]:
    """The class registered under ``key`` (ValueError naming the allowed keys otherwise; for a
    class of :data:`PROVIDED_BY` not registered yet, the package to import)."""
    if isinstance(key, str) and key not in MODEL_CLASSES and key in PROVIDED_BY:
        raise ValueError(
            f"the model class {key} is registered by {PROVIDED_BY[key]}: import "
            f"{PROVIDED_BY[key]} before loading this file"
        )
    if not isinstance(key, str) or key not in MODEL_CLASSES:
        raise ValueError(
            f"the model class must be one of {', '.join(MODEL_CLASSES)}, got {key!r}"[:300]
        )
    return MODEL_CLASSES[key]


def describe_model(model: Any) -> dict[str, Any]:
    """``{"class": key, "config": model.config}`` for a model of a registered class."""
    if type(model) in REGISTERED:
        return {"class": type(model).__name__, "config": model.config}
    raise TypeError(
        f"model must be one of pyplay's model classes ({', '.join(MODEL_CLASSES)}), "
        f"got {type(model).__name__}"
    )


def estimate_parameters(key: str, config: Mapping[str, Any]) -> int:
    """An upper estimate of the number of parameters ``config`` describes, computed without
    building the model (within a small factor of the true count)."""
    return int(model_class(key).estimate_parameters(config))


def build_model(entry: Any, params: Mapping[str, np.ndarray]) -> Any:
    """The model ``entry`` (``{"class": key, "config": {...}}``) describes, with ``params``
    copied in. ValueError/TypeError saying what is wrong: an unknown class, a bad config, a
    config much larger than the arrays, arrays that do not fit."""
    if not isinstance(entry, dict) or set(entry) != {"class", "config"}:
        raise ValueError('the model entry must be {"class": ..., "config": {...}}')
    entry = earlier_entry(entry)  # the textbook lesson's earlier model: an EncoderDecoder
    cls = model_class(entry["class"])
    config = entry["config"]
    if not isinstance(config, dict):
        raise ValueError(f"the model config must be a mapping, got {type(config).__name__}")
    held = int(sum(np.asarray(v).size for v in params.values()))
    described = estimate_parameters(entry["class"], config)
    if described > limits.MAX_PARAMETERS:
        raise ValueError(
            f"the model config describes about {described:,} parameters; at most "
            f"{limits.MAX_PARAMETERS:,} are allowed in one model (pyplay.limits.MAX_PARAMETERS)"
        )
    if described > max(_SLACK * held, _FLOOR):
        raise ValueError(
            f"the model config describes about {described:,} parameters but the file holds "
            f"only {held:,} numbers"
        )
    model = cls.from_config(config)
    copy_params(model, params)
    return model
