"""The "Show as code" scripts of the two lessons trained by :func:`pyplay.dynamic.fit`.

:func:`as_code_dynamic` writes a short runnable script that rebuilds the lesson's setup with
pyplay natively and trains it step by step as the page does (same data, Adam, mini-batches,
clipping and seed; a diverging step undone), printing ``step N: loss X``. "timeseries"
(:class:`~pyplay.ui.narx_state.NARXState`): the bundled or pasted series, a NARX (or NAR)
network drawn from ``SEED`` as after the page's Reset, open-loop training, then closed-loop
errors on the held-out stretch. "dynamic" (:class:`~pyplay.ui.lddn_state.LDDNLessonState`):
the description as a dict literal and the weights as they are now (unless ``SEED`` draws
them), its equations in the book's notation, training on random levels through the
reference system, then the network on the lesson's input signal. Both save the model with
:func:`pyplay.io.save_model` (lesson, settings and loss curve in the meta: the page loads it)
and can continue one (``CHECKPOINT``). The fixed parts are templates; every value from the
lesson is checked and written with ``repr`` (:mod:`pyplay.ui.export`): data, never code.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pyplay.ui.export import EMBED_LIMIT, _call, _lit

__all__ = ["as_code_dynamic"]

_TITLES = {"timeseries": "Time series", "dynamic": "Dynamic networks"}

# ------------------------------------------------------------------ the fixed parts
_TS_IMPORTS = """\
import numpy as np

from pyplay.dynamic import LDDN, closeloop, fit, narxnet, preparets
from pyplay.dynamic.notation import equations
from pyplay.dynamic.train import OPTIMIZERS
from pyplay.io import load, load_model, save_model
from pyplay.tasks.sysid import parse_columns"""

_DYN_IMPORTS = """\
import numpy as np

from pyplay.dynamic import LDDN, fit
from pyplay.dynamic.notation import equations
from pyplay.dynamic.signals import SYSTEMS, random_levels, signal
from pyplay.dynamic.train import OPTIMIZERS
from pyplay.io import load, load_model, save_model"""

_RESUME = """\
optimizer = OPTIMIZERS[OPTIMIZER](net.params, lr=LR)
step = 0
if CHECKPOINT is not None:  # a model saved by the page (or by this script): continue it
    net = load_model(CHECKPOINT)
    optimizer = OPTIMIZERS[OPTIMIZER](net.params, lr=LR)
    ckpt = load(CHECKPOINT)
    if ckpt.optimizer_state:
        optimizer.load_state_dict(ckpt.optimizer_state)
    step = int(ckpt.meta.get("step", 0))"""

_LOOP = """\
log = {"step": [], "loss": []}  # the loss curve, saved with the model
for _ in range(STEPS):  # as the page: a step that makes a loss or weight non-finite is undone
    before = {k: v.copy() for k, v in net.params.items()}
    with np.errstate(over="ignore", invalid="ignore"):
        loss = float(next(losses))
    if not (np.isfinite(loss) and all(np.isfinite(v).all() for v in net.params.values())):
        for k, v in before.items():
            net.params[k][...] = v
        print("Training diverged; the weights before that step are kept. Try a smaller LR.")
        break
    step += 1
    log["step"].append(step)
    log["loss"].append(loss)
    if step % LOG_EVERY == 0:
        print(f"step {step}: loss {loss:.6f}")"""

_SAVE = """
# The model, its optimiser and the loss curve: load it with pyplay.io.load_model, or in the
# page (the lesson's settings come along).
meta = {"lesson": LESSON, "settings": SETTINGS, "history": log}
save_model(SAVE_TO, net, optimizer=optimizer, step=step, meta=meta)
print("saved to", SAVE_TO)"""

_TS_SETTINGS = """\
SETTINGS = dict(hidden_size=HIDDEN_SIZE, input_delays=INPUT_DELAYS,  # the page's, for its file
                feedback_delays=FEEDBACK_DELAYS, lr=LR, seed=SEED)"""

_DYN_SETTINGS = """\
SETTINGS = dict(preset=PRESET, signal=SIGNAL, steps=SIGNAL_STEPS,  # the page's, for its file
                system=SYSTEM, lr=LR, seed=SEED)"""

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

_TRAIN_DYNAMIC = """\
print("The network in the book's notation:", *equations(net), sep="\\n    ")

# Training: random levels through the reference system; the network learns to imitate it.
levels = random_levels(SEQUENCES, SEQ_LEN, rng=SEED)  # (SEQUENCES, SEQ_LEN)
targets = SYSTEMS[SYSTEM](levels)  # (SEQUENCES, SEQ_LEN)
losses = fit(net, levels[..., None], targets[..., None], STEPS, optimizer=optimizer,
             batch_size=BATCH, clip=1.0, rng=SEED)"""

_RUN = """\
print("After training:", *equations(net), sep="\\n    ")

