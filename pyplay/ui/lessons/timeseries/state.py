r"""State of the "Time series" lesson: identify a dynamic system with a NARX network.

Open loop (series-parallel) for training: the network sees the measured past outputs,

.. math::

    \hat y(t) = f\bigl(u(t-1), \dots, u(t-d_u),\; y(t-1), \dots, y(t-d_y)\bigr);

closed loop (parallel) for multi-step prediction: its own past predictions replace the
measured ones, :math:`\hat y(t) = f(u(t-1), \dots, \hat y(t-1), \dots)`, so errors can
accumulate. :func:`~pyplay.dynamic.networks.closeloop` converts the trained network, sharing
its weights. The series is the bundled Narendra plant, or the user's CSV (one column ``y``:
a NAR network without exogenous input; two columns ``u, y``). No Panel here; errors become
messages and keep the trained network and the user's text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import param

from pyplay.dynamic import LDDN, closeloop, narxnet, preparets
from pyplay.dynamic.train import OPTIMIZERS
from pyplay.tasks.sysid import load_narendra, parse_columns
from pyplay.ui.base_state import LessonBase, lr_param, seed_param
from pyplay.ui.checkpoint import LoadedFile, same_model
from pyplay.ui.lddn_notation import equations
from pyplay.ui.lessons.rnn.state import LessonState
from pyplay.ui.trainer_lesson import FitLesson

__all__ = ["NARXState", "Prediction"]

WINDOWS, WINDOW_LEN, BATCH = 256, 40, 32


@dataclass(frozen=True)
class Prediction:
    """The held-out stretch: ``t`` (N,), measured ``y`` (N,), open-loop one-step predictions
    ``open`` (N,), closed-loop free-run predictions ``closed`` (N,), their mean squared errors
    and that of predicting the training mean (``baseline``)."""

    t: np.ndarray
    y: np.ndarray
    open: np.ndarray
    closed: np.ndarray
    mse_open: float
    mse_closed: float
    baseline: float


def _nar(d_y: int, hidden: int, rng: int) -> LDDN:
    """A NAR network: the open-loop form has one input, the measured y, fed back when closed."""
    return LDDN(
        {
            "inputs": [1],
            "layers": [{"size": hidden, "transfer": "tansig"}, {"size": 1, "transfer": "purelin"}],
            "input_weights": [{"to": 1, "from": 1, "delays": list(range(1, d_y + 1))}],
            "layer_weights": [{"to": 2, "from": 1, "delays": [0]}],
            "feedback": [{"input": 1, "layer": 2}],
        },
        rng=rng,
    )


class NARXState(FitLesson, LessonBase):
    """Settings and actions of the time-series lesson (files: ``save_bytes`` and
    ``load_bytes`` of :class:`~pyplay.ui.checkpoint.SavableLesson`)."""

    hidden_size = param.Integer(default=10, bounds=(1, 64))
    input_delays = param.Integer(default=2, bounds=(1, 10))  # u(t-1) .. u(t-d_u)
    feedback_delays = param.Integer(default=2, bounds=(1, 10))  # y(t-1) .. y(t-d_y)
    lr = lr_param(0.01)
    seed = seed_param()
    loop = param.Selector(objects=["open", "closed"], default="open")

    weights_version = param.Integer(default=0)

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.source = "Narendra plant (bundled)"
        self.u: np.ndarray | None
        self.u, self.y = load_narendra()  # (N,), (N,)
        self.n_train = self.y.size - 500
        self.user_text = ""
        self.net: LDDN = _nar(1, 1, 0)
        self._elapsed, self._step = 0.0, 0
        self._fit: Any = None
        self._optimizer: Any = None
        self.reset()
        self.param.watch(
            self._quiet(self.reset), ["hidden_size", "input_delays", "feedback_delays", "seed"]
        )
        self.param.watch(self._quiet(self._restart_training), ["lr"])

    def model_name(self) -> str:
        """What saved work calls this network, e.g. "NARX, 10 neurons, delays 2 and 2"."""
        return (
            f"NARX, {self.hidden_size} neurons, delays {self.input_delays} and "
            f"{self.feedback_delays}"
        )

    @property
    def history_len(self) -> int:
        """Steps before the first prediction (initial conditions)."""
        return max(self.input_delays if self.u is not None else 0, self.feedback_delays)

    def reset(self) -> bool:
        """A fresh open-loop network for the current series and settings."""
        self.running = False
        self.net = self._build_net()
        self.history = {"step": [], "loss": []}
        self._elapsed, self._step = 0.0, 0
        self._fit = self._optimizer = None
        self.version += 1
        self.status = self._status_text()
        return True

    def _build_net(self) -> LDDN:
        """A fresh open-loop network for the current series and settings."""
        if self.u is None:
            return _nar(self.feedback_delays, self.hidden_size, self.seed)
        du, dy = range(1, self.input_delays + 1), range(1, self.feedback_delays + 1)
        return narxnet(du, dy, (self.hidden_size,), rng=self.seed)

    # ------------------------------------------------------------------ files

    def _file_prepare(self, loaded: LoadedFile) -> Any:
        same_model(loaded.model, self._build_net())
        optimizer = OPTIMIZERS["adam"](loaded.model.params, lr=self.lr)
        if loaded.optimizer_state:
            optimizer.load_state_dict(loaded.optimizer_state)
            optimizer.lr = float(self.lr)  # the rate the page shows, not one hidden in the file

        def commit() -> None:
            self.net, self._optimizer, self._fit = loaded.model, optimizer, None
            self._step = loaded.step
            self.weights_version += 1

        return commit

    def set_user_series(self, data: bytes | str) -> bool:
        """Use the user's CSV (validated: see :func:`~pyplay.tasks.sysid.parse_columns`);
        standardised with the mean and deviation of its first 80 %."""
        try:
            text = LessonState._decode(data, "the series")
            u, y = parse_columns(text)
        except (ValueError, TypeError) as err:
            self.notify(f"Series not used: {err}", "danger")
            return False
        n_train = int(0.8 * y.size)

        def standard(x: np.ndarray) -> np.ndarray:
            std = float(x[:n_train].std()) or 1.0
            return (x - x[:n_train].mean()) / std

        self.user_text = text
        self.u, self.y = (None if u is None else standard(u)), standard(y)
        self.n_train = n_train
        self.source = f"your series ({y.size} rows, {'u, y' if u is not None else 'y only'})"
        self.reset()
        self.notify(
            f"Using {self.source}; the last {y.size - n_train} rows are held out.", "success"
        )
        return True

    def use_bundled(self) -> None:
        self.u, self.y = load_narendra()
        self.n_train = self.y.size - 500
        self.source = "Narendra plant (bundled)"
        self.reset()

    # ------------------------------------------------------------------ training
    def _series(self, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
        y = self.y[None, lo:hi, None]  # (1, n, 1)
        u = (
            np.zeros((1, hi - lo, 0)) if self.u is None else self.u[None, lo:hi, None]
        )  # (1, n, R_u)
        return u, y

    def _windows(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        L = WINDOW_LEN + self.history_len
        gen = np.random.default_rng(self.seed)
        starts = gen.integers(0, self.n_train - L + 1, size=WINDOWS)  # (W,)
        idx = starts[:, None] + np.arange(L)[None, :]  # (W, L)
        y = self.y[idx][..., None]  # (W, L, 1)
        u = np.zeros((WINDOWS, L, 0)) if self.u is None else self.u[idx][..., None]  # (W, L, R_u)
        prepared = preparets(self.net, u, y)
        return prepared.p, prepared.p0, prepared.targets

    def _fit_arguments(self) -> tuple[Any, Any, dict[str, Any]]:
        """Open-loop training: mini-batches of windows of the training stretch."""
        p, p0, targets = self._windows()
        return p, targets, {"p0": p0, "batch_size": BATCH}

    loss_name = "open-loop MSE"

    def _untrained_note(self) -> str:
        return f" ({self.source})."

    # ------------------------------------------------------------------ prediction
    def equations(self) -> list[str]:
        """The network's equations in the form of the current ``loop``."""
        net = self.net if self.loop == "open" else closeloop(self.net)
        return equations(net.spec)

    def predict(self) -> Prediction:
        """One-step (open loop) and free-run (closed loop) predictions of the held-out stretch,
        both started from the same measured initial conditions."""
        h = self.history_len
        u, y = self._series(self.n_train - h, self.y.size)  # (1, h + n, .)
        op = preparets(self.net, u, y)
        one, _ = self.net.forward(op.p, op.a0, op.p0)  # (1, n', 1)
        closed = closeloop(self.net)
        cp = preparets(closed, u, y)
        free, _ = closed.forward(cp.p, cp.a0, cp.p0)  # (1, n'', 1)
        n = self.y.size - self.n_train
        measured = self.y[self.n_train :]  # (n,)
        one_step, free_run = one[0, -n:, 0], free[0, -n:, 0]  # (n,) each
        baseline = float(np.mean((measured - self.y[: self.n_train].mean()) ** 2))
        return Prediction(
            np.arange(self.n_train, self.y.size),
            measured,
            one_step,
            free_run,
            float(np.mean((one_step - measured) ** 2)),
            float(np.mean((free_run - measured) ** 2)),
            baseline,
        )
