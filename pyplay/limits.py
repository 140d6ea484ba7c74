"""Limits on sizes, declared once: the constructors, the file loaders and the page read them.

pyplay runs in a browser tab (Pyodide: one 32-bit address space of at most 4 GiB, shared with
the page) as well as natively, so every size that a user, an address or a file can choose is
checked *before* anything of that size is allocated, and refused with a ``ValueError`` that
names the argument, the limit and what was given. The figures are far above what a lesson
needs (the largest page model has about 200,000 parameters) and far below what would exhaust
a tab.

- :data:`MAX_ELEMENTS` numbers in one array of a model (a weight matrix, an embedding table, a
  table of positional encodings), and :data:`MAX_PARAMETERS` in a whole model;
- :data:`MAX_SEQ_LEN` steps of one sequence a recurrent layer reads (the work of a forward and
  backward pass grows with it; the tasks cap theirs at about 10,000);
- :data:`MAX_STEPS` tokens a decoder writes (greedy or beam search) and :data:`MAX_BEAM_WIDTH`
  hypotheses a beam search keeps;
- :data:`MAX_DELAY` steps of a tapped delay line (a dynamic network keeps that many past
  inputs of every sequence);
- :data:`MAX_FILE_BYTES` of a model file as stored, :data:`MAX_UNPACKED_BYTES` once its
  members are decompressed (a small file that unpacks to gigabytes is refused unread),
  :data:`MAX_MEMBERS` arrays in it;
- :data:`MAX_META_BYTES` and :data:`MAX_JSON_DEPTH` of the settings a file carries (a deeply
  nested document overflows the parser's stack, fatally so in the browser).

:func:`check_elements` is the one check the constructors call for each array (through
:mod:`pyplay.nn.init` for the random ones), :func:`check_parameters` the one for a whole model
(before a loop over layers, and in :func:`pyplay.models.registry.build_model`),
:func:`check_seq_len` the one for the length of a sequence a layer reads.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

__all__ = [
    "MAX_BEAM_WIDTH",
    "MAX_DELAY",
    "MAX_ELEMENTS",
    "MAX_FILE_BYTES",
    "MAX_JSON_DEPTH",
    "MAX_MEMBERS",
    "MAX_META_BYTES",
    "MAX_PARAMETERS",
    "MAX_SEQ_LEN",
    "MAX_STEPS",
    "MAX_UNPACKED_BYTES",
    "check_elements",
    "check_parameters",
    "check_seq_len",
    "json_depth",
]

MAX_ELEMENTS = 2**26  # 67,108,864 numbers: 256 MiB in float32, 512 MiB in float64
MAX_PARAMETERS = 2**27  # a whole model: 134,217,728 numbers
MAX_SEQ_LEN = 100_000  # steps of one sequence a recurrent layer reads
MAX_STEPS = 10_000  # tokens one decoding writes
MAX_BEAM_WIDTH = 100_000  # hypotheses one beam search keeps (a lexicon test enumerates 7**5)
MAX_DELAY = 10_000  # the longest delay of a tapped delay line, in steps
MAX_FILE_BYTES = 50_000_000  # a model file as stored (compressed or not)
MAX_UNPACKED_BYTES = 4 * MAX_FILE_BYTES  # its members once decompressed
MAX_MEMBERS = 10_000  # arrays in one file
MAX_META_BYTES = 1_000_000  # the JSON settings of a file
MAX_JSON_DEPTH = 64  # nesting of those settings


def check_elements(what: str, shape: Iterable[Any], dtype: Any = np.float32) -> tuple[int, ...]:
    """``shape`` as a tuple of ints if an array of that shape may be allocated.

    Parameters
    ----------
    what : str
        Names the array and the arguments that size it, for the message
        (``"LSTM weight_ih_l0 (4 * hidden_size, input_size)"``).
    shape : iterable of int
        Its dimensions (each >= 0).
    dtype : numpy dtype
        Its element type (only for the size in bytes in the message).

    Raises
    ------
    ValueError
        When the array would hold more than :data:`MAX_ELEMENTS` numbers.
    """
    dims = tuple(int(d) for d in shape)
    n = math.prod(dims)  # Python ints: no overflow, whatever the sizes
    if n > MAX_ELEMENTS:
        gib = n * np.dtype(dtype).itemsize / 2**30
        raise ValueError(
            f"{what} would be {' x '.join(f'{d:,}' for d in dims)} = {n:,} numbers "
            f"({gib:,.1f} GiB); at most {MAX_ELEMENTS:,} are allowed in one array "
            "(pyplay.limits.MAX_ELEMENTS): choose smaller sizes"
        )
    return dims


def check_parameters(what: str, n: int) -> int:
    """``n`` if a model of ``n`` parameters may be built.

    Parameters
    ----------
    what : str
        Names the model and the arguments that size it, for the message
        (``"GRU (num_layers=1,000,000,000)"``).
    n : int
        Its number of parameters (a Python int: exact whatever the sizes).

    Raises
    ------
    ValueError
        When ``n`` exceeds :data:`MAX_PARAMETERS`.
    """
    n = int(n)
    if n > MAX_PARAMETERS:
        raise ValueError(
            f"{what} would hold about {n:,} parameters; at most {MAX_PARAMETERS:,} are allowed "
            "in one model (pyplay.limits.MAX_PARAMETERS): choose smaller sizes"
        )
    return n


def check_seq_len(what: str, steps: int) -> int:
    """``steps`` if a layer may read sequences of that many steps.

    Parameters
    ----------
    what : str
        Names the input and its layout, for the message (``"LSTM input x (B, T, F)"``).
    steps : int
        Its number of time steps ``T``.

    Raises
    ------
    ValueError
        When ``steps`` exceeds :data:`MAX_SEQ_LEN`.
    """
    steps = int(steps)
    if steps > MAX_SEQ_LEN:
        raise ValueError(
            f"{what} has {steps:,} steps; at most {MAX_SEQ_LEN:,} are read in one sequence "
            "(pyplay.limits.MAX_SEQ_LEN): split it into chunks, carrying the state across"
        )
    return steps


def json_depth(text: str) -> int:
    """The deepest nesting of ``[`` and ``{`` in a JSON document ``text``, strings skipped.

    Computed without parsing (no recursion), so a document nested a million levels deep is
    measured, not parsed: :func:`pyplay.io.load` refuses one deeper than
    :data:`MAX_JSON_DEPTH` before handing it to :func:`json.loads`.
    """
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest
