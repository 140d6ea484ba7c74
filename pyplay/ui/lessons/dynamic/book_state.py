r"""State of the "LSTM and GRU (lecture 8)" sub-tab of the dynamic networks lesson: the LSTM
and GRU of lecture 8 of an NLP course (:mod:`pyplay.ui.lectures`) built as layered networks in
the book's notation
(:class:`~pyplay.dynamic.book_lstm.BookLSTM`, :class:`~pyplay.dynamic.book_gru.BookGRU`), with
the read-out layer 7 of :mod:`pyplay.dynamic.book_output`, run on the lesson's input signal
and trained, like the "Build and run" network, to imitate a reference system.

The settings (``network``, ``hidden_size`` :math:`S`, the LSTM's ``forget_gate``,
``peephole`` and ``forget_bias`` :math:`b^3`, the input ``signal`` and its ``steps``, the
reference ``system``, ``lr``, ``seed``) are the sub-lesson's address parameters (key
``"lecture_rnn"``). A change of network, variant, size, bias or seed draws a new network; a
value that cannot be used is named in ``problem`` (shown next to the controls) and the
network stays as it was. No Panel here.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import param

from pyplay.dynamic.book_gru import BookGRU
from pyplay.dynamic.book_lstm import BookLSTM, BookTrace
from pyplay.dynamic.book_output import book_network, named_params, output_loss
from pyplay.optim import Adam
from pyplay.tasks.signals import SYSTEMS, random_levels, signal
from pyplay.train import StepRecord
from pyplay.ui.base_state import LessonBase, lr_param, seed_param
from pyplay.ui.lddn_notation import Diagram, sup
from pyplay.ui.lectures import lecture_label
from pyplay.ui.lessons.dynamic.book_notation import book_diagram, book_equations
from pyplay.ui.lessons.dynamic.state import SYSTEM_LABELS, TRAIN_BATCH, TRAIN_STEPS

__all__ = ["BIAS_RANGE", "NETWORKS", "BookRNNState", "BookRun"]

NETWORKS = {
    f"{net} ({lecture_label('nlp')}'s notation)": key
    for net, key in [("LSTM", "lstm"), ("GRU", "gru")]
}
_NLP = lecture_label("nlp")  # the lecture the sub-tab follows, as its labels name it
BIAS_RANGE = (-10.0, 10.0)  # what the forget-gate bias control accepts
_REBUILD = ["network", "hidden_size", "forget_gate", "peephole", "forget_bias", "seed"]


@dataclass(frozen=True)
class BookRun:
    """The network on the input signal: ``p`` (T,), the trace of its own ``forward`` (every
    layer's output ``trace.a[m]`` (1, T, S)), the read-out ``a7`` (T,) and the reference
    system's ``target`` (T,)."""

    p: np.ndarray
    trace: BookTrace
    a7: np.ndarray
    target: np.ndarray


class BookRNNState(LessonBase):
    """The network, its read-out, the training data and the optimiser."""

    network = param.Selector(objects=list(NETWORKS.values()), default="lstm")
    hidden_size = param.Integer(default=3, bounds=(1, 8), doc="S, the neurons of each layer")
    forget_gate = param.Boolean(
        default=True, doc="LSTM: a feedback (forget) gate, layer 3 (off: the original LSTM)"
    )
    peephole = param.Boolean(default=False, doc="LSTM: the CEC output a⁵ fed to the gates")
    forget_bias = param.Number(
        default=1.0,
        softbounds=BIAS_RANGE,
        doc=f"LSTM: the forget gate's bias b³ at the start ({lecture_label('nlp')}: 1 or more)",
    )
    signal = param.Selector(objects=["impulse", "step", "sine"], default="step")
    steps = param.Integer(default=20, bounds=(2, 60), doc="T, the length of the input signal")
    system = param.Selector(objects=list(SYSTEM_LABELS.values()), default="first order")
    lr = lr_param(0.02)
    seed = seed_param()

    problem = param.String(default="", doc="why the last bias was not used (by its control)")
    lr_problem = param.String(default="", doc="why the last learning rate cannot be used")

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.reset()
        self.param.watch(lambda *_: self.reset(), _REBUILD)
        self.param.watch(lambda *_: self._new_data(), ["system"])
        self.param.watch(lambda *_: self._changed(), ["signal", "steps"])
        self.param.watch(lambda *_: self._check_lr(), ["lr"])

    # ------------------------------------------------------------------ the network
    def reset(self) -> None:
        """A new network from the settings (the weights drawn from the seed), untrained."""
        low, high = BIAS_RANGE
        bias = float(self.forget_bias)
        self.problem = ""
        if not low <= bias <= high:  # NaN fails too
            kept = hasattr(self, "net")
            self.problem = (
                f"Forget-gate bias b³ must be a number from {low:g} to {high:g}, got {bias:g}; "
                + ("the network is kept as it was." if kept else "the network starts from 1.")
            )
            if kept:
                return
            bias = float(self.param.forget_bias.default)
        self.net, self.LW7, self.b7 = book_network(
            str(self.network),
            int(self.hidden_size),
            forget_gate=bool(self.forget_gate),
            peephole=bool(self.peephole),
            forget_bias=bias,
            rng=self.seed,
        )
        self.params = named_params(self.net, self.LW7, self.b7)
        self._optimizer: Adam | None = None
        self._step = 0
        self.history = {"step": [], "loss": []}
        self._elapsed = 0.0
        self.running = False
        self.stopped = ""
        self._new_data()

    def _new_data(self) -> None:
        """The training sequences: random levels through the reference system."""
        u = random_levels(TRAIN_BATCH * 4, TRAIN_STEPS, rng=self.seed)  # (4B, N)
        self.u, self.y = u[..., None], SYSTEMS[self.system](u)[..., None]  # (4B, N, 1) each
        self._changed()

    def _changed(self) -> None:
        self.version += 1
        self.status = self._status_text()

    def _check_lr(self) -> None:
        lr = float(self.lr)
        if not 0.0 < lr <= 10.0:  # NaN fails too
            self.lr_problem = f"Learning rate must be above 0 and at most 10, got {lr:g}."
        else:
            self.lr_problem = ""
            if self._optimizer is not None:
                self._optimizer.lr = lr

    def is_lstm(self) -> bool:
        return isinstance(self.net, BookLSTM)

    def equations(self) -> list[str]:
        """The chosen variant's equations in the book's notation."""
        return book_equations(self.net)

    def diagram(self) -> Diagram:
        return book_diagram(self.net)

    def variant_text(self) -> str:
        """What the network is: its class, its variant and the forget gate's bias."""
        net = self.net
        if isinstance(net, BookGRU):
            return f"BookGRU: S = {net.S} neurons in each of the six layers."
        parts = [f"BookLSTM: S = {net.S} neurons in each of the six layers"]
        if not net.forget_gate:
            parts.append("no forget gate (a³ = 1: the original 1997 LSTM)")
        else:
            b3 = float(net.b[3][0])
            note = "" if b3 >= 1 else f" (below {_NLP}'s 1 or more: the gate starts half shut)"
            parts.append(f"forget-gate bias b³ = {b3:g} at the start{note}")
        parts.append("peepholes LW²˒⁵, LW³˒⁵, LW⁴˒⁵" if net.peephole else "no peepholes")
        return "; ".join(parts) + "."

    # ------------------------------------------------------------------ running
    def run(self) -> BookRun:
        """The network on the chosen signal, its trace and the reference system's answer."""
        p = signal(self.signal, int(self.steps))  # (T,)
        trace = self.net.forward(p[None, :, None])  # a[m]: (1, T, S)
        a7 = (trace.a[6] @ self.LW7.T + self.b7)[0, :, 0]  # (T,)
        return BookRun(p, trace, a7, SYSTEMS[self.system](p[None])[0])

    def values_text(self, run: BookRun, shown: int = 12) -> str:
        """Every layer's first neuron at the first ``shown`` steps, from the trace."""
        head = (
            "  t    p(t)" + "".join(f"{f'a{sup(m)}₁(t)':>10}" for m in range(1, 7)) + "     a⁷(t)"
        )
        rows = [head]
        for k in range(min(run.p.size, shown)):
            layers = "".join(f" {run.trace.a[m][0, k, 0]:+9.4f}" for m in range(1, 7))
            rows.append(f"{k + 1:3d} {run.p[k]:+7.3f}{layers} {run.a7[k]:+9.4f}")
        if not self.is_lstm() or self.forget_gate:
            return "\n".join(rows)
        return "\n".join([*rows, "(no forget gate: a³ is 1, not a layer)"])

    # ------------------------------------------------------------------ training
    def train(self, steps: int | None = None, budget_s: float | None = None) -> list[StepRecord]:
        """Adam steps on the read-out's mean squared error over mini-batches of the training
        sequences (``steps``, or as many as fit in ``budget_s`` seconds, at least one)."""
        if self.problem or self.lr_problem:
            self.running = False
            self.stopped = f"Not trained: {self.problem or self.lr_problem}"
            return []
        if self._optimizer is None:
            self._optimizer = Adam(self.params, lr=float(self.lr))
        records: list[StepRecord] = []
        start = time.perf_counter()
        n = self.u.shape[0] // TRAIN_BATCH
        while True:
            k = self._step % n
            batch = slice(k * TRAIN_BATCH, (k + 1) * TRAIN_BATCH)
            t0 = time.perf_counter()
            F, grads, _, _ = output_loss(self.net, self.LW7, self.b7, self.u[batch], self.y[batch])
            norm = float(np.sqrt(sum(float(np.sum(g * g)) for g in grads.values())))
            self._optimizer.step(grads)
            self._step += 1
            seconds = time.perf_counter() - t0
            self._record(self._step, F, seconds)
            records.append(StepRecord(self._step, F, norm, float(self.lr), seconds))
            if not np.isfinite(F):
                self.stop_training(f"The loss diverged at step {self._step}; Reset starts anew.")
                break
            done = len(records) >= steps if steps is not None else False
            if done or (steps is None and time.perf_counter() - start >= (budget_s or 0.1)):
                break
        self.status = self._status_text()
        return records

    def _status_text(self) -> str:
        if not self.history["step"]:
            return f"Untrained. {self.variant_text()}"
        loss = self.history["loss"][-1]
        return (
            f"Step {self._step}: mean squared error {loss:.5f} imitating {self.system}. "
            f"{self.variant_text()}"
        )
