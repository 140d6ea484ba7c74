"""Checkpoints as ``.npz`` files: parameters, optimiser state and settings, never pickle.

Layout of the archive:

- every parameter under its own name, PyTorch ``state_dict`` style (``"rnn.weight_ih_l0"``);
  so ``np.savez(f, **{k: v.numpy() for k, v in module.state_dict().items()})`` written by
  PyTorch loads here by name, and ``torch.from_numpy`` takes the arrays back;
- optimiser state under ``"optim/<key>"`` (scalars as 0-d arrays);
- ``"__meta__"``: a JSON document (model config, task, step, ...) stored as UTF-8 bytes;
- optionally, models kept *beside* the main one (the transformer lesson's comparison LSTM):
  ``"beside/<name>/<param>"`` and ``"beside/<name>/optim/<key>"``, their meta in
  ``meta["beside"][name]``. :func:`load` returns them as ``Checkpoint.beside[name]``;
  ``load_model(file, beside=name)`` rebuilds one.

Model files (:func:`save_model`) also name the model's class and its constructor settings,
``meta["class"]`` (a key of :data:`pyplay.models.registry.MODEL_CLASSES`) and ``meta["config"]``, so
:func:`load_model` returns a ready model in one call; files of the recurrent lesson and of
``python -m pyplay train --save`` (``meta["model"]``, a ``SequenceModel`` config) load too.
Continuing training::

    model = load_model("pyplay-model.npz")
    trainer = Trainer(model, task, lr=0.01)
    resume(trainer, load("pyplay-model.npz"))  # optimiser moments and step count

Loading reads the archive with :func:`pyplay.npz.read_npz`, never with pickle, and turns every
way a file can be wrong into one ``ValueError`` that says what the file is and what was expected.
Sizes are checked before anything of that size is read (:mod:`pyplay.limits`): the file, its
members once decompressed (a small file that unpacks to gigabytes is refused unread), the shape
each member's ``.npy`` header declares (refused before that shape is allocated), the length and
nesting of its settings, and the numbers in them. Saving writes exactly the path it is given
(``np.savez`` alone would add ``.npz``) and never what loading would refuse: :func:`save` refuses
arrays that are not numbers (an object array would be written with pickle), :func:`save_model`
a model with NaN or infinite weights.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import numpy as np

from pyplay.limits import MAX_FILE_BYTES, MAX_JSON_DEPTH, MAX_META_BYTES, json_depth
from pyplay.npz import read_npz

__all__ = [
    "Checkpoint",
    "load",
    "load_model",
    "model_checkpoint",
    "resume",
    "save",
    "save_model",
    "whole_step",
]

_META = "__meta__"
_OPTIM = "optim/"
_BESIDE = "beside/"
MAX_STEP = 10**12  # more steps than any run takes: a larger count is a corrupt file


def whole_step(step: object, what: str = "step") -> int:
    """``step`` when it is a whole number from 0 to ``MAX_STEP``; otherwise a ValueError that
    names ``what`` (a step count read from a file, or given by the caller)."""
    if isinstance(step, bool) or not isinstance(step, int) or not 0 <= step <= MAX_STEP:
        raise ValueError(f"{what} must be a whole number from 0 to {MAX_STEP:,}, got {step!r:.80}")
    return step


@dataclass(frozen=True)
class Checkpoint:
    """What :func:`load` returns."""

    params: dict[str, np.ndarray]
    optimizer_state: dict[str, Any] | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    beside: dict[str, Checkpoint] = field(default_factory=dict)


def save(
    file: str | os.PathLike[str] | BinaryIO,
    params: Mapping[str, np.ndarray],
    *,
    optimizer_state: Mapping[str, Any] | None = None,
    meta: Mapping[str, Any] | None = None,
    beside: Mapping[str, Checkpoint] | None = None,
) -> None:
    """Write ``params`` (and optionally optimiser state, a JSON-able ``meta`` and checkpoints
    of models kept ``beside`` the main one, by name) to ``file``."""
    arrays = _arrays(params, optimizer_state)
    full_meta = dict(meta or {})
    if beside:
        if "beside" in full_meta:
            raise ValueError('meta may not use the reserved key "beside" when beside is given')
        full_meta["beside"] = {}
        for name, part in beside.items():
            if not isinstance(name, str) or not name.isidentifier():
                raise ValueError(f"beside names must be identifiers, got {name!r}")
            if not isinstance(part, Checkpoint):
                raise TypeError(f"beside[{name!r}] must be a Checkpoint, got {type(part)}")
            for key, value in _arrays(part.params, part.optimizer_state).items():
                arrays[f"{_BESIDE}{name}/{key}"] = value
            full_meta["beside"][name] = part.meta
    try:
        text = json.dumps(full_meta, allow_nan=False)
    except (TypeError, ValueError) as err:
        raise ValueError(f"meta must be JSON-serialisable: {err}") from err
    arrays[_META] = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
    if isinstance(file, str | os.PathLike):
        with open(file, "wb") as handle:  # exactly this path: np.savez would add ".npz"
            np.savez(handle, **arrays)  # type: ignore[arg-type]
    else:
        np.savez(file, **arrays)  # type: ignore[arg-type]


def _arrays(
    params: Mapping[str, np.ndarray], optimizer_state: Mapping[str, Any] | None
) -> dict[str, np.ndarray]:
    arrays: dict[str, np.ndarray] = {}
    for name, value in params.items():
        if name == _META or name.startswith((_OPTIM, _BESIDE)):
            raise ValueError(f"params may not use the reserved name {name!r}")
        arrays[name] = _numbers(f"params[{name!r}]", value)
    for name, value in (optimizer_state or {}).items():
        arrays[_OPTIM + name] = _numbers(f"optimizer_state[{name!r}]", value)
    return arrays


def _numbers(what: str, value: Any) -> np.ndarray:
    """``value`` as an array of numbers; anything else (Python objects, which ``np.savez``
    would write with pickle, or text) is refused: loading would refuse it."""
    arr = np.asarray(value)
    if arr.dtype.hasobject:
        raise ValueError(
            f"{what} must be an array of numbers, got dtype {arr.dtype} (Python objects, "
            "which only pickle writes; pyplay files never use pickle)"
        )
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"{what} must be an array of numbers, got dtype {arr.dtype}")
    return arr


def _split(
    arrays: dict[str, np.ndarray], what: str
) -> tuple[dict[str, np.ndarray], dict[str, Any] | None]:
    """Parameters and optimiser state (or None) of one model's arrays."""
    optim = {k[len(_OPTIM) :]: v for k, v in arrays.items() if k.startswith(_OPTIM)}
    params = {k: v for k, v in arrays.items() if not k.startswith(_OPTIM)}
    for name, value in params.items():
        if value.dtype.kind not in "fiu":
            raise ValueError(f"{what} is not a pyplay checkpoint: {name!r} has dtype {value.dtype}")
    state: dict[str, Any] | None = None
    if optim:
        state = {k: (v.item() if v.ndim == 0 else v) for k, v in optim.items()}
    return params, state


