"""The five lectures pyplay teaches, each named once: :data:`LECTURES`.

The page names a lecture by its author and the kind of text, never by a course code a
teacher elsewhere would not know, and never as a bare "the lecture": "Solberg's lecture", not
"the TEK5040 lecture". Running text takes that short form from :func:`lecture`; a label too
short for it (a sub-tab's title, a button, an option) takes the author alone from
:func:`lecture_label` ("LSTM and GRU (lecture 8)"). The About tab lists every lecture's full
reference (author, title, institution or course, year where the text gives them) with the
short form and the label the page uses for it (:func:`reference_list`). Course codes and
institutions appear in the references only.

Markdown read from disk (a lesson's ``help.md``, :func:`pyplay.ui.lesson_page.page_text`)
writes ``{{lecture:KEY}}`` where the short form goes; :func:`fill_lectures` replaces it when
the file is loaded. The replacement is a lookup in :data:`LECTURES`, nothing is evaluated; an
unknown key or any other ``{{...}}`` is a ValueError naming it.

The lectures' texts are the curriculum's files ``000`` to ``004`` (their README lists them);
``number`` names a lecture's file. No Panel here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["LECTURES", "Lecture", "fill_lectures", "lecture", "lecture_label", "reference_list"]


@dataclass(frozen=True)
class Lecture:
    """One lecture of the curriculum.

    Parameters
    ----------
    key : str
        Its name in code and in Markdown placeholders (``{{lecture:<key>}}``).
    number : str
        Its file in the curriculum, ``"000"`` to ``"004"``.
    short : str
        How running text names it (Markdown), e.g. "Solberg's lecture"; written to stand
        inside a sentence (it may start in lower case).
    label : str
        How a label names it where the short form is too long, in brackets after the label:
        the author's name ("Solberg"), or "lecture 8" for the lecture without one.
    reference : str
        Its full reference (Markdown): author, title, institution or course and year, as far
        as the lecture's text gives them.
    """

    key: str
    number: str
    short: str
    label: str
    reference: str


LECTURES: tuple[Lecture, ...] = (
    Lecture(
        "hagan",
        "000",
        "Hagan's *Neural Network Design*",
        "Hagan",
        'Hagan et al., *Neural Network Design*, chapter "Dynamic Networks" (eq. 6.1-6.18; it '
        "builds on chapters 10 and 14 of the second edition, *NND2*)",
    ),
    Lecture(
        "nlp",
        "001",
        "lecture 8 of an NLP course",
        "lecture 8",
        '"Recurrent Neural Network (RNN) LSTM & GRU", lecture 8 of a course on Natural '
        "Language Processing (the slides name no author, institution or year)",
    ),
    Lecture(
        "wand",
        "002",
        "Wand's lecture",
        "Wand",
        'Michael Wand, "Neural Networks - Sequence Modeling and Advanced Architectures", '
        "Machine Learning course, Dalle Molle Institute for Artificial Intelligence Studies "
        "(IDSIA), USI-SUPSI, fall semester 2024",
    ),
    Lecture(
        "schmidt",
        "003",
        "Schmidt's overview",
        "Schmidt",
        'Robin M. Schmidt, "Recurrent Neural Networks (RNNs): A gentle Introduction and '
        'Overview", Department of Computer Science, Eberhard-Karls-University Tübingen',
    ),
    Lecture(
        "solberg",
        "004",
        "Solberg's lecture",
        "Solberg",
        'Eilif Solberg, "RNN extensions, Memory Addressing and Attention", a lecture of the '
        "course TEK5040/TEK9040",
    ),
)

_BY_KEY = {entry.key: entry for entry in LECTURES}
_PLACEHOLDER = re.compile(r"\{\{(.*?)\}\}")  # {{lecture:KEY}}; anything else inside is an error
_LECTURE_KEY = re.compile(r"lecture:([a-z0-9_]+)")


def lecture(key: str) -> str:
    """The short form running text names lecture ``key`` by ("Solberg's lecture").

    Raises
    ------
    ValueError
        ``key`` is not a lecture of :data:`LECTURES` (the message names it).

    Examples
    --------
    >>> lecture("wand")
    "Wand's lecture"
    """
    return _entry(key).short


def lecture_label(key: str) -> str:
    """How a label names lecture ``key`` where the short form is too long (the author:
    "Solberg"; "lecture 8" for the NLP lecture, which names none).

    Raises
    ------
    ValueError
        ``key`` is not a lecture of :data:`LECTURES` (the message names it).

    Examples
    --------
    >>> f"LSTM and GRU ({lecture_label('nlp')})"
    'LSTM and GRU (lecture 8)'
    """
    return _entry(key).label


def _entry(key: str) -> Lecture:
    """The registry's entry of lecture ``key``; a ValueError naming it if there is none."""
    if key not in _BY_KEY:
        raise ValueError(f"unknown lecture {key!r}: expected one of {sorted(_BY_KEY)}")
    return _BY_KEY[key]


def fill_lectures(text: str, where: str = "text") -> str:
    """``text`` with every ``{{lecture:KEY}}`` replaced by the short form of lecture ``KEY``
    (:func:`lecture`); ``where`` names the text in an error (e.g. its file).

    Only that one form is recognised and only looked up, never evaluated; the short forms
    hold no braces, so a replacement is never read again as a placeholder.

    Raises
    ------
    ValueError
        A ``{{lecture:KEY}}`` with an unknown ``KEY``, or any other ``{{...}}`` in ``text``
        (the message names ``where`` and the placeholder).

    Examples
    --------
    >>> fill_lectures("as {{lecture:solberg}} puts it")
    "as Solberg's lecture puts it"
    """

    def short(found: re.Match[str]) -> str:
        inside = found.group(1)
        named = _LECTURE_KEY.fullmatch(inside)
        if named is None:
            raise ValueError(
                f"{where}: unknown placeholder {found.group(0)!r}: expected "
                f"{{{{lecture:KEY}}}} with KEY one of {sorted(_BY_KEY)}"
            )
        key = named.group(1)
        if key not in _BY_KEY:
            raise ValueError(
                f"{where}: unknown lecture {key!r} in {found.group(0)!r}: expected one of "
                f"{sorted(_BY_KEY)}"
            )
        return _BY_KEY[key].short

    return _PLACEHOLDER.sub(short, text)


def reference_list() -> str:
    """Every lecture as a Markdown list item: the short form the page uses (in bold, its
    first letter in upper case), the label's short name in brackets, then its full
    reference."""
    items = (
        f"- **{_capital(entry.short)}** (*{entry.label}* in labels): {entry.reference}."
        for entry in LECTURES
    )
    return "\n".join(items)


def _capital(text: str) -> str:
    """``text`` with its first letter in upper case (the rest as it is)."""
    return text[:1].upper() + text[1:]
