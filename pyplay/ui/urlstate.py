"""The playground's settings in the page address: ``?lesson=rnn&task=adding&cell=lstm&...``.

Copying the address bar reproduces the setup; opening it shows the same configuration. Each
lesson has a :class:`~pyplay.ui.lessons.spec.LessonSpec` (registered in
:data:`pyplay.ui.lessons.LESSONS`; :data:`LESSON_SPECS` maps its key to it): its state class,
the parameters that belong in the address and the values the address cannot carry (tasks that
need the learner's own data); bounds and allowed values are the parameters' own. Every value
read from an address is checked against its parameter's type, bounds and allowed values; a wrong
one becomes a message naming the key, what was expected and what was given, and is skipped.
Nothing is ever evaluated, and nothing raises.

- :func:`to_query` writes a lesson state's settings; :func:`parse_query` reads an address's
  query into checked values (:class:`ParsedQuery`); :func:`apply_settings` sets them on a state.
- :func:`pyplay.ui.location.bind_location` keeps the page address and tabs in step with these.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode

import param

from pyplay.ui.lessons import SPECS as LESSON_SPECS
from pyplay.ui.lessons import LessonSpec

__all__ = [
    "LESSON_SPECS",
    "Field",
    "LessonSpec",
    "ParsedQuery",
    "number_field",
    "parse_query",
    "to_query",
    "url_fields",
]

LESSON_KEY = "lesson"
SOURCE_KEY = "src"
MAX_QUERY_CHARS = 4000  # a 200-character decode input can take 2,400 encoded
MAX_FIELDS = 64
MAX_SOURCE_CHARS = 200  # as the sequence-to-sequence lesson's text box
MAX_TEXT_CHARS = 400  # a text setting (the CTC lesson's lexicon)
_INT = re.compile(r"[+-]?\d{1,12}")
_FLOAT = re.compile(r"[+-]?(?:\d{1,20}\.?\d{0,20}|\.\d{1,20})(?:[eE][+-]?\d{1,3})?")
_TRUE, _FALSE = ("true", "1", "yes", "on"), ("false", "0", "no", "off")


def _show(text: Any, limit: int = 40) -> str:
    """``repr`` of a given value, cut to ``limit`` characters."""
    shown = repr(text)
    return shown if len(shown) <= limit else shown[: limit - 4] + "...'"


@dataclass(frozen=True)
class Field:
    """One setting in the address: ``kind`` is "choice", "int", "float", "bool" or "text"."""

    name: str
    kind: str
    choices: tuple[Any, ...] = ()
    low: float | None = None
    high: float | None = None
    aliases: Mapping[str, str] = field(default_factory=dict)

    def expected(self) -> str:
        """What a valid value looks like, in words."""
        if self.choices:
            return "one of " + ", ".join(str(c) for c in self.choices)
        if self.kind == "bool":
            return "true or false"
        if self.kind == "text":
            return f"printable text of at most {MAX_TEXT_CHARS} characters"
        what = "an integer" if self.kind == "int" else "a number"
        if self.low is not None and self.high is not None:
            return f"{what} from {self._bound(self.low)} to {self._bound(self.high)}"
        return what

    def _bound(self, value: float) -> str:
        return str(int(value)) if self.kind == "int" else f"{value:g}"

    def parse(self, text: str) -> Any:
        """The value written as ``text``; ValueError (with :meth:`expected`) if it is not one."""
        value: Any
        if self.kind == "bool":
            low = text.strip().lower()
            if low not in _TRUE + _FALSE:
                raise ValueError(self.expected())
            return low in _TRUE
        if self.kind == "int":
            if not _INT.fullmatch(text.strip()):
                raise ValueError(self.expected())
            value = int(text)
        elif self.kind == "float":
            if not _FLOAT.fullmatch(text.strip()):
                raise ValueError(self.expected())
            value = float(text)
            if not math.isfinite(value):
                raise ValueError(self.expected())
        elif self.kind == "text":
            if len(text) > MAX_TEXT_CHARS or not text.isprintable():
                raise ValueError(self.expected())
            return text
        else:
            value = self.aliases.get(text, text)
        if self.choices:
            if value not in self.choices:
                raise ValueError(self.expected())
        elif (self.low is not None and value < self.low) or (
            self.high is not None and value > self.high
        ):
            raise ValueError(self.expected())
        return value

    def format(self, value: Any) -> str:
        """``value`` as written in the address (:meth:`parse` reads it back exactly)."""
        if self.kind == "bool":
            return "true" if value else "false"
        if self.kind == "float":
            return repr(float(value))
        if self.kind == "int":
            return str(int(value))
        return str(value)


def number_field(p: param.Number) -> Field:
    """The field of number parameter ``p`` (:class:`param.Integer` or :class:`param.Number`):
    its range is the parameter's ``softbounds`` (else its ``bounds``), the range the page's
    number boxes accept too (:class:`pyplay.ui.inputs.NumberBox`)."""
    low, high = p.get_soft_bounds()
    return Field(str(p.name), "int" if isinstance(p, param.Integer) else "float", (), low, high)


def state_class(lesson: str) -> type[param.Parameterized]:
    """The state class of ``lesson`` (a key of :data:`LESSON_SPECS`)."""
    cls = LESSON_SPECS[lesson].state_class()
    assert issubclass(cls, param.Parameterized)
    return cls


@functools.cache
def url_fields(lesson: str) -> dict[str, Field]:
    """The address fields of ``lesson``, read from its state class's parameters and spec."""
    if lesson not in LESSON_SPECS:
        raise ValueError(f"lesson must be one of {', '.join(LESSON_SPECS)}, got {lesson!r}")
    spec = LESSON_SPECS[lesson]
    params = state_class(lesson).param
    fields = {}
    for name in spec.params:
        p = params[name]
        excluded = spec.exclude.get(name, ())
        choices: tuple[Any, ...] = ()
        if isinstance(p, param.Number):  # Integer too: the range of the page's slider or box
            fields[name] = number_field(p)
            continue
        if isinstance(p, param.Boolean):
            kind = "bool"
        elif isinstance(p, param.Selector):
            choices = tuple(c for c in p.objects if c not in excluded)
            if all(isinstance(c, str) for c in choices):
                kind = "choice"
            elif all(isinstance(c, int) and not isinstance(c, bool) for c in choices):
                kind = "int"
            else:
                raise TypeError(
                    f"{lesson}.{name}: only selectors of strings or integers go in the address"
                )
        elif isinstance(p, param.String):
            kind = "text"  # checked by the lesson (a message next to its control)
        else:
            raise TypeError(f"{lesson}.{name}: {type(p).__name__} cannot go in the address")
        fields[name] = Field(name, kind, choices, aliases=spec.aliases.get(name, {}))
    return fields


