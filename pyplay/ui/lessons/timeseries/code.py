"""The "show as code" script of the "Time series" lesson
(:class:`~pyplay.ui.lessons.timeseries.state.NARXState`): the bundled or pasted series, a NARX
(or NAR) network drawn from ``SEED`` as after the page's Reset, open-loop training, then
closed-loop errors on the held-out stretch; the shared parts are
:mod:`pyplay.ui.export_dynamic`'s.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pyplay.ui.export import require_model
from pyplay.ui.export_dynamic import (
    LOOP,
    RESUME,
    SAVE,
    fit_head,
    number,
    text_constant,
)

__all__ = ["as_code"]

_TS_IMPORTS = """\
import numpy as np

from pyplay.dynamic import LDDN, closeloop, fit, narxnet, preparets
from pyplay.ui.lddn_notation import equations
from pyplay.dynamic.train import OPTIMIZERS
from pyplay.io import load, load_model, save_model
from pyplay.tasks.sysid import parse_columns"""

_TS_SETTINGS = """\
SETTINGS = dict(hidden_size=HIDDEN_SIZE, input_delays=INPUT_DELAYS,  # the page's, for its file
                feedback_delays=FEEDBACK_DELAYS, lr=LR, seed=SEED)"""

_BUNDLED = """\
# The series: the bundled Narendra plant; its last 500 samples are held out.
u, y = load_narendra()  # (N,), (N,)
n_train = y.size - 500"""

_PASTED = """\
# The series: yours (y, or u and y), standardised with the mean and deviation of its first
# 80 %; the rest is held out.
u, y = parse_columns(DATA)  # u is None for one column
n_train = int(0.8 * y.size)


def standard(x):
    std = float(x[:n_train].std()) or 1.0
    return (x - x[:n_train].mean()) / std


u, y = (None if u is None else standard(u)), standard(y)"""

_NAR = """\
# Open loop (series-parallel): the network sees the measured past outputs y.
du, dy = range(1, INPUT_DELAYS + 1), range(1, FEEDBACK_DELAYS + 1)
if u is None:  # one column: a NAR network, the measured y its only input
    layers = [{"size": HIDDEN_SIZE, "transfer": "tansig"}, {"size": 1, "transfer": "purelin"}]
    net = LDDN({"inputs": [1], "layers": layers, "feedback": [{"input": 1, "layer": 2}],
                "input_weights": [{"to": 1, "from": 1, "delays": list(dy)}],
                "layer_weights": [{"to": 2, "from": 1, "delays": [0]}]}, rng=SEED)
else:
    net = narxnet(du, dy, (HIDDEN_SIZE,), rng=SEED)
history = max(0 if u is None else INPUT_DELAYS, FEEDBACK_DELAYS)  # initial steps"""

_NARX = """\
# Open loop (series-parallel): the network sees the measured past outputs y.
du, dy = range(1, INPUT_DELAYS + 1), range(1, FEEDBACK_DELAYS + 1)
net = narxnet(du, dy, (HIDDEN_SIZE,), rng=SEED)
history = max(INPUT_DELAYS, FEEDBACK_DELAYS)  # steps before the first prediction"""

_WINDOWS = """\
L = WINDOW_LEN + history
starts = np.random.default_rng(SEED).integers(0, n_train - L + 1, size=WINDOWS)
idx = starts[:, None] + np.arange(L)[None, :]  # (WINDOWS, L)
U = np.zeros((WINDOWS, L, 0)) if u is None else u[idx][..., None]  # (WINDOWS, L, R_u)
windows = preparets(net, U, y[idx][..., None])  # inputs, initial inputs, targets
losses = fit(net, windows.p, windows.targets, STEPS, optimizer=optimizer, p0=windows.p0,
             batch_size=BATCH, clip=1.0, rng=SEED)"""