# The trained network on the input signal, beside the reference system.
p = signal(SIGNAL, SIGNAL_STEPS, TYPED)  # (T,)
out, _ = net.forward(p[None, :, None])  # (1, T, 1)
reference = SYSTEMS[SYSTEM](p[None])[0]  # (T,)
for t, (pt, at, rt) in enumerate(zip(p, out[0, :, 0], reference, strict=True), start=1):
    print(f"t = {t}: p {pt:.4f}, a {at:.6f}, reference {rt:.6f}")
print(f"mean squared error on this input: {np.mean((out[0, :, 0] - reference) ** 2):.6f}")
"""

_TS_TAIL = "\n".join((_RESUME, _WINDOWS, _LOOP, _CLOSED + _SAVE))
_DYN_TAIL = "\n".join((_RESUME, _TRAIN_DYNAMIC, _LOOP, _RUN + _SAVE))


# ------------------------------------------------------------------ checked values
def _number(value: Any, what: str, whole: bool = False) -> str:
    """A finite number (a whole one with ``whole``) as Python source; ValueError otherwise."""
    if hasattr(value, "item") and getattr(value, "ndim", None) == 0:  # a NumPy scalar
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, int if whole else int | float):
        raise ValueError(f"{what} must be {'a whole' if whole else 'a'} number, got {value!r}")
    return _lit(value, what)


def _data(value: Any, what: str) -> str:
    """A dict (text keys) / list / plain value as a Python literal."""
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise ValueError(f"{what} must have text keys, got {list(value)!r}")
        return "{" + ", ".join(f"{k!r}: {_data(v, what)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_data(v, what) for v in value) + "]"
    return _lit(value, what)


def _dict_block(name: str, d: dict[str, Any], what: str) -> list[str]:
    """``NAME = {...}`` with one key a line."""
    return [f"{name} = {{", *[f"    {_data({k: v}, what)[1:-1]}," for k, v in d.items()], "}"]


def _text(name: str, text: Any, file: str, what: str, comment: str) -> list[str]:
    """The learner's ``text`` as a constant, or read from ``file`` beside the script when it
    is longer than :data:`~pyplay.ui.export.EMBED_LIMIT` characters."""
    if not isinstance(text, str):
        raise ValueError(f"{what} must be text, got {type(text).__name__}")
    if len(text) <= EMBED_LIMIT:
        return [f"{name} = {_lit(text, what)}  # {comment}"]
    return [f'{name} = Path("{file}").read_text(encoding="utf-8")  # too long to write here']


def _head(lesson: str, state: Any, steps: int, log_every: int, imports: str) -> list[str]:
    """The script's docstring, imports and the constants both lessons have."""
    from pyplay.dynamic.train import OPTIMIZERS

    current = getattr(state, "_optimizer", None)  # the lessons build Adam
    if current is not None and type(current) is not OPTIMIZERS["adam"]:
        raise ValueError(f"the optimiser must be Adam, got {type(current).__name__}")
    return [
        f'"""The "{_TITLES[lesson]}" lesson of the pyplay playground, natively (made by "Show',
        'as code"). Run it with python; change STEPS, or set CHECKPOINT to a saved model."""',
        "",
        *imports.splitlines(),
        "",
        f"STEPS = {_number(steps, 'steps', whole=True)}",
        f"LOG_EVERY = {_number(log_every, 'log_every', whole=True)}",
        f"SEED = {_number(state.seed, 'the seed', whole=True)}",
        'CHECKPOINT = None  # e.g. "pyplay-model.npz" saved by the page, to continue it',
        'SAVE_TO = "pyplay-model.npz"',
        f"LESSON = {_lit(lesson, 'the lesson')}",
        'OPTIMIZER = "adam"',
        f"LR = {_number(state.lr, 'the learning rate')}",
    ]


# ------------------------------------------------------------------ Time series
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
    data = _text("DATA", text, "my_series.csv", "the pasted series", "your series (CSV)")
    return [*data, "", *_PASTED.splitlines()]


def _timeseries(state: Any, steps: int, log_every: int) -> list[str]:
    from pyplay.ui.narx_state import BATCH, WINDOW_LEN, WINDOWS

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
    return [
        *_head("timeseries", state, steps, log_every, imports),
        *[f"{k} = {_number(v, k.lower(), whole=True)}  # {c}" for k, (v, c) in sizes.items()],
        f"WINDOWS, WINDOW_LEN, BATCH = {WINDOWS!r}, {WINDOW_LEN!r}, {BATCH!r}"
        "  # training windows, their length, per step",
        *_TS_SETTINGS.splitlines(),
        "",
        *series,
        "",
        *(_NAR if pasted else _NARX).splitlines(),
        *_TS_TAIL.splitlines(),
    ]


