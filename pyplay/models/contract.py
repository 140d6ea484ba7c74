"""The contract every pyplay model follows, and the pieces the models share to follow it.

A model (:class:`Model`) holds its parameters in ``params`` (name -> array, updated in place
by the optimisers), and

- ``forward(...)`` returns a tuple whose first item is the outputs and whose last is the cache
  (explicit: nothing is kept on the model between the two passes);
- ``backward(dout, cache, ...)`` takes d(loss)/d(outputs) first and that cache second and
  returns one :class:`Backward`: ``grads`` with the keys of ``params`` and, where the model
  computes them, ``record`` (per-step gradient norms of a recurrent stack) and ``dinputs``
  (d(loss)/d(inputs));
- ``config`` are its constructor arguments as plain data, ``from_config(config)`` rebuilds it
  (:func:`config_kwargs` refuses unknown or missing keys), ``estimate_parameters(config)`` is
  an upper estimate of its size computed from a config without building anything (how a model
  file is checked before it is loaded, :mod:`pyplay.models.registry`);
- the class attribute ``objective`` names what trains it (:data:`OBJECTIVES`, read by
  :func:`pyplay.objectives.make_objective`): ``"per_step"`` one target per input step,
  ``"seq2seq"`` a target sequence given a source, ``"pointer"`` positions of the source,
  ``"lddn"`` the mean squared error of a dynamic network over windows of a series, ``"tree"``
  the classes of the nodes of binary trees (a recursive network), ``"glimpse"`` one class per
  sequence read by soft or hard attention (hard: the score-function gradient), ``"ram"`` one
  class per image read in glimpses at chosen places (the recurrent attention model),
  ``"caption"`` a caption written while attending to an image. Each has its module in
  :mod:`pyplay.objectives` and its entry in that package's table.

:class:`ModelBase` gives ``config`` (read from the attributes named as the constructor's
arguments), ``from_config``, ``num_parameters`` and ``load_params``; :class:`PerStepBase`
adds ``for_task`` and the checks of sizes every per-step model has, :class:`Seq2SeqBase`
those of the vocabularies of a sequence-to-sequence model; :func:`config_int`,
:func:`recurrent` and :func:`blocks` are the pieces of the size estimates.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from pyplay._checks import check_array, check_choice, check_dtype, check_int
from pyplay.limits import check_parameters

__all__ = [
    "INPUT_KINDS",
    "OBJECTIVES",
    "Backward",
    "Model",
    "ModelBase",
    "PerStepBase",
    "Seq2SeqBase",
    "blocks",
    "check_model_size",
    "config_int",
    "config_kwargs",
    "constructor_args",
    "copy_params",
    "gather_params",
    "recurrent",
]

OBJECTIVES = ("per_step", "seq2seq", "pointer", "lddn", "tree", "glimpse", "ram", "caption")
INPUT_KINDS = ("tokens", "real")
_PLAIN = (str, int, float, bool, type(None))
_NOT_CONFIG = ("self", "rng", "params")  # never read from, nor written to, a config


@dataclass(frozen=True)
class Backward:
    """What :meth:`Model.backward` returns.

    grads : dict of str to ndarray
        d(loss)/d(parameter) for every key of ``params``, in the order of ``params``.
    record : dict of str to ndarray, optional
        Per-step internals of the backward pass (``backward(..., record=True)`` of a
        :class:`~pyplay.models.SequenceModel`: the norms of dL/dh_t), else None.
    dinputs : ndarray, optional
        d(loss)/d(inputs) (B, T, F), for models that compute it (memory nets, LDDN), else None.
    """

    grads: dict[str, np.ndarray]
    record: dict[str, Any] | None = None
    dinputs: np.ndarray | None = None


@runtime_checkable
class Model(Protocol):
    """The shape of every model class (see the module docstring)."""

    objective: ClassVar[str]
    params: dict[str, np.ndarray]

    @property
    def config(self) -> dict[str, Any]: ...

    @classmethod
    def from_config(cls, config: dict[str, Any], rng: Any = 0) -> Any: ...

    @classmethod
    def estimate_parameters(cls, config: Mapping[str, Any]) -> int: ...

    def forward(self, *args: Any, **kwargs: Any) -> tuple[Any, ...]: ...

    def backward(self, dout: Any, cache: Any, *args: Any, **kwargs: Any) -> Backward: ...

    def num_parameters(self) -> int: ...


def constructor_args(cls: type) -> list[str]:
    """The names of ``cls``'s constructor arguments that a config holds (all but ``rng`` and
    ``params``), in declared order."""
    signature = inspect.signature(cls.__init__)  # type: ignore[misc]
    return [
        name
        for name, p in signature.parameters.items()
        if name not in _NOT_CONFIG and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]


def _check_plain(where: str, value: Any, depth: int = 0) -> None:
    if depth > 6:
        raise ValueError(f"{where} is nested too deeply")
    if isinstance(value, _PLAIN):
        return
    if isinstance(value, list):
        if len(value) > 10_000:
            raise ValueError(f"{where} must have at most 10,000 entries, got {len(value):,}")
        for i, item in enumerate(value):
            _check_plain(f"{where}[{i}]", item, depth + 1)
        return
    if isinstance(value, dict):
        for k, item in value.items():
            if not isinstance(k, str):
                raise ValueError(f"{where} must have text keys, got {k!r}")
            _check_plain(f"{where}[{k!r}]", item, depth + 1)
        return
    raise ValueError(f"{where} must be plain data (numbers, text, lists), got {type(value)}")


def config_kwargs(cls: type, config: Any) -> dict[str, Any]:
    """Constructor keyword arguments of ``cls`` from a saved ``config``.

    Refuses (ValueError naming them) keys the constructor does not take, required keys that
    are missing and values that are not plain data; the constructor then checks each value.
    ``rng`` and ``params`` are never read from a config.
    """
    if not isinstance(config, dict):
        raise TypeError(f"config must be a dict, got {type(config).__name__}")
    signature = inspect.signature(cls.__init__)  # type: ignore[misc]
    taken = {name: signature.parameters[name] for name in constructor_args(cls)}
    unknown = sorted(str(k) for k in set(config) - set(taken))
    if unknown:
        raise ValueError(
            f"config of {cls.__name__} has unknown keys {unknown}; expected a subset of "
            f"{sorted(taken)}"
        )
    missing = sorted(n for n, p in taken.items() if p.default is p.empty and n not in config)
    if missing:
        raise ValueError(f"config of {cls.__name__} is missing the keys {missing}")
    for key, value in config.items():
        _check_plain(f"config[{key!r}]", value)
    return dict(config)


def gather_params(layers: Iterable[tuple[str, Any]]) -> dict[str, np.ndarray]:
    """The parameters of ``(prefix, layer)`` pairs as ``{"prefix.name": array}``: the layers'
    very arrays (an optimiser updating them in place updates the layers)."""
    return {
        f"{prefix}.{name}": value
        for prefix, layer in layers
        for name, value in layer.params.items()
    }


def copy_params(model: Any, params: Mapping[str, np.ndarray]) -> None:
    """Copy ``params`` into ``model.params`` in place: the same names, the same shapes, numbers
    finite before and after the cast to the model's dtype (a float64 3e48 is inf in float32).
    ValueError naming the first array that is not, and then nothing is copied."""
    missing = sorted(set(model.params) - set(params))
    extra = sorted(set(params) - set(model.params))
    if missing or extra:
        raise ValueError(
            f"the arrays do not fit the model: missing {missing[:8] or 'none'}, "
            f"unexpected {extra[:8] or 'none'}"
        )
    cast: dict[str, np.ndarray] = {}
    for name, target in model.params.items():
        value = np.asarray(params[name])
        if value.shape != target.shape:
            raise ValueError(f"array {name!r} must have shape {target.shape}, got {value.shape}")
        if value.dtype.kind not in "fiu" or not np.isfinite(value).all():
            raise ValueError(f"array {name!r} must hold finite numbers")
        with np.errstate(over="ignore", invalid="ignore"):  # checked just below, not warned
            cast[name] = value.astype(target.dtype)  # in the model's dtype
        if not np.isfinite(cast[name]).all():
            big = float(np.abs(value.astype(np.float64)).max())
            raise ValueError(
                f"array {name!r} holds numbers too large for the model's {target.dtype} "
                f"(largest magnitude {big:.3g}, at most {np.finfo(target.dtype).max:.3g})"
            )
    for name, target in model.params.items():
        target[...] = cast[name]  # in place: layers and optimisers keep their arrays


class ModelBase:
    """``config``, ``from_config``, ``num_parameters`` and ``load_params`` for a model whose
    constructor arguments are kept as attributes of the same names (``dtype`` saved by its
    name)."""

    objective: ClassVar[str]
    tbptt: ClassVar[bool] = False  # may carry its recurrent state between batches (TBPTT)
    params: dict[str, np.ndarray]
    dtype: np.dtype

    @property
    def config(self) -> dict[str, Any]:
        """Constructor arguments as plain JSON-serialisable values (for saving and sharing)."""
        return {
            name: self.dtype.name if name == "dtype" else getattr(self, name)
            for name in constructor_args(type(self))
        }

    @classmethod
    def from_config(cls, config: dict[str, Any], rng: np.random.Generator | int | None = 0) -> Any:
        """Build a model from :attr:`config` (unknown or missing keys are refused with a clear
        message; each value is checked by the constructor)."""
        build: Any = cls
        return build(rng=rng, **config_kwargs(cls, config))

    def num_parameters(self) -> int:
        """Total number of scalar parameters."""
        return int(sum(p.size for p in self.params.values()))

    def load_params(self, params: Mapping[str, np.ndarray]) -> None:
        """Copy arrays into this model's parameters by name (:func:`copy_params`)."""
        copy_params(self, params)