def _beside(
    arrays: dict[str, np.ndarray], meta: dict[str, Any], what: str
) -> dict[str, Checkpoint]:
    """Removes the ``beside/`` arrays and ``meta["beside"]``; returns them as checkpoints."""
    names = [k for k in arrays if k.startswith(_BESIDE)]
    if not names and "beside" not in meta:
        return {}
    described = meta.pop("beside", None)
    if not isinstance(described, dict) or not all(isinstance(v, dict) for v in described.values()):
        raise ValueError(f"{what} is not a pyplay checkpoint: bad models beside the main one")
    grouped: dict[str, dict[str, np.ndarray]] = {name: {} for name in described}
    for key in names:
        name, _, rest = key[len(_BESIDE) :].partition("/")
        if name not in grouped or not rest:
            raise ValueError(f"{what} is not a pyplay checkpoint: stray array {key!r}")
        grouped[name][rest] = arrays.pop(key)
    parts = {}
    for name, part in grouped.items():
        params, state = _split(part, what)
        parts[name] = Checkpoint(params, state, described[name])
    return parts


def _describe(file: Any) -> str:
    if isinstance(file, str | os.PathLike):
        return repr(os.fspath(file))
    return "the file"


def _stored_size(file: Any) -> int | None:
    if isinstance(file, bytes | bytearray):
        return len(file)
    if isinstance(file, str | os.PathLike):
        return os.path.getsize(file)  # FileNotFoundError as for any missing file
    return None


