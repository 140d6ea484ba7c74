"""Why a decoder searches at all, and the limits a search can use: the beam section's text.

Wand's lecture: scoring every output sequence is hopeless, since :math:`M` output symbols and
:math:`T` time steps give :math:`M^T` paths; its speech example has 26 letters and sequences up
to 100 long, :math:`26^{100}` paths, against about :math:`10^{80}` atoms in the universe.
:func:`search_space_text` states the lecture's example and the same count for the lesson's own
target vocabulary and longest output, computed when the task changes. The numbers are too
large for a float, so they are written from their base-10 logarithm,
:math:`M^T = 10^{T \\log_{10} M}`.

:data:`PRUNING_HELP` says the lecture's ways of limiting the hypotheses, which the page's
beam search offers (:class:`~pyplay.decode.pruning.Pruning`). No Panel here.
"""

from __future__ import annotations

import math

from pyplay.ui.lectures import lecture

__all__ = [
    "ATOMS_POWER",
    "LECTURE_LENGTH",
    "LECTURE_SYMBOLS",
    "PRUNING_HELP",
    "power_of_ten",
    "search_space_text",
]

LECTURE_SYMBOLS = 26  # M of the lecture's speech example: letters
LECTURE_LENGTH = 100  # T of the lecture's speech example: the longest sequence
ATOMS_POWER = 80  # about 10^80 atoms in the universe (the lecture's comparison)


def power_of_ten(m: int, t: int) -> tuple[float, int]:
    """``m ** t`` as (mantissa, exponent): ``m ** t = mantissa * 10 ** exponent``, with
    ``1 <= mantissa < 10``, computed from the logarithm (``m >= 1``, ``t >= 0``)."""
    if m < 1 or t < 0:
        raise ValueError(f"m must be >= 1 and t >= 0, got m={m}, t={t}")
    log10 = t * math.log10(m)
    exponent = math.floor(log10)
    return 10 ** (log10 - exponent), exponent


SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def _up(n: int) -> str:
    """``n`` in superscript digits (an exponent)."""
    return str(n).translate(SUPERSCRIPT)


def _power(m: int, t: int) -> str:
    mantissa, exponent = power_of_ten(m, t)
    return f"{m}{_up(t)} ≈ {mantissa:.1f} × 10{_up(exponent)}"


def search_space_text(symbols: int, length: int) -> str:
    """The lecture's count of paths, its example, and the lesson's own (Markdown, numbers only:
    no user text). ``symbols`` is the lesson's target vocabulary size M (BOS, EOS and padding
    included, as the decoder's softmax has them), ``length`` the most tokens the search
    writes, T."""
    _, lesson_exp = power_of_ten(symbols, length)
    return (
        f"**Why search at all?** {lecture('wand')} counts the outputs a decoder could write: "
        f"M output symbols and T time steps give Mᵀ paths. Its speech example: "
        f"{LECTURE_SYMBOLS} letters and length {LECTURE_LENGTH}, "
        f"{_power(LECTURE_SYMBOLS, LECTURE_LENGTH)} paths, while there are about "
        f"10{_up(ATOMS_POWER)} atoms in the universe. This lesson's decoder has M = {symbols} "
        f"symbols and writes at most T = {length} tokens: {_power(symbols, length)} paths"
        + (", more than the atoms too." if lesson_exp >= ATOMS_POWER else ".")
        + " No one scores them all; beam search keeps a few per step."
    )


PRUNING_HELP = (
    f"{lecture('wand')} lists the ways to limit the hypotheses: keep a fixed number of the most "
    "probable ones (the **beam width**), a fixed number **per node**, other adaptive criteria, "
    "or all of them. **Per node** keeps at most that many live hypotheses ending in the same "
    "token (under the lexicon: at the same node of the prefix tree); 0 means no limit. The "
    "**threshold** is adaptive: a candidate whose score is more than that below the step's "
    "best is dropped, so the beam narrows where one hypothesis stands out and widens where "
    "many are close; 0 means off. Pruned candidates say which rule dropped them."
)
