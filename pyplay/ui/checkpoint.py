"""Lesson files: a lesson's model, optimiser, step count, settings and loss curve in one
``.npz`` (:func:`pyplay.io.save_model` layout), and loading one back, all or nothing.

Every lesson state with a trainable model mixes in :class:`SavableLesson`, which gives it

- ``save_bytes() -> io.BytesIO``: the model's arrays, the optimiser state, and in the meta
  the model's class and config (so :func:`pyplay.io.load_model` reads the file natively), the
  step count, ``"lesson"`` (a key of :data:`~pyplay.ui.urlstate.LESSON_SPECS`), the
  lesson's settings and the loss history;
- ``load_bytes(data) -> bool``: every check first (size, archive, lesson, settings, model
  class and config, array names and shapes, optimiser state, history); on any problem a
  "Not loaded: ..." message and ``False``, with the model, the settings and the history as
  they were; on success the settings, model, optimiser, step count and history of the file.

A state provides the hooks ``_file_model()``, ``_file_optimizer()``, ``_file_step()`` and
``_file_prepare(model, loaded)``, and ``_file_beside()`` for models kept beside its own (which
``_file_prepare`` finds in ``loaded.checkpoint.beside``); states trained by a
:class:`~pyplay.train.Trainer` get the first four from
:class:`pyplay.ui.trainer_lesson.TrainerLesson` given ``_make_task()``, ``_build_model(task)``
and ``_make_trainer(model, task)``. Rebuild watchers
must check ``self._loading``.
"""

from __future__ import annotations

import io
import math
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay.io import Checkpoint, load, model_entry, save_model, whole_step
from pyplay.ui.lessons import spec_of
from pyplay.ui.urlstate import LESSON_SPECS, MAX_TEXT_CHARS

__all__ = [
    "MAX_FILE_BYTES",
    "LoadedFile",
    "SavableLesson",
    "same_model",
    "settings_names",
]

MAX_FILE_BYTES = 50_000_000  # compressed or not
MAX_HISTORY = 1_000_000


def settings_names(lesson: str) -> tuple[str, ...]:
    """The settings a file of ``lesson`` carries."""
    return tuple(LESSON_SPECS[lesson].params)


def _title(lesson: Any) -> str:
    if isinstance(lesson, str) and lesson in LESSON_SPECS:
        return LESSON_SPECS[lesson].title
    return repr(lesson)[:40]


@dataclass(frozen=True)
class LoadedFile:
    """A checked lesson file: its settings (those it carries), the rebuilt model, optimiser
    state (or None), step count, loss history and the raw checkpoint."""

    settings: dict[str, Any]
    model: Any
    optimizer_state: dict[str, Any] | None
    step: int
    history: dict[str, list[float]] | None
    checkpoint: Checkpoint
    native: bool = False  # no "lesson" in the file: saved natively or by an older page


# ------------------------------------------------------------------ checks
def _check_archive(data: Any) -> bytes:
    if not isinstance(data, bytes | bytearray | memoryview):
        raise ValueError(f"expected the bytes of an .npz file, got {type(data).__name__}")
    data = bytes(data)
    if len(data) > MAX_FILE_BYTES:
        raise ValueError(
            f"the file must be at most {MAX_FILE_BYTES // 1_000_000} MB, got "
            f"{len(data) / 1_000_000:,.1f} MB"
        )
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            entries = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError):
        raise ValueError("this is not a model file (.npz): it is not a zip archive") from None
    unpacked = sum(e.file_size for e in entries)
    if len(entries) > 10_000 or unpacked > 4 * MAX_FILE_BYTES:
        raise ValueError(
            f"the archive unpacks to {unpacked / 1_000_000:,.0f} MB in {len(entries):,} "
            "arrays, too much for a model file"
        )
    return data


def _check_value(lesson: str, state: Any, name: str, value: Any) -> Any:
    """``value`` if it suits setting ``name`` (type, allowed values, bounds), else ValueError."""
    p = state.param[name]
    kind = type(p).__name__
    if kind == "Boolean":
        ok = isinstance(value, bool)
    elif kind == "Integer":
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif kind == "Number":
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        ok = ok and math.isfinite(value)
    elif kind == "String":  # as the address takes it (the lesson checks what it means)
        ok = isinstance(value, str) and len(value) <= MAX_TEXT_CHARS and value.isprintable()
    else:
        objects = list(getattr(p, "objects", []))
        ok = not isinstance(value, bool) and value in objects  # True == 1: not a head count
    if ok and kind in ("Integer", "Number"):
        low, high = p.get_soft_bounds()  # the parameter's range (the page's slider)
        ok = (low is None or value >= low) and (high is None or value <= high)
    if not ok:
        raise ValueError(f"the setting {name} has a value this lesson cannot use: {value!r}"[:200])
    return value