class Seq2SeqBase(ModelBase):
    """A model that writes a target sequence given a source, over two vocabularies whose
    ids 0, 1, 2 are PAD, BOS, EOS."""

    objective: ClassVar[str] = "seq2seq"
    src_vocab_size: int
    tgt_vocab_size: int

    def _set_vocabs(self, src_vocab_size: Any, tgt_vocab_size: Any, dtype: Any) -> None:
        """Check and keep the vocabulary sizes (at least 4: PAD, BOS, EOS and one) and dtype."""
        self.src_vocab_size = check_int("src_vocab_size", src_vocab_size, min_value=4)
        self.tgt_vocab_size = check_int("tgt_vocab_size", tgt_vocab_size, min_value=4)
        self.dtype = check_dtype("dtype", dtype)

    def _check_tgt_in(self, tgt_in: Any, B: int) -> np.ndarray:
        """``tgt_in`` (B, U) as int ids below ``tgt_vocab_size``: one row for each of the ``B``
        source sequences, at least one step (BOS); errors in the caller's terms."""
        tgt = check_array("tgt_in", tgt_in, ndim=2, kind="i", layout="(B, U)")
        if tgt.shape[0] != B:
            raise ValueError(
                f"tgt_in must have one row per source sequence: src has {B} rows, tgt_in has "
                f"{tgt.shape[0]} (shape {tgt.shape})"
            )
        if tgt.shape[1] == 0:
            raise ValueError(
                f"tgt_in must have at least one step (BOS, then the target shifted right), got "
                f"shape {tgt.shape}"
            )
        if tgt.min() < 0 or tgt.max() >= self.tgt_vocab_size:
            bad = int(tgt.min()) if tgt.min() < 0 else int(tgt.max())
            raise ValueError(
                f"tgt_in must hold token ids in 0..{self.tgt_vocab_size - 1} (tgt_vocab_size), "
                f"got {bad}"
            )
        return tgt


