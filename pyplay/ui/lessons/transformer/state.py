"""State of the "Transformers" lesson: a tiny transformer trained on a task of the recurrent
lesson, an LSTM trained beside it on the same batches budget, and what the views show (every
head's attention, the positional encodings). With ``arch = "encoder_decoder"``: a transformer
encoder-decoder on a pair task, the recurrent attention encoder-decoder (LSTM) beside it on the
same batches of pairs, their three kinds of attention and greedy decoding
(:mod:`pyplay.ui.lessons.transformer.pairs`).

Testable without a browser; errors become :attr:`TransformerLessonState.message` and the
trained models stay as they were.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import param

from pyplay.io import Checkpoint, model_checkpoint, model_entry, resume
from pyplay.models import SequenceModel
from pyplay.models.registry import build_model
from pyplay.models.seq2seq import EncoderDecoder
from pyplay.models.transformer.lm import TransformerModel
from pyplay.models.transformer.seq2seq import TransformerSeq2Seq
from pyplay.nn.positional import FIXED, POSITIONAL, fixed_table, input_width
from pyplay.sampling import sample
from pyplay.tasks import CharLM, make_task
from pyplay.train import Trainer
from pyplay.ui.base_state import LessonBase, lr_param, seed_param
from pyplay.ui.checkpoint import LoadedFile, same_model
from pyplay.ui.lessons.rnn.state import TASK_LABELS
from pyplay.ui.lessons.seq2seq.state import pair_task
from pyplay.ui.lessons.transformer import pairs
from pyplay.ui.lessons.transformer.formulas import VALUE_LABELS
from pyplay.ui.trainer_lesson import TrainerLesson

__all__ = ["TASKS", "HeadView", "TransformerLessonState"]

TASKS = {label: name for label, name in TASK_LABELS.items() if name != "series"}
_REBUILD = (
    "arch", "task", "pair_task", "d_model", "nhead", "num_layers", "positional", "causal",
    "seq_len", "seed", "value_function",
)  # fmt: skip


@dataclass(frozen=True)
class HeadView:
    """Attention of one input sequence: ``weights[layer]`` (heads, T, T) (query rows, key
    columns), ``tokens`` naming the T positions, ``residual_norms`` (layers, sublayers + 1, T)."""

    weights: list[np.ndarray]
    tokens: list[str]
    residual_norms: np.ndarray


class TransformerLessonState(TrainerLesson, LessonBase):
    """Settings and actions of the "Transformers" lesson (files: ``save_bytes`` and
    ``load_bytes`` of :class:`~pyplay.ui.checkpoint.SavableLesson`: the transformer, and the
    comparison LSTM beside it; a file without the LSTM starts it afresh)."""

    arch = param.Selector(
        objects=list(pairs.ARCHS.values()), default="decoder",
        doc="decoder only (a language model) or encoder-decoder (on pairs)",
    )  # fmt: skip
    task = param.Selector(objects=list(TASKS.values()), default="copy")
    pair_task = param.Selector(objects=list(pairs.PAIR_CHOICES.values()), default="reversal")
    d_model = param.Integer(default=32, softbounds=(8, 64))
    nhead = param.Selector(objects=[1, 2, 4], default=4)
    num_layers = param.Integer(default=2, softbounds=(1, 3))
    positional = param.Selector(objects=list(POSITIONAL), default="sinusoidal")
    causal = param.Boolean(default=True)
    value_function = param.Selector(
        objects=list(VALUE_LABELS.values()), default="linear",
        doc="the self-attention's value function: learned (W_v), or none, so each output is "
        "a weighted sum of the inputs themselves (Solberg's lecture, single-head attention)",
    )  # fmt: skip
    seq_len = param.Integer(default=10, softbounds=(4, 40))
    lr = lr_param(0.003)
    seed = seed_param()
    model: TransformerModel | TransformerSeq2Seq | None
    compare_lstm = param.Boolean(default=True, doc="train an LSTM beside it, step for step")

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.lstm_trainer: Trainer | None = None
        self.history: dict[str, list[float]] = {"step": [], "loss": [], "lstm": []}
        self._start(rebuild=_REBUILD)

    # ------------------------------------------------------------------ building
    @property
    def encoder_decoder(self) -> bool:
        """Whether the lesson trains the encoder-decoder on pairs."""
        return bool(self.arch == pairs.ENC_DEC)

    def _make_task(self) -> Any:
        if self.encoder_decoder:  # the longest reversal or copy: the sequence length
            return pair_task(self.pair_task, self.seed, max_len=self.seq_len)
        if self.task == "parentheses":
            return make_task("parentheses", max_len=max(4, self.seq_len), rng=self.seed)
        return make_task(self.task, seq_len=self.seq_len, rng=self.seed)

    def reset(self) -> bool:
        """Rebuild the task and both models from the settings; on bad settings the message
        explains and the previous models stay."""
        self.running = False
        try:
            task = self._make_task()
            model = self._build_model(task)
            trainer = self._make_trainer(model, task)
            lstm_trainer = self._lstm_trainer(task)
            lstm = lstm_trainer.model
            assert isinstance(lstm, SequenceModel | EncoderDecoder)
        except (ValueError, TypeError) as err:
            self.notify(f"Not rebuilt: {err}", "danger")
            return False
        self._keep_before_replacing()  # autosave keeps a trained model
        self.task_obj, self.model, self.trainer, self.lstm_trainer = (
            task,
            model,
            trainer,
            lstm_trainer,
        )
        self._remember_settings()
        self._new_run()
        self.history = {"step": [], "loss": [], "lstm": []}
        self._elapsed = 0.0
        self.version += 1
        self.status = self._status_text()
        if self.encoder_decoder:
            self.notify(
                f"New transformer encoder-decoder: {self.num_layers} encoder and "
                f"{self.num_layers} decoder layers x {self.nhead} heads, d_model {self.d_model}, "
                f"{self.positional} positions; {model.num_parameters():,} parameters (the LSTM "
                f"encoder-decoder with attention beside it: {lstm.num_parameters():,}). "
                + task.describe().split(". ")[0].rstrip(".")
                + ".",
                "info",
            )
            return True
        mask = "causal" if self.causal else "NOT causal (every step sees the future)"
        values = ", no value function (V(x) = x)" if self.value_function == "identity" else ""
        self.notify(
            f"New transformer: {self.num_layers} layers x {self.nhead} heads, d_model "
            f"{self.d_model}, {self.positional} positions, {mask}{values}; "
            f"{model.num_parameters():,} parameters (LSTM beside it: "
            f"{lstm.num_parameters():,}). " + task.describe().split(". ")[0] + ".",
            "info",
        )
        return True

    def _build_model(self, task: Any) -> TransformerModel | TransformerSeq2Seq:
        if self.encoder_decoder:
            return pairs.pair_model(
                task, self.d_model, self.nhead, self.num_layers, self.positional, self.seed,
                value_function=self.value_function,
            )  # fmt: skip
        return TransformerModel.for_task(
            task, d_model=self.d_model, nhead=self.nhead, num_layers=self.num_layers,
            positional=self.positional, causal=self.causal,
            max_len=max(256, 2 * self.seq_len), rng=self.seed,
            value_function=self.value_function,
        )  # fmt: skip

    def read_file(self, data: Any) -> LoadedFile:
        """As :meth:`~pyplay.ui.checkpoint.SavableLesson.read_file`; a lesson file saved before
        ``value_function`` existed has learned value functions, and its settings now say so
        (rather than keeping the page's current choice, which its model would not fit)."""
        loaded = super().read_file(data)
        if not loaded.native and "value_function" not in loaded.settings:
            loaded = replace(loaded, settings={**loaded.settings, "value_function": "linear"})
        return loaded

    def _make_trainer(self, model: Any, task: Any) -> Trainer:
        return Trainer(model, task, lr=self.lr, batch_size=32, clip=1.0)

    def _lstm_trainer(self, task: Any, lstm: Any = None) -> Trainer:
        """The comparison LSTM's trainer: a new LSTM of width d_model (with pairs: the LSTM
        encoder-decoder with attention), or ``lstm``."""
        if lstm is None and self.encoder_decoder:
            lstm = pairs.recurrent_model(task, self.d_model, self.seed)
        elif lstm is None:
            lstm = SequenceModel.for_task(task, "lstm", hidden_size=self.d_model, rng=self.seed)
        return Trainer(lstm, task, lr=0.01, batch_size=32, clip=1.0)

    def _file_beside(self) -> dict[str, Checkpoint]:
        """The comparison LSTM, its optimiser state and step count, saved beside the
        transformer (``pyplay.io.load_model(file, beside="lstm")`` reads it natively)."""
        t = self.lstm_trainer
        if t is None:
            return {}
        return {"lstm": model_checkpoint(t.model, t.optimizer, int(t.step_count))}

    def _file_prepare(self, loaded: LoadedFile) -> Any:
        commit = super()._file_prepare(loaded)
        part = loaded.checkpoint.beside.get("lstm")
        lstm = None  # a file without the comparison LSTM starts it afresh
        if part is not None:
            try:
                lstm = build_model(model_entry(part.meta), part.params)
                trial = self._lstm_trainer(self._make_task(), lstm)
                same_model(lstm, self._lstm_trainer(trial.task).model)
                resume(trial, part)  # its optimiser state and step count
            except (ValueError, TypeError, KeyError) as err:
                raise ValueError(f"the comparison LSTM in it does not fit: {err}") from err

        def commit_both() -> None:
            commit()
            self.lstm_trainer = self._lstm_trainer(self.task_obj, lstm)  # the same task
            if part is not None:
                resume(self.lstm_trainer, part)

        return commit_both

    def _on_lr(self) -> None:
        self._apply_training_settings("Learning rate applied to the current transformer.")

    # ------------------------------------------------------------------ training
    def train(self, steps: int | None = None, budget_s: float | None = None) -> list[Any]:
        """Run ``steps`` steps (or what fits in ``budget_s`` seconds) of the transformer, each
        followed by one LSTM step when comparing (with pairs: on the very same batch).
        Returns (step, loss, lstm loss or NaN)."""
        if self.trainer is None or self.lstm_trainer is None:
            return []
        rows = []
        start = time.perf_counter()
        n = 0
        while steps is None or n < steps:
            batch = self.task_obj.batch(self.trainer.batch_size) if self.encoder_decoder else None
            record = next(iter(self.trainer.run(1, batch)))
            if record.status != "ok":
                self.running = False
                self.notify(record.message, "danger")
                break
            lstm_loss = float("nan")
            if self.compare_lstm:
                lstm_record = next(iter(self.lstm_trainer.run(1, batch)))
                lstm_loss = lstm_record.loss if lstm_record.status == "ok" else float("nan")
            rows.append((record.step, record.loss, lstm_loss))
            self._record(record.step, record.loss, record.seconds)
            self.history["lstm"].append(lstm_loss)
            n += 1
            if budget_s is not None and time.perf_counter() - start >= budget_s:
                break
        self.status = self._status_text()
        return rows

    def _status_text(self) -> str:
        if self.trainer is None:
            return ""
        n = self.trainer.step_count
        loss = None if self.encoder_decoder else self.task_obj.baseline_loss()  # pairs: none
        base = "" if loss is None else f"baseline {loss:.4f}"
        if not self.history["loss"]:
            return f"Step {n}: not trained yet." + (
                "" if loss is None else f" Baseline loss {loss:.4f}."
            )
        rate = self.steps_per_second(n)
        text = f"Step {n}: transformer loss {self.history['loss'][-1]:.4f}"
        lstm = self.history["lstm"][-1]
        if np.isfinite(lstm):
            text += f", LSTM {lstm:.4f}"
        return text + (f" ({base})" if base else "") + f", {rate:.1f} transformer steps/s"

    # ------------------------------------------------------------------ looking inside
    def heads(self, index: int = 0) -> HeadView | None:
        """Every layer's per-head attention on one fixed input sequence (its own seed)."""
        if not isinstance(self.model, TransformerModel):
            return None
        task = type(self.task_obj)(**{**self.task_obj.config, "rng": 10_000 + self.seed})
        batch = task.batch(8)
        k = int(np.clip(index, 0, 7))
        T = int(batch.lengths[k]) if batch.lengths is not None else batch.inputs.shape[1]
        x = batch.inputs[k : k + 1, :T]
        _, _, cache = self.model.forward(x, None, None, training=True)  # dropout is 0
        assert cache is not None
        rec = cache.record()
        L = self.model.num_layers
        weights = [rec[f"layers.{i}.self_attn.weights"][0] for i in range(L)]  # (h, T, T)
        norms = np.stack([rec[f"layers.{i}.residual_norms"][:, 0] for i in range(L)])
        if isinstance(self.task_obj, CharLM):
            tokens = list(self.task_obj.decode(x[0]))
        elif task.input_kind == "tokens":
            tokens = [str(int(v)) for v in x[0]]
        else:
            tokens = [f"t{t}" for t in range(T)]
        return HeadView(weights, tokens, norms)

    def pair_heads(self, index: int = 0) -> pairs.PairView | None:
        """With pairs: every layer's and head's encoder self-attention, decoder
        self-attention and cross-attention on one fixed pair (see :func:`pairs.pair_view`)."""
        if not isinstance(self.model, TransformerSeq2Seq):
            return None
        return pairs.pair_view(self.model, self.task_obj, index, self.seed)

    def decode(self, text: str) -> tuple[str, str] | None:
        """With pairs: the greedy outputs of the transformer and of the LSTM beside it for
        the typed source ``text``; None and a message when it does not fit."""
        if not isinstance(self.model, TransformerSeq2Seq) or self.lstm_trainer is None:
            self.notify("Decoding needs the encoder-decoder: choose it first.", "warning")
            return None
        try:
            return (
                pairs.decode(self.model, self.task_obj, text),
                pairs.decode(self.lstm_trainer.model, self.task_obj, text),
            )
        except (ValueError, TypeError) as err:
            self.notify(f"Cannot decode: {err}", "warning")
            return None

    def positional_tables(self, positions: int = 48) -> tuple[np.ndarray, np.ndarray]:
        """The first ``positions`` rows of the table the model adds to its inputs (positions,
        d_model), its own when built (the learned one as trained so far), and their dot
        products (positions, positions)."""
        if self.model is not None:
            P = np.asarray(self.model.pos.table(), dtype=np.float64)[:positions]
        else:
            kind = self.positional if self.positional in FIXED else "sinusoidal"
            width = self.d_model - input_width(self.positional, self.d_model) or self.d_model
            P = fixed_table(kind, positions, width)  # concatenated: its d_pos columns
        return P, P @ P.T  # (n, D), (n, n)

    def attention_cost(self, longest: int = 1024) -> dict[str, np.ndarray]:
        """Multiply-adds of one layer over a sequence of T = 1..``longest`` positions, for
        width d = ``d_model``: self-attention's scores :math:`QK^\top` and weighted sum
        :math:`AV`, :math:`2T^2d`, beside its four projections :math:`4Td^2` (Q, K, V, out),
        and an LSTM layer of the same width, :math:`8Td^2` (four gates, each from
        :math:`[x_t; h_{t-1}]`). The feed-forward block, the same for both, is left out. Also
        the attention weights held per head, :math:`T^2`."""
        T = np.arange(1, longest + 1, dtype=np.float64)  # (longest,)
        d = float(self.d_model)
        return {
            "T": T,
            "scores": 2 * T**2 * d,
            "projections": 4 * T * d**2,
            "lstm": 8 * T * d**2,
            "weights": T**2,
        }

    def generate(self, prompt: str, length: int = 200, temperature: float = 1.0) -> str | None:
        """Sample from the transformer (KV-cached); None and a message when it cannot."""
        if not isinstance(self.task_obj, CharLM) or not isinstance(self.model, TransformerModel):
            self.notify("Sampling needs the character model: choose that task first.", "warning")
            return None
        if not self.causal:
            self.notify("Sampling needs the causal mask: a model that sees the future cannot "
                        "generate one character at a time.", "warning")  # fmt: skip
            return None
        room = self.model.max_len - len(prompt)
        try:
            return sample(
                self.model, self.task_obj, prompt, min(length, max(room, 1)), temperature,
                rng=int(self.trainer.step_count if self.trainer else 0),
            )  # fmt: skip
        except (ValueError, TypeError) as err:
            self.notify(str(err), "danger")
            return None
