"""Checkpoints as ``.npz`` files: parameters, optimiser state and settings, never pickle.

Layout of the archive:

- every parameter under its own name, PyTorch ``state_dict`` style (``"rnn.weight_ih_l0"``);
  so ``np.savez(f, **{k: v.numpy() for k, v in module.state_dict().items()})`` written by
  PyTorch loads here by name, and ``torch.from_numpy`` takes the arrays back;
- optimiser state under ``"optim/<key>"`` (scalars as 0-d arrays);
- ``"__meta__"``: a JSON document (model config, task, step, ...) stored as UTF-8 bytes.

Loading uses ``np.load(..., allow_pickle=False)`` and turns every way a file can be wrong into
one ``ValueError`` that says so.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import numpy as np

__all__ = ["Checkpoint", "load", "save"]

_META = "__meta__"
_OPTIM = "optim/"


@dataclass(frozen=True)
class Checkpoint:
    """What :func:`load` returns."""

    params: dict[str, np.ndarray]
    optimizer_state: dict[str, Any] | None = None
    meta: dict[str, Any] = field(default_factory=dict)


def save(
    file: str | os.PathLike[str] | BinaryIO,
    params: Mapping[str, np.ndarray],
    *,
    optimizer_state: Mapping[str, Any] | None = None,
    meta: Mapping[str, Any] | None = None,
) -> None:
    """Write ``params`` (and optionally optimiser state and a JSON-able ``meta``) to ``file``."""
    arrays: dict[str, np.ndarray] = {}
    for name, value in params.items():
        if name == _META or name.startswith(_OPTIM):
            raise ValueError(f"params may not use the reserved name {name!r}")
        arrays[name] = np.asarray(value)
    for name, value in (optimizer_state or {}).items():
        arrays[_OPTIM + name] = np.asarray(value)
    try:
        text = json.dumps(dict(meta or {}), allow_nan=False)
    except (TypeError, ValueError) as err:
        raise ValueError(f"meta must be JSON-serialisable: {err}") from err
    arrays[_META] = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
    np.savez(file, **arrays)  # type: ignore[arg-type]


def _describe(file: Any) -> str:
    if isinstance(file, str | os.PathLike):
        return repr(os.fspath(file))
    return "the file"


def load(file: str | os.PathLike[str] | bytes | BinaryIO) -> Checkpoint:
    """Read a checkpoint written by :func:`save` (or a plain ``.npz`` of named arrays)."""
    source: Any = io.BytesIO(file) if isinstance(file, bytes | bytearray) else file
    what = _describe(file)
    try:
        with np.load(source, allow_pickle=False) as archive:
            if not isinstance(archive, np.lib.npyio.NpzFile):
                raise ValueError("it holds a single array, not a named archive (.npz)")
            arrays = {name: archive[name] for name in archive.files}
    except FileNotFoundError:
        raise
    except (ValueError, OSError, EOFError, zipfile.BadZipFile, KeyError) as err:
        raise ValueError(f"{what} is not a pyplay checkpoint (.npz): {err}") from err
    meta: dict[str, Any] = {}
    if _META in arrays:
        try:
            meta = json.loads(arrays.pop(_META).tobytes().decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            raise ValueError(f"{what} is not a pyplay checkpoint: bad settings ({err})") from err
        if not isinstance(meta, dict):
            raise ValueError(f"{what} is not a pyplay checkpoint: settings are not a mapping")
    optim = {k[len(_OPTIM) :]: v for k, v in arrays.items() if k.startswith(_OPTIM)}
    params = {k: v for k, v in arrays.items() if not k.startswith(_OPTIM)}
    for name, value in params.items():
        if value.dtype.kind not in "fiu":
            raise ValueError(f"{what} is not a pyplay checkpoint: {name!r} has dtype {value.dtype}")
    state: dict[str, Any] | None = None
    if optim:
        state = {k: (v.item() if v.ndim == 0 else v) for k, v in optim.items()}
    return Checkpoint(params, state, meta)