class PerStepBase(ModelBase):
    """A model with one output per input step, sized for a task by :meth:`for_task`."""

    objective: ClassVar[str] = "per_step"
    input_size: int
    output_size: int
    input_kind: str

    def _set_io(self, input_size: Any, output_size: Any, input_kind: Any, dtype: Any) -> None:
        """Check and keep what every per-step model has: sizes, kind of inputs, dtype."""
        self.input_size = check_int("input_size", input_size, min_value=1)
        self.output_size = check_int("output_size", output_size, min_value=1)
        self.input_kind = check_choice("input_kind", input_kind, INPUT_KINDS)
        self.dtype = check_dtype("dtype", dtype)

    @classmethod
    def for_task(cls, task: Any, *args: Any, **kwargs: Any) -> Any:
        """A model whose input and output sizes fit ``task`` (see :mod:`pyplay.tasks`).

        A task whose targets are its next inputs (``task.predicts_next_input``: the character
        model, sine and number-series prediction) is refused with ``bidirectional=True``: the
        backward direction would read the very input each step must predict.
        """
        missing = [a for a in ("input_size", "output_size", "input_kind") if not hasattr(task, a)]
        if missing:
            raise TypeError(
                "task must be a pyplay task (pyplay.tasks.make_task, with input_size, "
                f"output_size and input_kind), got {type(task).__name__} without {missing}"
            )
        both_ways = kwargs.get("bidirectional", False)
        both_ways = isinstance(both_ways, bool | np.bool_) and bool(both_ways)
        if both_ways and getattr(task, "predicts_next_input", False):
            name = getattr(task, "name", "") or type(task).__name__
            raise ValueError(
                f"bidirectional=True does not fit the task {name!r}: it predicts the next "
                "input, which the backward direction would read (the model would see each "
                "answer); use bidirectional=False"
            )
        build: Any = cls
        sizes = {"input_size": task.input_size, "output_size": task.output_size}
        return build(*args, input_kind=task.input_kind, **sizes, **kwargs)