def _read_meta(raw: np.ndarray, what: str) -> dict[str, Any]:
    if raw.dtype != np.uint8 or raw.ndim != 1 or raw.size > MAX_META_BYTES:
        raise ValueError(
            f"{what} is not a pyplay checkpoint: its settings must be at most "
            f"{MAX_META_BYTES:,} bytes of text, got {raw.size:,} of {raw.dtype}"
        )
    try:
        text = raw.tobytes().decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"{what} is not a pyplay checkpoint: bad settings ({err})") from err
    depth = json_depth(text)
    if depth > MAX_JSON_DEPTH:
        raise ValueError(
            f"{what} is not a pyplay checkpoint: its settings are nested {depth:,} levels "
            f"deep; at most {MAX_JSON_DEPTH} are read"
        )
    try:
        meta = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as err:
        raise ValueError(f"{what} is not a pyplay checkpoint: bad settings ({err})") from err
    except ValueError as err:  # a number too long to convert, or NaN / Infinity
        raise ValueError(
            f"{what} is not a pyplay checkpoint: bad settings (a number that is not read: "
            f"{str(err).split(';')[0]}); expected JSON settings of ordinary numbers"
        ) from err
    if not isinstance(meta, dict):
        raise ValueError(f"{what} is not a pyplay checkpoint: settings are not a mapping")
    return meta


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} in the settings")


def load(file: str | os.PathLike[str] | bytes | BinaryIO) -> Checkpoint:
    """Read a checkpoint written by :func:`save` (or a plain ``.npz`` of named arrays)."""
    source: Any = io.BytesIO(file) if isinstance(file, bytes | bytearray) else file
    what = _describe(file)
    size = _stored_size(file)
    if size is not None and size > MAX_FILE_BYTES:
        raise ValueError(
            f"{what} is not read: it is {size:,} bytes, at most {MAX_FILE_BYTES:,} are "
            "(pyplay.limits.MAX_FILE_BYTES)"
        )
    try:
        if isinstance(source, str | os.PathLike):
            with open(source, "rb") as handle:
                arrays = read_npz(handle)
        else:
            arrays = read_npz(source)
    except FileNotFoundError:
        raise
    except (ValueError, OSError) as err:
        raise ValueError(f"{what} is not a pyplay checkpoint (.npz): {err}") from err
    meta = _read_meta(arrays.pop(_META), what) if _META in arrays else {}
    beside = _beside(arrays, meta, what)
    params, state = _split(arrays, what)
    return Checkpoint(params, state, meta, beside)


def model_checkpoint(model: Any, optimizer: Any = None, step: int = 0) -> Checkpoint:
    """``model`` (any pyplay model class), its optimiser state and step count as the
    :class:`Checkpoint` that :func:`save_model` writes: meta ``{"class", "config", "step"}``."""
    from pyplay.models.registry import describe_model

    step = whole_step(step)
    entry = describe_model(model)  # TypeError for what is not a pyplay model
    state = None if optimizer is None else optimizer.state_dict()
    return Checkpoint(dict(model.params), state, {**entry, "step": step})