# ------------------------------------------------------------------ Dynamic networks
def _weights(state: Any) -> list[str]:
    """``WEIGHTS = {...}``: the network's weights when ``SEED`` does not draw them (the
    preset's, kept through an edit, or trained), else ``{}``."""
    from pyplay.dynamic import LDDN

    net = state.net
    drawn = LDDN(net.spec, dtype=net.dtype, rng=int(state.seed)).params
    if all(np.array_equal(drawn[k], v) for k, v in net.params.items()):
        return ["", "WEIGHTS = {}  # none given: all drawn from SEED (name: nested list)"]
    note = "# The network's weights as they are now (delays first; see pyplay.dynamic.lddn)"
    if trained := int(getattr(state, "_step", 0)):
        note = f"# The weights as they are now, after {trained} steps in the page (Adam anew)"
    block = _dict_block("WEIGHTS", {k: v.tolist() for k, v in net.params.items()}, "a weight")
    if sum(map(len, block)) > EMBED_LIMIT:
        note += ", too many to write here: the page's Download model (.npz), saved as that file"
        block = ['WEIGHTS = load("my_weights.npz").params']
    return ["", note, *block]


def _dynamic(state: Any, steps: int, log_every: int) -> list[str]:
    from pyplay.dynamic.signals import SIGNALS, SYSTEMS, signal
    from pyplay.dynamic.spec import to_dict
    from pyplay.ui.lddn_state import TRAIN_BATCH, TRAIN_STEPS

    net, head = state.net, _head("dynamic", state, steps, log_every, _DYN_IMPORTS)
    if net.input_size != 1 or net.output_size != 1:
        raise ValueError(
            "the lesson trains one-input, one-output networks only; this one has "
            f"{net.input_size} input element(s) and {net.output_size} output(s)"
        )
    checks = (("system", state.system, SYSTEMS), ("signal", state.signal, SIGNALS))
    for what, value, known in checks:
        if value not in known:
            raise ValueError(f"the {what} must be one of {', '.join(known)}, got {value!r}")
    if state.signal == "typed":
        try:
            signal("typed", 1, state.typed)
        except (ValueError, TypeError) as err:
            raise ValueError(f"the typed input is not usable: {err}") from None
    typed = _text("TYPED", state.typed, "my_input.txt", "the typed input", 'for SIGNAL "typed"')
    weights = _weights(state)
    dtype = [] if net.dtype == np.float64 else [f"dtype={_lit(net.dtype.name, 'dtype')}"]
    if "Path(" in typed[0]:
        head[3:3] = ["from pathlib import Path", ""]
    return [
        *head,
        f"SYSTEM = {_lit(state.system, 'the system')}  # to imitate: {', '.join(SYSTEMS)}",
        f"SIGNAL = {_lit(state.signal, 'the signal')}  # to run on: {', '.join(SIGNALS)}",
        f"SIGNAL_STEPS = {_number(state.steps, 'the signal length', whole=True)}",
        *typed,
        f"SEQUENCES, SEQ_LEN, BATCH = {4 * TRAIN_BATCH!r}, {TRAIN_STEPS!r}, {TRAIN_BATCH!r}"
        "  # random-level inputs, per step",
        f"PRESET = {_lit(state.preset, 'the preset')}  # the page's preset (where this started)",
        *_DYN_SETTINGS.splitlines(),
        "",
        "# The network as data (see pyplay.dynamic.spec); weights not given are drawn from SEED.",
        *_dict_block("DESCRIPTION", to_dict(net.spec), "the description"),
        *weights,
        "",
        *_call("net = LDDN", ["DESCRIPTION", *dtype, "rng=SEED"]),
        "for name, value in WEIGHTS.items():",
        "    net.params[name][...] = value",
        *_DYN_TAIL.splitlines(),
    ]


def as_code_dynamic(lesson: str, state: Any, *, steps: int, log_every: int) -> str:
    """A short runnable script that rebuilds a ``pyplay.dynamic.fit`` lesson and trains it.

    Parameters
    ----------
    lesson : {"timeseries", "dynamic"}
    state : NARXState or LDDNLessonState (its network in ``state.net``)
    steps : int
        Training steps the script runs (``STEPS`` at its top).
    log_every : int
        The script prints the loss every ``log_every`` steps.

    Returns
    -------
    str
        Python source: it prints ``step N: loss X`` as the lesson's own training from the same
        start does, and saves the model to ``pyplay-model.npz``.

    Raises
    ------
    ValueError
        Unknown lesson, no model, a network the lesson cannot train, or a value that is not
        plain (the message names it).
    """
    if lesson not in _TITLES:
        raise ValueError(f"lesson must be one of {', '.join(_TITLES)}, got {lesson!r}")
    if getattr(state, "net", None) is None:
        raise ValueError("the lesson has no model yet: fix its settings first")
    write = _timeseries if lesson == "timeseries" else _dynamic
    return "\n".join(write(state, steps, log_every)) + "\n"
