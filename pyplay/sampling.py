"""Sampling text from a trained character model, one character at a time.

The prompt is read in one forward pass; then each step feeds the last character with the
carried recurrent state and draws the next one from

.. math::

    p(x_{t+1} = v) \\propto \\exp(z_v / \\tau),

with temperature :math:`\\tau`: below 1 sharper (towards the most likely character), above 1
flatter (more surprising). ``temperature=0`` means greedy (argmax) decoding.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pyplay._checks import as_generator, check_float, check_int
from pyplay.losses import softmax

__all__ = ["sample"]


def sample(
    model: Any,
    task: Any,
    prompt: str,
    length: int = 200,
    temperature: float = 1.0,
    rng: np.random.Generator | int | None = 0,
) -> str:
    """Continue ``prompt`` by ``length`` characters drawn from ``model``.

    Parameters
    ----------
    model : SequenceModel over the task's characters (token inputs, class outputs)
    task : CharLM (its ``encode`` / ``decode`` and vocabulary)
    prompt : str
        At least one character, every one in the vocabulary (else a ValueError naming it).
    length : int
        Characters to generate (1..10000).
    temperature : float
        0 for greedy decoding, else > 0.
    rng : Generator or seed for the draws.
    """
    if not hasattr(task, "encode") or not hasattr(task, "decode"):
        raise TypeError(f"task must be a character model task, got {type(task).__name__}")
    if not isinstance(prompt, str) or not prompt:
        raise ValueError(f"prompt must be a non-empty string, got {prompt!r}")
    length = check_int("length", length, min_value=1, max_value=10_000)
    temperature = check_float("temperature", temperature, min_value=0.0, max_value=100.0)
    gen = as_generator(rng)
    ids = task.encode(prompt)[None, :]  # (1, P)
    logits, state, _ = model.forward(ids, training=False)  # (1, P, V)
    z = logits[0, -1].astype(np.float64)  # (V,)
    out = []
    for _ in range(length):
        if temperature == 0.0:
            nxt = int(np.argmax(z))
        else:
            p = softmax(z / temperature)  # (V,)
            nxt = int(gen.choice(p.size, p=p))
        out.append(nxt)
        logits, state, _ = model.forward(np.array([[nxt]]), state, training=False)  # (1, 1, V)
        z = logits[0, -1].astype(np.float64)
    return task.decode(np.array(out))