# ------------------------------------------------------------------ size estimates
# the pieces of each class's estimate_parameters: they read a config that came from a file,
# so every number is checked before it is used
def check_model_size(cls: Any, args: Mapping[str, Any]) -> None:
    """Refuse (ValueError naming the sizes and :data:`pyplay.limits.MAX_PARAMETERS`) a model of
    class ``cls`` whose constructor arguments ``args`` describe too many parameters (its
    ``estimate_parameters``), before any of it is built. An argument the estimate cannot read
    is left to the constructor's own checks, which name it in the usual words."""
    try:
        n = cls.estimate_parameters(args)
    except (ValueError, TypeError):
        return
    names = constructor_args(cls)
    sizes = ", ".join(
        f"{k}={v:,}" for k, v in args.items() if k in names and type(v) is int and v > 1
    )
    check_parameters(f"{cls.__name__}({sizes})", n)


def config_int(config: Mapping[str, Any], key: str, default: int) -> int:
    """``config[key]`` as a non-negative integer (``default`` when absent or None)."""
    value = config.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"config[{key!r}] must be a non-negative integer, got {value!r}"[:200])
    return value


def recurrent(cell: Any, size_in: int, hidden: int, layers: int, directions: int) -> int:
    """A recurrent stack of ``layers`` layers, ``directions`` directions each:
    gates x H x (inputs + H + 2 biases) per layer and direction."""
    gates = {"lstm": 4, "gru": 3}.get(cell, 1)
    per = gates * hidden * (max(size_in, directions * hidden) + hidden + 2)
    return directions * layers * per


def blocks(D: int, F: int, layers: int, attentions: int) -> int:
    """``layers`` transformer blocks of width D, feed-forward width F and ``attentions``
    attention layers each (1 in an encoder, 2 in a decoder), with their layer norms."""
    return layers * (attentions * (4 * D * D + 6 * D) + 2 * D * F + F + 3 * D)
