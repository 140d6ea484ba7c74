"""What the "show as code" scripts of the lessons trained by :func:`pyplay.dynamic.fit` share
(``lessons/timeseries/code.py`` and ``lessons/dynamic/code.py`` write the rest).

Each script rebuilds its lesson's setup with pyplay natively and trains it step by step as the
page does (same data, Adam, mini-batches, clipping and seed; a diverging step undone),
printing ``step N: loss X``; it saves the model with :func:`pyplay.io.save_model` (lesson,
settings and loss curve in the meta: the page loads it) and can continue one
(``CHECKPOINT``). The fixed parts are templates (:data:`RESUME`, :data:`LOOP`, :data:`SAVE`);
every value from the lesson is checked and written with ``repr`` (:mod:`pyplay.ui.export`):
data, never code.
"""

from __future__ import annotations

from typing import Any

from pyplay.ui.code_values import literal
from pyplay.ui.export import EMBED_LIMIT

__all__ = [
    "LOOP",
    "RESUME",
    "SAVE",
    "data_literal",
    "dict_block",
    "fit_head",
    "number",
    "text_constant",
]


# ------------------------------------------------------------------ the fixed parts
RESUME = """\
optimizer = OPTIMIZERS[OPTIMIZER](net.params, lr=LR)
step = 0
if CHECKPOINT is not None:  # a model saved by the page (or by this script): continue it
    net = load_model(CHECKPOINT)
    optimizer = OPTIMIZERS[OPTIMIZER](net.params, lr=LR)
    ckpt = load(CHECKPOINT)
    if ckpt.optimizer_state:
        optimizer.load_state_dict(ckpt.optimizer_state)
    step = int(ckpt.meta.get("step", 0))"""

LOOP = """\
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

SAVE = """
# The model, its optimiser and the loss curve: load it with pyplay.io.load_model, or in the
# page (the lesson's settings come along).
meta = {"lesson": LESSON, "settings": SETTINGS, "history": log}
save_model(SAVE_TO, net, optimizer=optimizer, step=step, meta=meta)
print("saved to", SAVE_TO)"""


# ------------------------------------------------------------------ checked values
def number(value: Any, what: str, whole: bool = False) -> str:
    """A finite number (a whole one with ``whole``) as Python source; ValueError otherwise."""
    if hasattr(value, "item") and getattr(value, "ndim", None) == 0:  # a NumPy scalar
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, int if whole else int | float):
        raise ValueError(f"{what} must be {'a whole' if whole else 'a'} number, got {value!r}")
    return literal(value, what)


def data_literal(value: Any, what: str) -> str:
    """A dict (text keys) / list / plain value as a Python literal."""
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise ValueError(f"{what} must have text keys, got {list(value)!r}")
        return "{" + ", ".join(f"{k!r}: {data_literal(v, what)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(data_literal(v, what) for v in value) + "]"
    return literal(value, what)


def dict_block(name: str, d: dict[str, Any], what: str) -> list[str]:
    """``NAME = {...}`` with one key a line."""
    return [
        f"{name} = {{",
        *[f"    {data_literal({k: v}, what)[1:-1]}," for k, v in d.items()],
        "}",
    ]


def text_constant(name: str, text: Any, file: str, what: str, comment: str) -> list[str]:
    """The learner's ``text`` as a constant, or read from ``file`` beside the script when it
    is longer than :data:`~pyplay.ui.export.EMBED_LIMIT` characters."""
    if not isinstance(text, str):
        raise ValueError(f"{what} must be text, got {type(text).__name__}")
    if len(text) <= EMBED_LIMIT:
        return [f"{name} = {literal(text, what)}  # {comment}"]
    return [f'{name} = Path("{file}").read_text(encoding="utf-8")  # too long to write here']


def fit_head(spec: Any, state: Any, steps: int, log_every: int, imports: str) -> list[str]:
    """The script's docstring, imports and the constants both lessons have."""
    from pyplay.dynamic.train import OPTIMIZERS

    current = getattr(state, "_optimizer", None)  # the lessons build Adam
    if current is not None and type(current) is not OPTIMIZERS["adam"]:
        raise ValueError(f"the optimiser must be Adam, got {type(current).__name__}")
    return [
        f'"""The "{spec.title}" lesson of the pyplay playground, natively (made by "Show',
        'as code"). Run it with python; change STEPS, or set CHECKPOINT to a saved model."""',
        "",
        *imports.splitlines(),
        "",
        f"STEPS = {number(steps, 'steps', whole=True)}",
        f"LOG_EVERY = {number(log_every, 'log_every', whole=True)}",
        f"SEED = {number(state.seed, 'the seed', whole=True)}",
        'CHECKPOINT = None  # e.g. "pyplay-model.npz" saved by the page, to continue it',
        'SAVE_TO = "pyplay-model.npz"',
        f"LESSON = {literal(spec.key, 'the lesson')}",
        'OPTIMIZER = "adam"',
        f"LR = {number(state.lr, 'the learning rate')}",
    ]
