"""Take a lesson out of the page: "show as code" and the metrics as CSV.

:func:`as_code` writes a short Python script that rebuilds the lesson's current setup with
pyplay natively (the task, the model, the trainer settings, the seed) and trains it, for every
lesson with a model (:data:`CODE_LESSONS`): each lesson's ``code.py`` writes its script, those
trained by a ``Trainer`` with the parts here (:func:`trainer_script`), the two trained by
``pyplay.dynamic.fit`` with :mod:`pyplay.ui.export_dynamic`. For the recurrent models
(``SequenceModel``: the recurrent and CTC lessons) it also saves the model as an ``.npz``
checkpoint and builds the same network in PyTorch with the weights loaded from that file by name
(:mod:`pyplay.ui.export_torch`), printing how far the two outputs are apart. :func:`metrics_csv`
turns a lesson's ``history`` into CSV text.

Every value placed in the code is checked (plain numbers, strings, booleans, None and lists of
them; class and module names from pyplay only) and written with ``repr``: nothing the learner
typed can become code.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pyplay.ui.code_values import call_lines, identifier, keyword_args, literal
from pyplay.ui.export_torch import torch_part
from pyplay.ui.lessons import LESSONS, SPECS

__all__ = [
    "CODE_LESSONS",
    "EMBED_LIMIT",
    "as_code",
    "metrics_csv",
    "recurrent_parts",
    "require_model",
    "sequence_model_lines",
    "trainer_code",
    "trainer_lines",
    "trainer_script",
]

EMBED_LIMIT = 20_000  # characters of the learner's data written into the script itself
_MODULE = re.compile(r"pyplay(\.[A-Za-z_][A-Za-z0-9_]*)+")
CODE_LESSONS = tuple(spec.key for spec in LESSONS if spec.code)  # every lesson with a model


# ------------------------------------------------------------------ the parts of the script
def task_parts(state: Any) -> tuple[list[str], list[str], list[str]]:
    """Imports, data constants and the line building the task (its class and arguments)."""
    task = state.task_obj
    cls = type(task)
    module, name = cls.__module__, identifier(cls.__name__, "the task class")
    if not _MODULE.fullmatch(module):
        raise ValueError(f"the task must come from pyplay, got module {module!r}")
    imports = [f"from {module} import {name}"]
    constants: list[str] = []
    args = []
    for key, value in task.config.items():
        key = identifier(key, "a task setting")
        if isinstance(value, str | list | tuple) and len(value) > 200:  # the learner's data
            const = f"DATA_{key.upper()}"
            size = len(value) if isinstance(value, str) else len(literal(value, key))
            if size <= EMBED_LIMIT:
                constants.append(f"{const} = {literal(value, f'the task setting {key}')}")
            elif isinstance(value, str):
                constants.append(
                    f'{const} = Path("my_{key}.txt").read_text(encoding="utf-8")'
                    "  # your data, too long to write here: save it in that file"
                )
            else:
                constants.append(
                    f'{const} = np.loadtxt("my_{key}.txt").tolist()'
                    "  # your numbers, too many to write here: one per line in that file"
                )
            args.append(f"{key}={const}")
        else:
            args.append(f"{key}={literal(value, f'the task setting {key}')}")
    args.append("rng=SEED")
    return imports, constants, call_lines(f"task = {name}", args)


def sequence_model_lines(state: Any, model: Any = None) -> list[str]:
    config = (state.model if model is None else model).config
    extra = {k: config[k] for k in ("hidden_size", "num_layers", "bidirectional")}
    if config["cell"] == "rnn":
        extra["nonlinearity"] = config["nonlinearity"]
    if config["dropout"]:
        extra["dropout"] = config["dropout"]
    # the LSTM variants, GNMT's residual stack, the feed-forward layers before it and the
    # time delay (the CTC lesson): written when not the default
    defaults = {
        "peephole": False, "forget_gate": True, "forget_bias": 0.0, "residual": False,
        "feedforward_layers": 0, "delay": 0,
    }  # fmt: skip
    extra |= {k: config[k] for k, v in defaults.items() if config.get(k, v) != v}
    if config["embedding_dim"] != config["hidden_size"] and config["input_kind"] == "tokens":
        extra["embedding_dim"] = config["embedding_dim"]
    if config["dtype"] != "float32":
        extra["dtype"] = config["dtype"]
    args = [
        "task",
        literal(config["cell"], "cell"),
        *keyword_args(extra, "model setting"),
        "rng=SEED",
    ]
    return call_lines("model = SequenceModel.for_task", args)


def trainer_lines(
    state: Any,
    extra: Mapping[str, Any],
    seeded: bool = False,
    variables: tuple[str, str, str] = ("trainer", "model", "task"),
) -> list[str]:
    """The line building ``state.trainer``'s twin: ``trainer = Trainer(model, task, ...)``,
    or with ``variables`` another trainer's, model's and task's names."""
    from pyplay.train import OPTIMIZERS

    trainer = state.trainer
    names = [k for k, cls in OPTIMIZERS.items() if type(trainer.optimizer) is cls]
    if not names:
        raise ValueError(f"unknown optimiser {type(trainer.optimizer).__name__}")
    settings: dict[str, Any] = {"optimizer": names[0], "lr": float(trainer.optimizer.lr)}
    settings.update(batch_size=trainer.batch_size, clip=trainer.clip, **extra)
    trainer, model, task = (identifier(n, "a variable") for n in variables)
    args = [model, task, *keyword_args(settings, "trainer setting")]
    return call_lines(f"{trainer} = Trainer", args + (["rng=SEED"] if seeded else []))