def _read_settings(lesson: str, state: Any, raw: Any) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise ValueError("its settings are not a mapping")
    names = settings_names(lesson)
    unknown = sorted(str(k) for k in set(raw) - set(names))
    if unknown:
        raise ValueError(f"its settings have unknown keys {unknown[:8]}")
    return {name: _check_value(lesson, state, name, raw[name]) for name in names if name in raw}


def _encode_history(history: dict[str, list[float]]) -> dict[str, list[float | None]]:
    def plain(v: float) -> float | None:
        if isinstance(v, int | np.integer):
            return int(v)  # step numbers stay whole
        return float(v) if math.isfinite(v) else None  # JSON has no NaN

    return {k: [plain(v) for v in vs] for k, vs in history.items()}


def _read_history(raw: Any, keys: set[str]) -> dict[str, list[float]]:
    if not isinstance(raw, dict) or set(raw) != keys:
        raise ValueError(f"its loss history must have the columns {sorted(keys)}")
    lengths = {len(v) if isinstance(v, list) else -1 for v in raw.values()}
    if len(lengths) != 1 or -1 in lengths or lengths.pop() > MAX_HISTORY:
        raise ValueError("its loss history columns must be lists of the same length")
    history: dict[str, list[float]] = {}
    for key, values in raw.items():
        if not all(v is None or (isinstance(v, int | float) and not isinstance(v, bool))
                   for v in values):  # fmt: skip
            raise ValueError(f"its loss history column {key!r} must hold numbers")
        history[key] = [math.nan if v is None else v if isinstance(v, int) else float(v)
                        for v in values]  # fmt: skip
    return history


def same_model(model: Any, reference: Any) -> None:
    """ValueError unless ``model`` is what the lesson builds from its settings."""
    if type(model) is not type(reference):
        raise ValueError(
            f"its model is a {type(model).__name__}; with these settings the lesson trains a "
            f"{type(reference).__name__}"
        )
    mine, theirs = model.config, reference.config
    diff = [k for k in sorted(set(mine) | set(theirs)) if mine.get(k) != theirs.get(k)]
    if diff:
        shown = ", ".join(f"{k} {mine.get(k)!r} (lesson: {theirs.get(k)!r})" for k in diff[:4])
        raise ValueError(f"its model does not fit the lesson's settings: {shown}"[:400])


