"""What the playground knows of a lesson: :class:`LessonSpec`, one per lesson, registered in
:data:`pyplay.ui.lessons.LESSONS`; the page's tabs, the address, embedding, lesson files,
autosave and "show as code" all read it. Classes and functions are named as
``"module:name"`` strings (relative to the lesson's folder, ``pyplay.ui.lessons.<key>``)
and imported only when first needed, so the page builds nothing but the lesson it shows.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pyplay.ui.lessons.experiment import Experiment

__all__ = ["Embed", "LessonSpec", "load"]


def load(where: str, key: str) -> Any:
    """The object named ``"module:name"`` (a module relative to ``pyplay.ui.lessons.<key>``
    unless it starts with ``pyplay``); a fixed name from the registry, never user input."""
    module, _, name = where.partition(":")
    if not module.startswith("pyplay"):
        module = f"pyplay.ui.lessons.{key}.{module}"
    return getattr(importlib.import_module(module), name)


@dataclass(frozen=True)
class Embed:
    """A widget showing part of a lesson's view on its own: its name (``?embed=<name>``), its
    title and the ``"module:function"`` laying it out from the lesson view."""

    name: str
    title: str
    layout: str


@dataclass(frozen=True)
class LessonSpec:
    """One lesson of the playground.

    ``key`` names it in the address (``?lesson=<key>``), in lesson files and in saved work;
    ``title`` is its tab title; ``state`` and ``view`` its state and view classes; ``params``
    the settings written to and read from the address and lesson files (a tuple, or one string
    of names; bounds and allowed values are the parameters' own); ``exclude`` values the
    address cannot carry (tasks on the learner's own data); ``aliases`` other spellings
    accepted for a choice (``{"task": {"reverse": "reversal"}}``); ``source`` whether the
    lesson has a decode input (key ``src``); ``parent`` the lesson whose view shows this one as
    its sub-tab ``title`` (:mod:`pyplay.ui.location`); ``code`` the function writing its "show
    as code" script (``(spec, state, *, steps, log_every) -> str``, by default
    ``code:as_code``); ``widgets`` the parts of its view that embed on their own; ``about`` its
    line on the About tab and the "Start here" tab; ``experiments`` its "Try this" experiments
    (:class:`~pyplay.ui.lessons.experiment.Experiment`, set up by one click, each with a promise
    the tests check by training it).
    """

    key: str
    title: str
    state: str
    view: str
    params: tuple[str, ...] | str  # a string of names becomes their tuple
    exclude: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    aliases: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    source: bool = False
    parent: str | None = None
    code: str | None = "code:as_code"
    widgets: tuple[Embed, ...] = ()
    about: str = ""
    experiments: tuple[Experiment, ...] = ()

    def __post_init__(self) -> None:
        if isinstance(self.params, str):  # written as one line of names
            object.__setattr__(self, "params", tuple(self.params.split()))

    def state_class(self) -> Any:
        """The lesson's state class (imported now)."""
        return load(self.state, self.key)

    def view_class(self) -> Any:
        """The lesson's view class (imported now)."""
        return load(self.view, self.key)

    def code_function(self) -> Any:
        """The lesson's "show as code" function (imported now); None when it has none."""
        return None if self.code is None else load(self.code, self.key)

    def layout(self, embed: Embed) -> Any:
        """The layout function of one of :attr:`widgets` (imported now)."""
        return load(embed.layout, self.key)

    def owns(self, cls: type) -> bool:
        """Whether ``cls`` is this lesson's state class, without importing anything."""
        module, _, name = self.state.partition(":")
        if not module.startswith("pyplay"):
            module = f"pyplay.ui.lessons.{self.key}.{module}"
        return cls.__module__ == module and cls.__qualname__ == name