def _check_source(text: str) -> str:
    if len(text) > MAX_SOURCE_CHARS:
        raise ValueError(f"a text of at most {MAX_SOURCE_CHARS} characters")
    if any(not ch.isprintable() for ch in text):
        raise ValueError("printable text (no control characters)")
    return text


@dataclass(frozen=True)
class ParsedQuery:
    """A query read by :func:`parse_query`: the lesson (None when the address names none),
    its checked settings, the decode input (``src``, sequence-to-sequence lesson) and one
    message per problem met (each naming the key, what was expected and what was given)."""

    lesson: str | None
    settings: dict[str, Any]
    source: str | None
    messages: list[str]


def parse_query(query: str) -> ParsedQuery:
    """Read an address's query (with or without the leading ``?``). Never raises: bad parts
    are left out and explained in ``messages``."""
    messages: list[str] = []
    if not isinstance(query, str):
        return ParsedQuery(None, {}, None, [f"Address: the query must be text, got {_show(query)}"])
    text = query[1:] if query.startswith("?") else query
    if not text:
        return ParsedQuery(None, {}, None, [])
    if len(text) > MAX_QUERY_CHARS:
        msg = (
            f"Address: the settings are too long ({len(text):,} characters, at most "
            f"{MAX_QUERY_CHARS:,}); none were applied."
        )
        return ParsedQuery(None, {}, None, [msg])
    try:
        pairs = parse_qsl(text, keep_blank_values=True, max_num_fields=MAX_FIELDS)
    except ValueError:
        msg = f"Address: more than {MAX_FIELDS} settings; none were applied."
        return ParsedQuery(None, {}, None, [msg])
    given: dict[str, str] = {}
    for key, value in pairs:
        if key in given:
            messages.append(f"Address: {_show(key)} is given more than once; the last is used.")
        given[key] = value
    lesson = given.pop(LESSON_KEY, "rnn")
    if lesson not in LESSON_SPECS:
        messages.append(
            f"Address: lesson must be one of {', '.join(LESSON_SPECS)}, got {_show(lesson)}; "
            "no settings were applied."
        )
        return ParsedQuery(None, {}, None, messages)
    fields = url_fields(lesson)
    spec = LESSON_SPECS[lesson]
    settings: dict[str, Any] = {}
    source = None
    for key, value in given.items():
        try:
            if key == SOURCE_KEY and spec.source:
                source = _check_source(value)
            elif key in fields:
                settings[key] = fields[key].parse(value)
            else:
                known = ", ".join([*fields, *([SOURCE_KEY] if spec.source else [])])
                messages.append(
                    f"Address: {_show(key)} is not a setting of the {lesson} lesson "
                    f"(expected one of {known}); ignored."
                )
        except ValueError as err:
            messages.append(f"Address: {key} must be {err}, got {_show(value)}; ignored.")
    return ParsedQuery(lesson, settings, source, messages)


def apply_settings(state: param.Parameterized, settings: Mapping[str, Any]) -> list[str]:
    """Set checked ``settings`` on ``state`` at once (one rebuild); returns messages for what
    the state refused (its own message explains a model that could not be built)."""
    try:
        state.param.update(**settings)
    except (ValueError, TypeError) as err:
        return [f"Address: the settings were not applied ({err})."]
    return []


def to_query(lesson: str, state: Any, source: str | None = None) -> str:
    """The query (without ``?``) that reproduces ``state``'s settings in ``lesson``.

    Values the address cannot carry (a task on the learner's own data, a value outside the
    page's ranges) are left out, so the query always reads back without messages. ``source``
    is the decode input of the sequence-to-sequence lesson (left out if it is not valid).
    """
    fields = url_fields(lesson)
    pairs = [(LESSON_KEY, lesson)]
    for name, f in fields.items():
        try:
            text = f.format(getattr(state, name))
            f.parse(text)
        except (ValueError, TypeError):
            continue
        pairs.append((name, text))
    if source is not None and LESSON_SPECS[lesson].source:
        try:
            pairs.append((SOURCE_KEY, _check_source(source)))
        except ValueError:
            pass
    return urlencode(pairs, quote_via=quote)
