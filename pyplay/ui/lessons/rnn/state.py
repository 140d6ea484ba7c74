"""State of the recurrent-networks lesson: settings, the model being trained, and actions.

Everything the lesson does lives here, testable without a browser: views only render it.
Errors never escape as exceptions: they become :attr:`LessonState.message` (shown in the page)
and the trained model and the user's inputs stay as they were.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import param

from pyplay.io import Checkpoint
from pyplay.models import SequenceModel
from pyplay.nn.lstm_cell import GRADIENTS
from pyplay.sampling import sample
from pyplay.tasks import TASKS, CharLM, NumberSeries, make_task
from pyplay.tasks.series import parse_numbers
from pyplay.train import OPTIMIZERS, Trainer, task_loss
from pyplay.ui.base_state import LessonBase, lr_param, seed_param
from pyplay.ui.lectures import lecture, lecture_label
from pyplay.ui.trainer_lesson import TrainerLesson

__all__ = ["TASK_LABELS", "GradientPair", "Inspection", "LessonState"]

# the tasks this lesson offers, each shown by the title its class declares
LESSON_TASKS = ("adding", "copy", "parentheses", "parity", "sine", "charlm", "series")
TASK_LABELS = {TASKS[name].title: name for name in LESSON_TASKS}
MAX_UPLOAD_BYTES = 1_000_000
_LSTM = ("forget_gate", "peephole", "forget_bias")  # the LSTM's variants (Variations of the LSTM)
# the stack's shape (feed-forward layers before it, deep, bidirectional, residual)
_STACK = ("feedforward_layers", "num_layers", "bidirectional", "residual")
_REBUILD = ("task", "cell", "hidden_size", *_STACK, "seq_len", "seed", "nonlinearity", *_LSTM)
_TRAINING = ("lr", "optimizer", "clip", "batch_size", "tbptt", "seed")


@dataclass(frozen=True)
class Inspection:
    """What the look-inside views draw for one input sequence.

    ``internals[layer][name]`` is a (T, H) array (layer keys like "l0", "l0_reverse"; names
    i, f, g, o, c, h for an LSTM; r, z, n, h for a GRU; a, h for an RNN). ``grad_norms[layer]``
    is the (T,) norm of dL/dh_t. ``labels`` name the time steps (input tokens or step numbers).
    """

    internals: dict[str, dict[str, np.ndarray]]
    grad_norms: dict[str, np.ndarray]
    labels: list[str]


@dataclass(frozen=True)
class GradientPair:
    """An LSTM's true gradient beside Hochreiter & Schmidhuber's truncated one on one input.

    ``full`` and ``cec`` are the (T,) norms of dL/dx_t, the gradient reaching the input at step
    t, by backpropagation through time and through the cell state only (``gradient="cec"`` of
    :class:`~pyplay.nn.lstm.LSTM`); ``cosine`` is the cosine between the two gradients of all
    the LSTM's weights and ``ratio`` their norms' ratio (truncated / true).
    """

    full: np.ndarray
    cec: np.ndarray
    cosine: float
    ratio: float


class LessonState(TrainerLesson, LessonBase):
    """Settings and actions of the "Recurrent networks" lesson (files: ``save_bytes`` and
    ``load_bytes`` of :class:`~pyplay.ui.checkpoint.SavableLesson`)."""

    task = param.Selector(objects=list(TASK_LABELS.values()), default="adding")
    cell = param.Selector(objects=["lstm", "gru", "rnn"], default="lstm")
    nonlinearity = param.Selector(objects=["tanh", "relu", "linear"], default="tanh")
    forget_gate = param.Boolean(
        default=True, doc="LSTM: a forget gate (off: the 1997 LSTM, c_t = c_{t-1} + i g)"
    )
    peephole = param.Boolean(default=False, doc="LSTM: gates see the cell state (peepholes)")
    forget_bias = param.Number(
        default=0.0,
        softbounds=(-10.0, 10.0),
        doc="LSTM: added to the forget gate's bias at initialisation "
        f"({lecture_label('nlp')}: 1 or more)",
    )
    hidden_size = param.Integer(default=32, softbounds=(2, 128))
    feedforward_layers = param.Integer(
        default=0, softbounds=(0, 3), doc="tanh layers of hidden-size units at every step before "
        f"the recurrent ones (the typical setup of {lecture('wand')}: input, feed-forward, "
        "recurrent, output)",
    )  # fmt: skip
    num_layers = param.Integer(default=1, softbounds=(1, 6))
    bidirectional = param.Boolean(
        default=False,
        doc="a second stack of layers reads each sequence backwards; the output layer reads "
        "both directions' states, [h_fwd; h_bwd] (2H features). Not for the tasks that predict "
        "the next input, which a backward direction would read",
    )
    residual = param.Boolean(
        default=False,
        doc="residual connections between stacked layers (GNMT): every layer after the first "
        "adds its input to its output",
    )
    seq_len = param.Integer(default=10, softbounds=(4, 100))
    lr = lr_param(0.02)
    optimizer = param.Selector(objects=sorted(OPTIMIZERS), default="adam")
    clip = param.Number(
        default=1.0, softbounds=(0.0, 1000.0), doc="global-norm clipping threshold; 0 turns it off"
    )
    batch_size = param.Integer(default=32, softbounds=(1, 128))
    tbptt = param.Boolean(
        default=True,
        doc="character model: read the text in consecutive chunks of seq_len characters and "
        "carry the state from one to the next without its gradient (truncated BPTT); off: "
        "independent windows, each from a zero state",
    )
    seed = seed_param()

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.user_text: str | None = None
        self.user_numbers: np.ndarray | None = None
        self.model: SequenceModel | None = None
        self.trainer: Trainer | None = None
        self.task_obj: Any = None
        self.reset()
        self.param.watch(self._on_rebuild_setting, list(_REBUILD))
        self.param.watch(
            self._quiet(self._on_training_setting),
            ["lr", "optimizer", "clip", "batch_size", "tbptt"],
        )

    # ------------------------------------------------------------------ messages
    # ------------------------------------------------------------------ building
    def _make_task(self) -> Any:
        kwargs: dict[str, Any] = {"rng": self.seed}
        if self.task == "charlm":
            kwargs.update(text=self.user_text, seq_len=self.seq_len)
        elif self.task == "series":
            if self.user_numbers is None:
                raise ValueError(
                    "Paste or upload a column of numbers first (under 'Your "
                    f"data'), then choose '{NumberSeries.title}'."
                )
            kwargs.update(values=self.user_numbers, seq_len=self.seq_len)
        elif self.task == "parentheses":
            kwargs["max_len"] = max(4, self.seq_len)
        else:
            kwargs["seq_len"] = self.seq_len
        return make_task(self.task, **kwargs)

    def _built_message(self, task: Any, model: Any) -> str:
        one_way, k = "", int(self.feedforward_layers)
        if self.bidirectional and not self.reads_whole_input():
            one_way = (
                " One direction only: this task predicts the next input, which a backward "
                "direction would read."
            )
        return (
            f"New {self.cell.upper()} with {model.num_parameters():,} parameters. "
            + task.describe().split(". ")[0]
            + "."
            + one_way
            + (f" It reads the input through {k} feed-forward tanh layer(s) first." if k else "")
        )

    def reads_whole_input(self) -> bool:
        """Whether the task lets a model read the whole input before answering (so a backward
        direction may run): not for next-step prediction (a task whose target at step t is a
        later input, ``predicts_next_input``: a backward direction would read the answer)."""
        return not TASKS[self.task].predicts_next_input

    def stack_settings(self) -> dict[str, Any]:
        """Layers, directions and residual connections of the stack the settings ask for."""
        bidirectional = bool(self.bidirectional) and self.reads_whole_input()
        return {
            "feedforward_layers": int(self.feedforward_layers),
            "num_layers": self.num_layers,
            "bidirectional": bidirectional,
            "residual": bool(self.residual),
        }

    def lstm_settings(self) -> dict[str, Any]:
        """The LSTM variant the settings ask for (empty for the other cells); the forget
        bias only with a forget gate."""
        if self.cell != "lstm":
            return {}
        bias = float(self.forget_bias) if self.forget_gate else 0.0
        return {"forget_gate": self.forget_gate, "peephole": self.peephole, "forget_bias": bias}

    def _build_model(self, task: Any) -> SequenceModel:
        return SequenceModel.for_task(
            task,
            self.cell,
            hidden_size=self.hidden_size,
            nonlinearity=self.nonlinearity,
            rng=self.seed,
            **self.stack_settings(),
            **self.lstm_settings(),
        )

    def _make_trainer(self, model: SequenceModel, task: Any) -> Trainer:
        return Trainer(
            model,
            task,
            optimizer=self.optimizer,
            lr=self.lr,
            batch_size=self.batch_size,
            clip=self.clip or None,
            tbptt=(task.name == "charlm" and self.tbptt),
        )

    # ------------------------------------------------------------------ training

    def _untrained_note(self) -> str:
        return f". Baseline loss {self.task_obj.baseline_loss():.4f}."

    def _status_extra(self) -> str:
        return f" (baseline {self.task_obj.baseline_loss():.4f})"

    # ------------------------------------------------------------------ looking inside
    def inspection_batch(self, index: int = 0) -> Any:
        """A fixed batch (its own seed) so the views show the same sequences while training."""
        task = type(self.task_obj)(**{**self.task_obj.config, "rng": 10_000 + self.seed})
        batch = task.batch(8)
        k = int(np.clip(index, 0, 7))
        return type(batch)(
            batch.inputs[k : k + 1],
            batch.targets[k : k + 1],
            batch.mask[k : k + 1],
            None if batch.lengths is None else batch.lengths[k : k + 1],
        )

    def inspect(self, index: int = 0, model: SequenceModel | None = None) -> Inspection:
        """Internals and gradient norms of ``model`` (default: the current one) on one input."""
        model = model or self.model
        assert model is not None
        batch = self.inspection_batch(index)
        out, _, cache = model.forward(
            batch.inputs, None, batch.lengths, record=True, training=False
        )
        _, dout = task_loss(self.task_obj, out, batch)
        grad_record = model.backward(dout, cache, record=True).record
        T = int(batch.lengths[0]) if batch.lengths is not None else batch.inputs.shape[1]
        record = cache.record or {}
        internals = {layer: {k: v[0, :T] for k, v in rec.items()} for layer, rec in record.items()}
        norms = {layer: v[0, :T] for layer, v in (grad_record or {}).items()}
        if self.task_obj.input_kind == "tokens" and isinstance(self.task_obj, CharLM):
            labels = list(self.task_obj.decode(batch.inputs[0, :T]))
        elif self.task_obj.input_kind == "tokens":
            labels = [str(int(v)) for v in batch.inputs[0, :T]]
        else:
            labels = [str(t) for t in range(T)]
        return Inspection(internals, norms, labels)

    def gradient_pair(self, index: int = 0) -> GradientPair | None:
        """The current LSTM's true and CEC-only gradients on one input (None for the other
        cells or without a model)."""
        model = self.model
        if model is None or model.cell != "lstm":
            return None
        batch = self.inspection_batch(index)
        out, _, cache = model.forward(
            batch.inputs, None, batch.lengths, training=False, input_gradient=True
        )
        _, dout = task_loss(self.task_obj, out, batch)
        dhs, _ = model.head.backward(dout, cache.head)  # (1, T, D*H)
        T = int(batch.lengths[0]) if batch.lengths is not None else batch.inputs.shape[1]
        norms, flat = {}, {}
        for gradient in GRADIENTS:
            dx, _, grads = model.rnn.backward(dhs.copy(), None, cache.rnn, gradient=gradient)
            dx_t = dx[0, :T].astype(np.float64)  # (T, F)
            norms[gradient] = np.sqrt(np.einsum("tf,tf->t", dx_t, dx_t))  # (T,)
            flat[gradient] = np.concatenate([g.ravel() for g in grads.values()]).astype(float)
        full, cec = flat["full"], flat["cec"]
        n_full, n_cec = float(np.linalg.norm(full)), float(np.linalg.norm(cec))
        both = n_full > 0 and n_cec > 0
        cosine = float(full @ cec) / (n_full * n_cec) if both else float("nan")
        ratio = n_cec / n_full if n_full > 0 else float("nan")
        return GradientPair(norms["full"], norms["cec"], cosine, ratio)

    def compare_gradients(self, index: int = 0) -> dict[str, np.ndarray]:
        """dL/dh_t norms of a freshly initialised tanh RNN and LSTM of the current size on the
        same input: the vanishing gradient, side by side. The LSTM gets the usual forget-gate
        bias of 1 (Gers et al. 2000; Jozefowicz et al. 2015), so its cell starts out keeping
        most of what it holds."""
        curves = {}
        H = self.hidden_size
        for cell in ("rnn", "lstm"):
            lstm = {"forget_bias": 1.0} if cell == "lstm" else {}
            model = SequenceModel.for_task(
                self.task_obj, cell, hidden_size=H, nonlinearity="tanh", rng=self.seed, **lstm
            )
            curves[cell] = self.inspect(index, model).grad_norms["l0"]
        return curves

    # ------------------------------------------------------------------ character model
    def generate(self, prompt: str, length: int = 200, temperature: float = 1.0) -> str | None:
        """Sample from the character model; None (and a message) when it cannot."""
        if not isinstance(self.task_obj, CharLM) or self.model is None:
            self.notify("Sampling needs the character model: choose that task first.", "warning")
            return None
        try:
            return sample(
                self.model,
                self.task_obj,
                prompt,
                length,
                temperature,
                rng=int(self.trainer.step_count if self.trainer else 0),
            )
        except (ValueError, TypeError) as err:
            self.notify(str(err), "danger")
            return None

    # ------------------------------------------------------------------ user data
    @staticmethod
    def _decode(data: bytes | str, what: str) -> str:
        if isinstance(data, str):
            text = data
        else:
            if len(data) > MAX_UPLOAD_BYTES:
                raise ValueError(
                    f"{what} must be at most {MAX_UPLOAD_BYTES // 1000:,} kB, got "
                    f"{len(data) / 1000:,.0f} kB"
                )
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as err:
                raise ValueError(
                    f"{what} must be UTF-8 text ({err.reason} at byte {err.start})"
                ) from None
        return text

    def set_user_text(self, data: bytes | str) -> bool:
        """Use ``data`` as the character model's text (validated); switches to that task."""
        try:
            text = self._decode(data, "the text")
            CharLM(text=text, seq_len=self.seq_len)  # validates size and alphabet
        except (ValueError, TypeError) as err:
            self.notify(f"Text not used: {err}", "danger")
            return False
        self.user_text = text
        return self._use_task("charlm", f"Using your text ({len(text):,} characters).")

    def set_user_numbers(self, data: bytes | str) -> bool:
        """Use a column of numbers for next-value prediction (validated)."""
        try:
            values = parse_numbers(self._decode(data, "the numbers"))
            NumberSeries(values, seq_len=self.seq_len)
        except (ValueError, TypeError) as err:
            self.notify(f"Numbers not used: {err}", "danger")
            return False
        self.user_numbers = values
        return self._use_task("series", f"Using your {values.size:,} numbers.")

    def _use_task(self, task: str, done: str) -> bool:
        """Train on ``task`` (rebuilt with the learner's data) and say ``done``."""
        if self.task == task:
            self.reset()
        else:
            self.task = task  # rebuilds through the watcher
        self.notify(done, "success")
        return True

    # ------------------------------------------------------------------ files
    def _file_meta(self) -> dict[str, Any]:
        """The task, as files of ``python -m pyplay train --save`` and older pages name it."""
        config = {k: v for k, v in self.task_obj.config.items() if k not in ("text", "values")}
        return {"task": self.task_obj.name, "task_config": config}

    def _file_settings(self, ckpt: Checkpoint, model: Any) -> dict[str, Any]:
        """Settings of a file saved natively (``python -m pyplay train --save``, "Show as
        code", :func:`pyplay.io.save_model`) or by an older page: from its model and task."""
        meta = ckpt.meta
        settings: dict[str, Any] = {}
        if isinstance(model, SequenceModel):
            config = model.config
            settings.update({k: config[k] for k in ("cell", "hidden_size", "num_layers")})
            settings["feedforward_layers"] = int(config.get("feedforward_layers", 0))
            settings.update({k: bool(config.get(k, False)) for k in ("bidirectional", "residual")})
            settings["nonlinearity"] = config["nonlinearity"]
            defaults = {k: self.param[k].default for k in _LSTM}
            settings.update({k: config.get(k, v) for k, v in defaults.items()})
        if "task" in meta:
            settings["task"] = meta["task"]
        task_config = meta.get("task_config")
        if isinstance(task_config, dict) and "seq_len" in task_config:
            settings["seq_len"] = task_config["seq_len"]
        old = meta.get("settings")
        if isinstance(old, dict):
            settings.update({k: v for k, v in old.items() if k in _TRAINING})
        return settings