def recurrent_parts(state: Any) -> tuple[list[str], list[str]]:
    """Imports and the model and trainer lines of a lesson training a ``SequenceModel`` (the
    recurrent and CTC lessons)."""
    extra = {"tbptt": True} if state.trainer.tbptt else {}
    return ["from pyplay.models import SequenceModel"], [
        *sequence_model_lines(state),
        *trainer_lines(state, extra),
    ]


def require_model(state: Any, attr: str | None = None, trainer: bool = True) -> Any:
    """``state``'s model (the attribute ``attr``, by default the one its ``_model_attr``
    names, else ``model``); ValueError when there is none (or, with ``trainer``, no
    trainer)."""
    model = getattr(state, str(attr or getattr(state, "_model_attr", "model")), None)
    if model is None or (trainer and getattr(state, "trainer", None) is None):
        raise ValueError("the lesson has no model yet: fix its settings first")
    return model


def trainer_script(
    spec: Any,
    state: Any,
    parts: Callable[[Any], tuple[list[str], list[str]]],
    *,
    steps: int,
    log_every: int,
    recurrent: bool = False,
    after: Callable[[Any], Sequence[str]] | None = None,
) -> str:
    """The script of a lesson trained by a :class:`~pyplay.train.Trainer`: the task of
    ``state``, the model and trainer lines ``parts(state)`` writes (with their imports), the
    training loop and the evaluation, then the lines ``after(state)`` writes (a model trained
    beside it, a decoding); with ``recurrent`` it also saves the model and compares it with its
    PyTorch twin."""
    require_model(state)
    task_imports, constants, task_lines = task_parts(state)
    model_imports, model_lines = parts(state)
    numpy = recurrent or any("np." in line for line in constants)
    imports = [
        *(["import numpy as np", ""] if numpy else []),
        *(["from pyplay.io import load, save"] if recurrent else []),
        *model_imports,
        *[line for line in task_imports if line.startswith("from pyplay")],
        "from pyplay.train import Trainer",
    ]
    if any("Path(" in line for line in constants):
        imports.insert(0, "from pathlib import Path")
    lines = [
        f'"""The "{spec.title}" lesson of the pyplay playground, natively (made by "Show',
        'as code"). Run it with python; change STEPS, or set CHECKPOINT to a saved model."""',
        "",
        *imports,
        "",
        f"STEPS = {steps!r}",
        f"LOG_EVERY = {log_every!r}",
        f"SEED = {literal(int(state.seed), 'seed')}",
    ]
    if recurrent:
        lines += [
            'CHECKPOINT = None  # e.g. "pyplay-model.npz" saved by the page, to continue it',
            'SAVE_TO = "pyplay-model.npz"',
        ]
    lines += [*constants, "", *task_lines, *model_lines]
    if recurrent:
        lines += [
            "if CHECKPOINT is not None:",
            "    ckpt = load(CHECKPOINT)",
            "    model.load_params(ckpt.params)",
            "    if ckpt.optimizer_state:",
            "        trainer.optimizer.load_state_dict(ckpt.optimizer_state)",
            '    trainer.step_count = int(ckpt.meta.get("step", 0))',
        ]
    lines += [
        "",
        "for record in trainer.run(STEPS):",
        '    if record.status != "ok":',
        "        print(record.message)",
        "        break",
        "    if record.step % LOG_EVERY == 0:",
        '        print(f"step {record.step}: loss {record.loss:.6f}")',
        'print("evaluation on fresh examples:", trainer.evaluate(batch_size=64))',
        *(after(state) if after is not None else ()),
    ]
    if recurrent:
        lines += [
            "save(",
            "    SAVE_TO,",
            "    model.params,",
            "    optimizer_state=trainer.optimizer.state_dict(),",
            "    meta={",
            '        "model": model.config,',
            '        "task": task.name,',
            '        "task_config": {k: v for k, v in task.config.items() if k not in ("text", '
            '"values")},',
            '        "step": trainer.step_count,',
            "    },",
            ")",
            *torch_part(state),
        ]
    return "\n".join(lines) + "\n"