_CLOSED = """\

# Closed loop (parallel): the network's own predictions replace the measured y, so errors
# can accumulate. closeloop shares the trained weights.
closed = closeloop(net)
print("closed loop:", *equations(closed), sep="\\n    ")
lo = n_train - history
U = np.zeros((1, y.size - lo, 0)) if u is None else u[None, lo:, None]
Y = y[None, lo:, None]  # the held-out stretch and the steps before it
op, cp = preparets(net, U, Y), preparets(closed, U, Y)
one_step, _ = net.forward(op.p, op.a0, op.p0)  # (1, T, 1)
free_run, _ = closed.forward(cp.p, cp.a0, cp.p0)  # (1, T, 1)
n, measured = y.size - n_train, y[n_train:]
mse_open = float(np.mean((one_step[0, -n:, 0] - measured) ** 2))
mse_closed = float(np.mean((free_run[0, -n:, 0] - measured) ** 2))
baseline = float(np.mean((measured - y[:n_train].mean()) ** 2))
print(f"held out ({n} steps): one-step MSE {mse_open:.6f} (open loop), "
      f"free-run MSE {mse_closed:.6f} (closed loop), the mean {baseline:.6f}")
"""

_TS_TAIL = "\n".join((RESUME, _WINDOWS, LOOP, _CLOSED + SAVE))


def _series(state: Any) -> list[str]:
    """The lines giving ``u`` (None for a y-only series), ``y`` and ``n_train``; ValueError
    unless they reproduce the lesson's series exactly."""
    from pyplay.tasks.sysid import load_narendra, parse_columns

    def same(a: np.ndarray | None, b: np.ndarray | None) -> bool:
        return a is b if a is None or b is None else bool(np.array_equal(a, b))

    bu, by = load_narendra()
    if same(state.u, bu) and same(state.y, by) and state.n_train == by.size - 500:
        return _BUNDLED.splitlines()
    text = getattr(state, "user_text", "")
    try:  # the pasted series, standardised as the page does (and as the script will)
        u, y = parse_columns(text)
    except (ValueError, TypeError):
        u = y = None
    n_train = 0 if y is None else int(0.8 * y.size)

    def standard(x: np.ndarray | None) -> np.ndarray | None:
        if x is None:
            return None
        return (x - x[:n_train].mean()) / (float(x[:n_train].std()) or 1.0)

    if y is None or not (
        same(state.u, standard(u)) and same(state.y, standard(y)) and state.n_train == n_train
    ):
        raise ValueError("the lesson's series is neither the bundled one nor the pasted text")
    data = text_constant("DATA", text, "my_series.csv", "the pasted series", "your series (CSV)")
    return [*data, "", *_PASTED.splitlines()]


def as_code(spec: Any, state: Any, *, steps: int, log_every: int) -> str:
    """The lesson's script (see :func:`pyplay.ui.export.as_code`)."""
    require_model(state, "net", trainer=False)
    from pyplay.ui.lessons.timeseries.state import BATCH, WINDOW_LEN, WINDOWS

    series = _series(state)
    pasted = series[0].startswith("DATA")
    imports = _TS_IMPORTS if pasted else _TS_IMPORTS.replace("LDDN, ", "")
    imports = imports.replace("parse_columns", "parse_columns" if pasted else "load_narendra")
    imports = ("from pathlib import Path\n\n" if "Path(" in series[0] else "") + imports
    sizes = {
        "HIDDEN_SIZE": (state.hidden_size, "neurons of the hidden layer (tansig)"),
        "INPUT_DELAYS": (state.input_delays, "u(t-1) .. u(t-INPUT_DELAYS)"),
        "FEEDBACK_DELAYS": (state.feedback_delays, "y(t-1) .. y(t-FEEDBACK_DELAYS)"),
    }
    lines = [
        *fit_head(spec, state, steps, log_every, imports),
        *[f"{k} = {number(v, k.lower(), whole=True)}  # {c}" for k, (v, c) in sizes.items()],
        f"WINDOWS, WINDOW_LEN, BATCH = {WINDOWS!r}, {WINDOW_LEN!r}, {BATCH!r}"
        "  # training windows, their length, per step",
        *_TS_SETTINGS.splitlines(),
        "",
        *series,
        "",
        *(_NAR if pasted else _NARX).splitlines(),
        *_TS_TAIL.splitlines(),
    ]
    return "\n".join(lines) + "\n"