# ------------------------------------------------------------------ the mixin
class SavableLesson:
    """``save_bytes`` and ``load_bytes`` for a lesson state (see the module docstring)."""

    _loading = False
    _model_settings: dict[str, Any] | None = None  # the settings the model was built with
    history: dict[str, list[float]]
    _elapsed: float
    # from LessonBase (annotations only: the MRO must find its parameters and methods)
    running: bool
    version: int
    replacing: int
    status: str
    notify: Callable[..., None]
    _record: Callable[[int, float, float], None]
    steps_per_second: Callable[[int], float]

    # hooks --------------------------------------------------------------
    def _file_model(self) -> Any:
        raise NotImplementedError

    def _file_optimizer(self) -> Any:
        raise NotImplementedError

    def _file_step(self) -> int:
        raise NotImplementedError

    def _file_prepare(self, loaded: LoadedFile) -> Callable[[], None]:
        """With the file's settings in place: build what the model needs (raising ValueError
        or TypeError when it cannot) and return the function that puts it all in use."""
        raise NotImplementedError

    def _file_meta(self) -> dict[str, Any]:
        """More JSON-able facts for the file's meta (none by default)."""
        return {}

    def _file_beside(self) -> dict[str, Checkpoint]:
        """Models saved beside the lesson's model (:func:`pyplay.io.model_checkpoint` of
        each, by name): none by default."""
        return {}

    def _file_settings(self, ckpt: Checkpoint, model: Any) -> dict[str, Any]:
        """The settings of a file without ``"lesson"`` (a native model file): by default
        none, so the model must fit the current settings."""
        return {}

    @property
    def lesson_key(self) -> str:
        """The key of this state's lesson, from its spec (:data:`pyplay.ui.lessons.LESSONS`)."""
        return spec_of(type(self)).key

    # ------------------------------------------------------------------
    def _quiet(self, action: Callable[[], Any]) -> Callable[..., None]:
        """A watcher calling ``action`` except while a file's settings are being applied."""

        def watcher(*_: Any) -> None:
            if not self._loading:
                action()

        return watcher

    def _set_quietly(self, values: dict[str, Any]) -> None:
        self._loading = True
        try:
            self.param.update(**values)
        finally:
            self._loading = False

    def _remember_settings(self) -> None:
        """The current settings are the model's (after a build, a load or new training
        settings): files saved later carry them even once the settings change."""
        self._model_settings = {k: getattr(self, k) for k in settings_names(self.lesson_key)}

    def _keep_before_replacing(self) -> None:
        """A new model is about to replace this one: if it has trained, say so
        (``replacing``), and autosave keeps it (:meth:`save_bytes` still gives it, with the
        settings it was built with)."""
        try:
            trained = int(self._file_step()) > 0
        except (AttributeError, ValueError, TypeError):
            trained = False
        if trained:
            self.replacing += 1

    def save_bytes(self) -> io.BytesIO:
        """The model, optimiser state, step count, settings (those the model was built
        with) and loss history as an ``.npz`` file in memory (:func:`pyplay.io.load_model`
        reads its model natively)."""
        lesson = self.lesson_key
        settings = {k: getattr(self, k) for k in settings_names(lesson)}
        settings.update(self._model_settings or {})
        buf = io.BytesIO()
        save_model(
            buf,
            self._file_model(),
            optimizer=self._file_optimizer(),
            step=int(self._file_step()),
            meta={
                "lesson": lesson,
                "settings": settings,
                "history": _encode_history(self.history),
                **self._file_meta(),
            },
            beside=self._file_beside(),
        )
        buf.seek(0)
        return buf

    def read_file(self, data: Any) -> LoadedFile:
        """Check ``data`` as a file of this lesson (ValueError saying what is wrong)."""
        ckpt = load(_check_archive(data))
        meta = ckpt.meta
        lesson = meta.get("lesson")
        if lesson is not None and lesson != self.lesson_key:
            raise ValueError(
                f"this file is a model of the {_title(lesson)} lesson, not of the "
                f"{_title(self.lesson_key)} lesson"
            )
        # imported here, not with this module: a lesson reads a file only when asked, and the
        # registry imports every model class (the page's first lesson needs one); importing
        # pyplay.dynamic registers the LDDN, so every lesson's file reader knows it
        import pyplay.dynamic  # noqa: F401
        from pyplay.models.registry import build_model

        model = build_model(model_entry(meta), ckpt.params)
        if lesson is None:
            settings = _read_settings(self.lesson_key, self, self._file_settings(ckpt, model))
        else:
            settings = _read_settings(self.lesson_key, self, meta.get("settings"))
        step = whole_step(meta.get("step", 0), "its step count")
        history = None
        if "history" in meta:
            history = _read_history(meta["history"], set(self.history))
        return LoadedFile(
            settings, model, ckpt.optimizer_state, step, history, ckpt, native=lesson is None
        )

    def load_bytes(self, data: bytes) -> bool:
        """Load a file saved by :meth:`save_bytes` (or a native model file that fits this
        lesson). All or nothing: on a problem, a message and ``False``."""
        try:
            loaded = self.read_file(data)
        except (ValueError, TypeError, KeyError) as err:
            self.notify(f"Not loaded: {err}", "danger")
            return False
        previous = {k: getattr(self, k) for k in loaded.settings}
        try:
            self._set_quietly(loaded.settings)
            commit = self._file_prepare(loaded)
        except (ValueError, TypeError, KeyError) as err:
            self._set_quietly(previous)
            self.notify(f"Not loaded: {err}", "danger")
            return False
        self.running = False
        self._keep_before_replacing()
        commit()
        self._remember_settings()
        keys = list(self.history)
        self.history = loaded.history or {k: [] for k in keys}
        self._elapsed = 0.0
        self.version += 1
        self.status = self._status_text()
        n = int(sum(np.asarray(v).size for v in loaded.model.params.values()))
        self.notify(
            f"Loaded: {type(loaded.model).__name__} with {n:,} parameters, trained for "
            f"{loaded.step:,} steps.",
            "success",
        )
        return True