def trainer_code(
    parts: Callable[[Any], tuple[list[str], list[str]]],
    *,
    recurrent: bool = False,
    after: Callable[[Any], Sequence[str]] | None = None,
) -> Callable[..., str]:
    """The ``as_code`` of a lesson trained by a :class:`~pyplay.train.Trainer` (its
    ``code.py``'s, named by its spec): :func:`trainer_script` with ``parts``, ``recurrent``
    and ``after``."""

    def lesson_as_code(spec: Any, state: Any, *, steps: int, log_every: int) -> str:
        """The lesson's script (see :func:`as_code`)."""
        return trainer_script(
            spec, state, parts, steps=steps, log_every=log_every, recurrent=recurrent, after=after
        )

    return lesson_as_code


def as_code(lesson: str, state: Any, *, steps: int = 300, log_every: int = 50) -> str:
    """A short runnable script that rebuilds ``state``'s setup natively and trains it.

    Parameters
    ----------
    lesson : one of :data:`CODE_LESSONS`
        The lesson's key; its spec's ``code`` function (``lessons/<key>/code.py``) writes
        the script.
    state : the lesson's state (``LessonState``, ``Seq2SeqState``, ...), with a model built
    steps : int
        Training steps the script runs (``STEPS`` at its top).
    log_every : int
        The script prints the loss every ``log_every`` steps.

    Returns
    -------
    str
        Python source. For the recurrent and CTC lessons it also saves the model to
        ``pyplay-model.npz`` (loadable in the page) and compares it with its PyTorch twin.

    Raises
    ------
    ValueError
        Unknown lesson, no model yet, or a setting that is not a plain value.
    """
    if lesson not in CODE_LESSONS:
        raise ValueError(f"lesson must be one of {', '.join(CODE_LESSONS)}, got {lesson!r}")
    for name, value in (("steps", steps), ("log_every", log_every)):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 10**7:
            raise ValueError(f"{name} must be an integer from 1 to 10,000,000, got {value!r}")
    spec = SPECS[lesson]
    write = spec.code_function()
    return str(write(spec, state, steps=steps, log_every=log_every))


def metrics_csv(history: Mapping[str, Sequence[float]]) -> str:
    """A lesson's ``history`` as CSV: ``step,loss`` and then any other columns it holds
    (``accuracy``, the transformer lesson's ``lstm``), one row per step; NaN is an empty cell.

    Raises ValueError when the columns are missing, of different lengths or not numbers.
    """
    if not isinstance(history, Mapping) or "step" not in history or "loss" not in history:
        raise ValueError("history must map 'step' and 'loss' (and other columns) to lists")
    names = ["step", "loss", *[k for k in history if k not in ("step", "loss")]]
    columns = [list(history[k]) for k in names]
    lengths = {len(c) for c in columns}
    if len(lengths) != 1:
        sizes = ", ".join(f"{k} {len(c)}" for k, c in zip(names, columns, strict=True))
        raise ValueError(f"history columns must have the same length, got {sizes}")
    for name in names:
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_ ]*", name):
            raise ValueError(f"column names must be plain words, got {name!r}")
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(names)
    for row in zip(*columns, strict=True):
        cells = []
        for name, given in zip(names, row, strict=True):
            value: Any = given
            if hasattr(value, "item") and getattr(value, "ndim", None) == 0:  # NumPy scalar
                value = value.item()
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"{name} values must be numbers, got {given!r}")
            if name == "step":
                cells.append(str(int(value)))
            else:
                cells.append("" if math.isnan(value) else repr(float(value)))
        writer.writerow(cells)
    return out.getvalue()
