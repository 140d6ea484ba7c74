"""What every lesson's page and every sub-tab that is a lesson open with:
:class:`LessonPage`, the base of :class:`~pyplay.ui.lesson_view.LessonView` and
:class:`~pyplay.ui.lessons.dynamic.subtab.SubTabView`.

- **Its state**: the one given, or a new one of the view's ``state_class``.
- **Its heading and help**: prose, in a Markdown file beside the view's module, named as the
  module with its closing ``view`` turned into ``help`` (``ctc/view.py`` reads ``ctc/help.md``,
  ``dynamic/rtrl_view.py`` reads ``dynamic/rtrl_help.md``): its first line is the heading,
  the rest the help, and for a sub-tab, after a line ``---``, where it departs from its
  lecture (:func:`page_text`); a number the code declares appears there as ``$NAME``, filled
  from the view's ``prose_values``, and a lecture as ``{{lecture:KEY}}``, filled from
  :data:`pyplay.ui.lectures.LECTURES` when the file is read.
- **Its status line's CSS class**: ``pyplay-<lesson key>-status`` unless the view names
  another (``status_css``).
- **What it builds**: a subclass builds its figures and widgets in :meth:`LessonPage.build`,
  which the template calls once its own parts exist.
- **Its training**: ``session``, a :class:`~pyplay.ui.session.TrainingSession` around the
  state, made before :meth:`LessonPage.build`: the loop and its buttons. The page gives it
  two hooks, :meth:`LessonPage._stream` (a slice's records into the plots) and
  :meth:`LessonPage.after_training` (the look-inside views redrawn), and the timing its
  class declares (``budget_s``, ``yield_s``, ``refresh_interval_s``, ``max_refresh_share``,
  ``live``; :func:`~pyplay.ui.session.timing_of`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from string import Template
from typing import Any, ClassVar

import panel as pn

from pyplay.ui.lectures import fill_lectures
from pyplay.ui.lessons import spec_of
from pyplay.ui.plot_styles import distinguish_lines
from pyplay.ui.plot_text import PlotTexts, plot_groups
from pyplay.ui.session import TrainingSession, sessions_of, timing_of

__all__ = ["LessonPage", "PageText", "page_text"]


@dataclass(frozen=True)
class PageText:
    """A view's prose: its ``heading`` (a Markdown heading line), its ``help`` and, for a
    sub-tab, ``departs``, the note of where the page departs from its lecture ("" when the
    file has none)."""

    heading: str
    help: str
    departs: str

    def filled(self, values: Mapping[str, object]) -> PageText:
        """The prose with each ``$name`` replaced by ``values[name]`` (a value the code
        declares, written into the prose where it is shown); KeyError names a ``$name``
        without a value, ``$$`` is a dollar sign."""
        parts = (Template(t).substitute(values) for t in (self.heading, self.help, self.departs))
        return PageText(*parts)


def _unwrap(text: str) -> str:
    """Paragraphs separated by blank lines, each joined into one line (a line break inside
    a paragraph is a space)."""
    paragraphs = (" ".join(map(str.strip, p.strip().split("\n"))) for p in text.split("\n\n"))
    return "\n\n".join(p for p in paragraphs if p)


@functools.cache
def page_text(module: str) -> PageText:
    """The prose of the view defined in ``module`` (a dotted module name), read from the
    Markdown file beside it (the module's name with its closing ``view`` turned into
    ``help``, ``.md`` added).

    The file's first line is the heading (``## ...``); a blank line; then the help, in
    paragraphs separated by blank lines; then, for a sub-tab, a line ``---`` and the note of
    where it departs from its lecture. A line break inside a paragraph is a space (the file
    is wrapped for reading; the page gets each paragraph as one line). A value the code
    declares is written ``$NAME`` and filled from the view's ``prose_values``
    (:meth:`PageText.filled`); a lecture is written ``{{lecture:KEY}}`` and replaced here by
    the name the page gives it (:func:`~pyplay.ui.lectures.fill_lectures`).

    Raises
    ------
    ValueError
        The file has no heading line, or names a lecture :data:`~pyplay.ui.lectures.LECTURES`
        does not hold (or another ``{{...}}``).
    """
    package, _, name = module.rpartition(".")
    filename = name.removesuffix("view") + "help.md"
    raw = resources.files(package).joinpath(filename).read_text(encoding="utf-8")
    text = fill_lectures(raw, f"{package}/{filename}")
    heading, _, body = text.strip().partition("\n\n")
    if not heading.startswith("#") or "\n" in heading:
        raise ValueError(
            f"{package}/{filename}: expected a heading line ('## ...') then a blank line, "
            f"got {heading[:60]!r}"
        )
    help_text, _, departs = body.partition("\n---\n")
    return PageText(heading, _unwrap(help_text), _unwrap(departs))


class LessonPage(pn.viewable.Viewer):
    """A lesson's page around its ``state``; a subclass names its ``state_class`` and builds
    its own parts in :meth:`build`.

    Attributes: ``session`` its training (:class:`~pyplay.ui.session.TrainingSession`),
    ``text`` the view's prose (:class:`PageText`, from its Markdown file, :func:`page_text`,
    filled with ``prose_values``), ``heading`` and ``help_text`` its first two parts,
    ``status_css`` the status line's CSS class.
    """

    state_class: ClassVar[type]
    prose_values: ClassVar[Mapping[str, object]] = {}  # the $names its prose shows
    status_css: str = ""  # empty: pyplay-<lesson key>-status

    def __init__(self, state: Any = None) -> None:
        super().__init__()
        self.state = self.state_class() if state is None else state
        self.session = TrainingSession(
            self.state, self._stream, self.after_training, **timing_of(self)
        )
        self.text = page_text(type(self).__module__).filled(self.prose_values)
        self.heading, self.help_text = self.text.heading, self.text.help
        if not self.status_css:
            self.status_css = f"pyplay-{spec_of(type(self.state)).key}-status"

    def build(self) -> None:
        """Make the view's own figures and widgets (the template calls it once)."""

    # ------------------------------------------------------------------ the session's hooks
    def _stream(self, records: Any) -> None:
        """Take the records of a slice of training into the view's plots."""
        raise NotImplementedError

    def after_training(self) -> None:
        """Redraw what depends on the parameters (nothing by default)."""

    def described(self, page: Any) -> Any:
        """``page`` with a text alternative after each group of its plots (the workbench's
        views, each section's; :mod:`pyplay.ui.plot_text`), kept in :attr:`plot_texts`,
        rewritten at most every few seconds while any of this view's models trains; and the
        lines of every legend told apart by more than colour
        (:func:`~pyplay.ui.plot_styles.distinguish_lines`)."""
        for pane in page.select(pn.pane.Bokeh):
            if hasattr(pane.object, "renderers"):
                distinguish_lines(pane.object)
        self.plot_texts = PlotTexts(plot_groups(page), busy=self.training_now)
        return page

    def describe_more(self, layout: Any) -> None:
        """The plots of ``layout`` made after :meth:`described` (a section's parts made when
        it is first opened) described the same way: their lines told apart, a text for them."""
        for pane in layout.select(pn.pane.Bokeh):
            if hasattr(pane.object, "renderers"):
                distinguish_lines(pane.object)
        self.plot_texts.add(layout)

    def training_now(self) -> bool:
        """Whether this view or one it holds (a comparison, a sub-tab) is training."""
        return any(session.state.running for session in sessions_of(self))

    def leave(self) -> None:
        """The learner left this lesson: pause its training and every training it holds (a
        comparison, a sub-tab; :func:`~pyplay.ui.session.sessions_of`), so the lesson on
        screen has the machine. Coming back shows it paused at the step it reached, one
        click (Train) from resuming."""
        for session in sessions_of(self):
            session.pause()

    def __panel__(self) -> pn.viewable.Viewable:
        return self.panel()

    def panel(self) -> pn.viewable.Viewable:
        raise NotImplementedError
