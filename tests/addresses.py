"""The page address applied to a lesson's state in one call, as the tests of the address use it
(the page itself opens the named lesson first: :class:`pyplay.ui.location.LocationSync`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyplay.ui.urlstate import apply_settings, parse_query

__all__ = ["apply_query"]


def apply_query(query: str, states: Mapping[str, Any]) -> tuple[str | None, list[str]]:
    """Apply an address's settings to the state of the lesson it names.

    Parameters
    ----------
    query : str
        The address's query, e.g. ``"?lesson=rnn&cell=gru&seed=3"``.
    states : mapping
        Lesson key (see :data:`pyplay.ui.urlstate.LESSON_SPECS`) -> that lesson's state.

    Returns
    -------
    lesson : str or None
        The lesson the address names (None when it names none or a wrong one).
    messages : list of str
        One per key or value that was skipped, saying which, what was expected and what was
        given. The decode input (``src``) is not applied here: see :func:`parse_query`.
    """
    parsed = parse_query(query)
    messages = list(parsed.messages)
    if parsed.lesson is None:
        return None, messages
    state = states.get(parsed.lesson)
    if state is None:
        messages.append(f"Address: the {parsed.lesson} lesson is not available here.")
        return parsed.lesson, messages
    messages += apply_settings(state, parsed.settings)
    return parsed.lesson, messages
