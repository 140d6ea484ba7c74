"""The "show as code" script of the "Dynamic networks" lesson
(:class:`~pyplay.ui.lessons.dynamic.state.LDDNLessonState`): the description as a dict literal
and the weights as they are now (unless ``SEED`` draws them), its equations in the book's
notation, training on random levels through the reference system, then the network on the
lesson's input signal; the shared parts are :mod:`pyplay.ui.export_dynamic`'s.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pyplay.ui.code_values import call_lines, literal
from pyplay.ui.export import EMBED_LIMIT, require_model
from pyplay.ui.export_dynamic import (
    LOOP,
    RESUME,
    SAVE,
    dict_block,
    fit_head,
    number,
    text_constant,
)

__all__ = ["as_code"]

_DYN_IMPORTS = """\
import numpy as np

from pyplay.dynamic import LDDN, delayed_layers, fit, initial_outputs
from pyplay.ui.lddn_notation import equations
from pyplay.tasks.signals import SYSTEMS, random_levels, signal
from pyplay.dynamic.train import OPTIMIZERS
from pyplay.io import load, load_model, save_model"""

_DYN_SETTINGS = """\
SETTINGS = dict(preset=PRESET, signal=SIGNAL, steps=SIGNAL_STEPS,  # the page's, for its file
                a0=A0, system=SYSTEM, lr=LR, seed=SEED)"""

_TRAIN_DYNAMIC = """\
print("The network in the book's notation:", *equations(net), sep="\\n    ")

# Training: random levels through the reference system; the network learns to imitate it.
levels = random_levels(SEQUENCES, SEQ_LEN, rng=SEED)  # (SEQUENCES, SEQ_LEN)
targets = SYSTEMS[SYSTEM](levels)  # (SEQUENCES, SEQ_LEN)
losses = fit(net, levels[..., None], targets[..., None], STEPS, optimizer=optimizer,
             batch_size=BATCH, clip=1.0, rng=SEED)"""

_RUN = """\
print("After training:", *equations(net), sep="\\n    ")

# The trained network on the input signal, beside the reference system (which starts at rest);
# a(0) = A0 for every layer read through a delay, older initial values 0.
p = signal(SIGNAL, SIGNAL_STEPS, TYPED)  # (T,)
a0 = initial_outputs(net, dict.fromkeys(delayed_layers(net), A0))  # (1, DL, S)
out, _ = net.forward(p[None, :, None], a0)  # (1, T, 1)
reference = SYSTEMS[SYSTEM](p[None])[0]  # (T,)
for t, (pt, at, rt) in enumerate(zip(p, out[0, :, 0], reference, strict=True), start=1):
    print(f"t = {t}: p {pt:.4f}, a {at:.6f}, reference {rt:.6f}")
print(f"mean squared error on this input: {np.mean((out[0, :, 0] - reference) ** 2):.6f}")
"""

_DYN_TAIL = "\n".join((RESUME, _TRAIN_DYNAMIC, LOOP, _RUN + SAVE))


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
    block = dict_block("WEIGHTS", {k: v.tolist() for k, v in net.params.items()}, "a weight")
    if sum(map(len, block)) > EMBED_LIMIT:
        note += ", too many to write here: the page's Download model (.npz), saved as that file"
        block = ['WEIGHTS = load("my_weights.npz").params']
    return ["", note, *block]


def as_code(spec: Any, state: Any, *, steps: int, log_every: int) -> str:
    """The lesson's script (see :func:`pyplay.ui.export.as_code`)."""
    require_model(state, "net", trainer=False)
    from pyplay.dynamic.spec import to_dict
    from pyplay.tasks.signals import SIGNALS, SYSTEMS, signal
    from pyplay.ui.lessons.dynamic.state import TRAIN_BATCH, TRAIN_STEPS

    net, head = state.net, fit_head(spec, state, steps, log_every, _DYN_IMPORTS)
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
    typed = text_constant(
        "TYPED", state.typed, "my_input.txt", "the typed input", 'for SIGNAL "typed"'
    )
    weights = _weights(state)
    dtype = [] if net.dtype == np.float64 else [f"dtype={literal(net.dtype.name, 'dtype')}"]
    if "Path(" in typed[0]:
        head[3:3] = ["from pathlib import Path", ""]
    lines = [
        *head,
        f"SYSTEM = {literal(state.system, 'the system')}  # to imitate: {', '.join(SYSTEMS)}",
        f"SIGNAL = {literal(state.signal, 'the signal')}  # to run on: {', '.join(SIGNALS)}",
        f"SIGNAL_STEPS = {number(state.steps, 'the signal length', whole=True)}",
        f"A0 = {number(state.a0, 'the initial output a(0)')}  # of the layers read through delays",
        *typed,
        f"SEQUENCES, SEQ_LEN, BATCH = {4 * TRAIN_BATCH!r}, {TRAIN_STEPS!r}, {TRAIN_BATCH!r}"
        "  # random-level inputs, per step",
        f"PRESET = {literal(state.preset, 'the preset')}  # the page's preset (where this started)",
        *_DYN_SETTINGS.splitlines(),
        "",
        "# The network as data (see pyplay.dynamic.spec); weights not given are drawn from SEED.",
        *dict_block("DESCRIPTION", to_dict(net.spec), "the description"),
        *weights,
        "",
        *call_lines("net = LDDN", ["DESCRIPTION", *dtype, "rng=SEED"]),
        "for name, value in WEIGHTS.items():",
        "    net.params[name][...] = value",
        *_DYN_TAIL.splitlines(),
    ]
    return "\n".join(lines) + "\n"