def save_model(
    file: str | os.PathLike[str] | BinaryIO,
    model: Any,
    *,
    optimizer: Any = None,
    step: int = 0,
    meta: Mapping[str, Any] | None = None,
    beside: Mapping[str, Checkpoint] | None = None,
) -> None:
    """Write ``model`` (any pyplay model class) so that :func:`load_model` rebuilds it.

    Parameters
    ----------
    file : path or binary file
    model : SequenceModel, EncoderDecoder, TransformerModel, TransformerSeq2Seq, MemoryNet,
        AttendRNN or LDDN
    optimizer : pyplay optimiser, optional
        Its ``state_dict()`` is saved, for :func:`resume`.
    step : int
        Steps trained so far (``trainer.step_count``).
    meta : mapping, optional
        More JSON-serialisable settings (may not use the keys "class", "config", "step").
    beside : mapping of name to Checkpoint, optional
        Models kept beside this one (:func:`model_checkpoint` of each), e.g. a comparison
        model; ``load_model(file, beside=name)`` rebuilds one.
    """
    extra = dict(meta or {})
    clash = sorted({"class", "config", "step"} & set(extra))
    if clash:
        raise ValueError(f"meta may not use the reserved keys {clash}")
    main = model_checkpoint(model, optimizer, step)
    for name, value in main.params.items():
        if not np.isfinite(value).all():  # load_model would refuse the file
            raise ValueError(
                f"model is not saved: its parameter {name!r} holds NaN or infinite values "
                "(a run that diverged?); save the model from before it"
            )
    if main.meta["class"] == "SequenceModel":
        extra.setdefault("model", main.meta["config"])  # what older readers look for
    meta = {**main.meta, **extra}
    save(file, main.params, optimizer_state=main.optimizer_state, meta=meta, beside=beside)


def model_entry(meta: Mapping[str, Any]) -> dict[str, Any]:
    """``{"class": ..., "config": ...}`` of a checkpoint's ``meta`` (a model file, or an older
    recurrent-lesson file whose ``meta["model"]`` is a ``SequenceModel`` config)."""
    if "class" in meta or "config" in meta:
        return {"class": meta.get("class"), "config": meta.get("config")}
    if isinstance(meta.get("model"), dict):
        return {"class": "SequenceModel", "config": meta["model"]}
    raise ValueError("it names no model (was it saved by pyplay's save_model or a lesson?)")


def load_model(file: str | os.PathLike[str] | bytes | BinaryIO, beside: str | None = None) -> Any:
    """The model saved in ``file``, ready to use (one call); with ``beside``, the model saved
    beside it under that name (the transformer lesson's comparison LSTM: ``"lstm"``).

    The class comes from a fixed table (:data:`pyplay.models.registry.MODEL_CLASSES`), never from a
    name in the file; the settings are checked before anything is built, the arrays must fit
    exactly. Every problem is one ``ValueError`` saying what is wrong.

    Examples
    --------
    >>> model = load_model("pyplay-model.npz")  # doctest: +SKIP
    >>> trainer = Trainer(model, task)  # doctest: +SKIP
    >>> resume(trainer, load("pyplay-model.npz"))  # doctest: +SKIP
    """
    from pyplay.models.registry import build_model

    ckpt = load(file)
    what = _describe(file)
    if beside is not None:
        if beside not in ckpt.beside:
            held = sorted(ckpt.beside) or "none"
            raise ValueError(f"{what} holds no model beside the main one named {beside!r} "
                             f"(it holds: {held})")  # fmt: skip
        ckpt = ckpt.beside[beside]
    try:
        return build_model(model_entry(ckpt.meta), ckpt.params)
    except (ValueError, TypeError) as err:
        raise ValueError(f"{what} holds no loadable pyplay model: {err}") from err


def resume(trainer: Any, checkpoint: Checkpoint) -> None:
    """Continue ``checkpoint``'s training with ``trainer`` (built around the loaded model):
    its optimiser state (when the optimiser kind matches) and step count."""
    if not isinstance(checkpoint, Checkpoint):
        raise TypeError(f"checkpoint must be a pyplay.io.Checkpoint, got {type(checkpoint)}")
    step = whole_step(checkpoint.meta.get("step", 0), "the checkpoint's step")
    if checkpoint.optimizer_state:
        trainer.optimizer.load_state_dict(checkpoint.optimizer_state)
    trainer.step_count = step
