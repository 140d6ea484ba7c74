"""A lesson's training as an object its view owns and reads: :class:`TrainingSession`.

A view (a lesson's page, a sub-tab, a comparison section) makes one session around its
state and gives it two callbacks: ``stream``, which takes the records of a slice of training
into the view's plots (the loss curve), and ``redraw``, which redraws the look-inside views
from the model as it is now. The session holds the loop (Train / Pause / Step / Reset, a
slice at a time in an asyncio task, the live redraws while training) and makes its buttons
(:meth:`TrainingSession.buttons`); the view holds no training code of its own.

One training at a time is data: :meth:`TrainingSession.exclusive_with` (or
:func:`one_at_a_time` for a group) names the sessions that pause when this one starts, so a
lesson and its comparisons never train together. :func:`sessions_of` finds a view's session
and those of the comparisons and sub-tabs it holds (what a lesson left for another tab
pauses). :func:`timing_of` reads the timing a view's class declares (``budget_s = 0.12``).

**Paced by the page.** In the browser the page reports, once a second, the share of that
second its main thread was held up (how late a 100 ms timer fired: ``web/site/client.js``),
and :func:`page_load` turns the reports into :attr:`TrainingSession.pace`: above
:data:`PAGE_BUSY` the pace grows by half (up to :data:`MAX_PACE`), below :data:`PAGE_FREE` it
falls back towards 1. Every session's slices (and so the patches of losses and status the page
draws) and live redraws are that many times their defaults apart, the live redraws never more
than :data:`SLOWEST_REFRESH_S` apart: a busy page (a slow machine, other tabs, a second
browser) gets fewer patches to draw, and stays quick to answer a click.
"""

from __future__ import annotations

import asyncio
import math
import time
import traceback
from collections.abc import Callable
from typing import Any

import panel as pn

from pyplay.ui.training import stop_note

__all__ = [
    "FIRST_SLICE_S",
    "MAX_PACE",
    "PAGE_BUSY",
    "PAGE_FREE",
    "SLOWEST_REFRESH_S",
    "TIMING",
    "TrainingSession",
    "one_at_a_time",
    "page_load",
    "sessions_of",
    "timing_of",
]

PAGE_BUSY = 0.25  # the page's main thread held up more than this share of a second: slow down
PAGE_FREE = 0.10  # ... less than this: back towards the default pace
MAX_PACE = 4.0  # slices and live redraws at most this many times their defaults apart
SLOWEST_REFRESH_S = 1.0  # the live views redraw at least this often while training, whatever
# the first slice after Train is this long, each next one twice the last, up to the session's
# budget (0.05, 0.1, 0.2, 0.25 s): the first loss shows 0.05 s after the click, not 0.25 s
FIRST_SLICE_S = 0.05

# the timing settings a session takes, and a view's class may declare for its session
TIMING = ("budget_s", "yield_s", "refresh_interval_s", "max_refresh_share", "live")


class TrainingSession:
    """Train / Pause / Step / Reset over a lesson ``state`` with ``train(steps=,
    budget_s=)``, ``reset()``, ``running``, ``stopped`` and ``notify``; each slice's result
    goes to ``stream``, and ``redraw`` redraws the look-inside views.

    Training runs in an asyncio task (:meth:`_loop`, kept in ``loop_task``), a ``budget_s``
    slice at a time (the first slices after Train shorter: :data:`FIRST_SLICE_S`, doubling
    up to ``budget_s``, so the first loss shows at once). After every slice the task sleeps
    ``yield_s`` seconds, always: that hands the event loop back, so a click waiting (Pause, a
    head picked) is handled before the next slice. Pause only clears ``state.running``: the
    task ends by itself after the slice under way (cancelling it while it slept made Pyodide's
    event loop print an ``asyncio.CancelledError`` traceback for every Pause).

    **Live views.** While training, :meth:`live_refresh` redraws the look-inside views
    (``redraw``) at most every ``refresh_interval_s`` seconds, and never more often than
    keeps the redraws within ``max_refresh_share`` of the time (a redraw that took r seconds
    waits at least r (1 - share) / share before the next). ``live`` turns it off (the page's
    training speed with and without live views is measured with it: setting the class
    attribute ``TrainingSession.live`` reaches every session that was not given its own).
    ``refresh_log`` keeps the last redraws' (clock, seconds) for that measurement. After a
    pause or a single step the views are redrawn at once.

    **Pace.** ``pace`` (a class attribute, set by :func:`page_load` from the page's reports)
    multiplies the slice's ``budget_s`` and the live redraws' ``refresh_interval_s`` (the
    latter up to :data:`SLOWEST_REFRESH_S`): a busy page gets fewer patches.

    **Timing.** The defaults are the class attributes below; a keyword given to the
    constructor (None: the default) is this session's own.

    **One training at a time.** ``excludes`` are the sessions that pause when this one
    starts (:meth:`exclusive_with`).
    """

    # seconds of training per slice: each slice's losses and status reach the page as one
    # patch, and the page redraws the loss plot for it (about 25 ms of the main thread each
    # on these machines): 0.1 s slices kept the recurrent lesson's main thread 35% busy
    budget_s = 0.25
    # seconds the task hands back to the event loop after each slice: a click that came during
    # the slice is a message queued before this timer, and is handled before it fires (the
    # browser tests of Pause within a step and of a head picked before the next slice pass at
    # 5 ms); 20 ms cost the Transformers lesson (slices of about six 43 ms steps) 8-12% of its
    # steps in the page
    yield_s = 0.005
    refresh_interval_s = 0.5  # live look-inside redraws at most this often while training
    max_refresh_share = 0.2  # ... and taking at most this share of the time
    live = True  # redraw the look-inside views while training
    pace = 1.0  # slices and live redraws this many times their defaults apart (page_load)

    def __init__(
        self,
        state: Any,
        stream: Callable[[Any], Any],
        redraw: Callable[[], Any],
        *,
        budget_s: float | None = None,
        yield_s: float | None = None,
        refresh_interval_s: float | None = None,
        max_refresh_share: float | None = None,
        live: bool | None = None,
    ) -> None:
        self.state = state
        self.stream = stream  # a slice's records -> the view's plots
        self.redraw = redraw  # the look-inside views, from the model as it is now
        own = {
            "budget_s": budget_s,
            "yield_s": yield_s,
            "refresh_interval_s": refresh_interval_s,
            "max_refresh_share": max_refresh_share,
            "live": live,
        }
        for name, value in own.items():
            if value is not None:  # otherwise the class attribute, the default
                setattr(self, name, value)
        self.loop_task: asyncio.Task[None] | None = None  # the loop, once started on one
        self.refresh_log: list[tuple[float, float]] = []  # the last redraws (clock, seconds)
        self.excludes: list[TrainingSession] = []  # paused when this one starts
        self._next_refresh = 0.0  # the clock at which the next live redraw is due
        self._ramp_s = math.inf  # the longest the next slice may be (start: FIRST_SLICE_S)

    # ------------------------------------------------------------------ one at a time
    def exclusive_with(self, *others: TrainingSession) -> TrainingSession:
        """Starting this session pauses ``others`` first (one training at a time, so the
        page stays quick to answer); returns the session. Starting one of ``others`` does
        not pause this one unless it says so too (:func:`one_at_a_time`)."""
        self.excludes += [o for o in others if o is not self and o not in self.excludes]
        return self

    def pause_others(self) -> None:
        """Pause the sessions this one excludes (:meth:`start` does it first)."""
        for other in self.excludes:
            other.pause()

    # ------------------------------------------------------------------ the buttons' actions
    def start(self, *_: Any) -> None:
        """Train until paused: a task on the running event loop (Pyodide's, or the Panel
        server's); without one (a plain script) only ``running`` is set. The sessions this
        one excludes pause first."""
        self.pause_others()
        self.state.stopped = ""
        self.state.running = True
        self._next_refresh = time.perf_counter() + self.refresh_interval_s
        self._ramp_s = FIRST_SLICE_S
        if self.loop_task is None or self.loop_task.done():
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                return
            self.loop_task = loop.create_task(self._loop())

    def pause(self, *_: Any) -> None:
        """Stop after the slice under way; the views show the model as it is now."""
        was_running = self.state.running
        self.state.running = False
        if was_running:
            self.redraw()

    def step(self, *_: Any) -> None:
        """One training step, shown at once (training under way pauses first)."""
        self.pause()
        self.stream(self.state.train(steps=1))
        self.redraw()

    def reset(self, *_: Any) -> None:
        """A new model (training under way pauses first; the stop note goes)."""
        self.pause()
        self.state.stopped = ""
        self.state.reset()

    # ------------------------------------------------------------------ the loop
    async def _loop(self) -> None:
        """Slices while ``state.running``, handing the event loop back after each."""
        try:
            while self.state.running:
                self.train_slice()
                await asyncio.sleep(self.yield_s)  # let a waiting click in before the next
        except Exception as err:  # a bug: stop and say so rather than fail silently
            self.state.running = False
            traceback.print_exc()
            self.state.notify(f"Training stopped by an error: {err}", "danger")

    def train_slice(self) -> None:
        """One slice of training while ``state.running`` (the task's work). A live redraw
        that is due comes first, so what the page receives from a slice ends with its status
        and losses, and a click handled between two slices answers right after them."""
        if not self.state.running:
            return
        if self.live and time.perf_counter() >= self._next_refresh:
            self.live_refresh()
        budget = min(self.budget_s * self.pace, self._ramp_s)
        self._ramp_s *= 2  # the first slices after Train ramp up (FIRST_SLICE_S)
        self.stream(self.state.train(budget_s=budget))
        if not self.state.running:
            self.redraw()  # stopped by itself (diverged, too slow)

    def live_refresh(self) -> float:
        """Redraw the look-inside views now and schedule the next redraw; returns the
        seconds it took."""
        start = time.perf_counter()
        self.redraw()
        took = time.perf_counter() - start
        share = self.max_refresh_share
        interval = max(
            self.refresh_interval_s, min(SLOWEST_REFRESH_S, self.refresh_interval_s * self.pace)
        )
        wait = max(interval - took, took * (1 - share) / share)
        self._next_refresh = time.perf_counter() + wait
        self.refresh_log.append((start, took))
        del self.refresh_log[:-50]
        return took

    # ------------------------------------------------------------------ layout
    def buttons(self) -> pn.Column:
        """The four buttons, and under them the note of why training stopped by itself."""
        row = []
        for label, kind, action in (
            ("Train", "primary", self.start),
            ("Pause", "default", self.pause),
            ("Step", "default", self.step),
            ("Reset", "warning", self.reset),
        ):
            button = pn.widgets.Button(name=label, button_type=kind, width=64, margin=(5, 4))
            button.on_click(action)
            row.append(button)
        return pn.Column(pn.Row(*row), stop_note(self.state), margin=0)


def page_load(share: float) -> float:
    """Take the page's report that its main thread was held up ``share`` of the last second
    and set :attr:`TrainingSession.pace` from it (see the module's docstring); returns the
    pace. A report that is not a number in [0, 1] is clipped to it, NaN ignored."""
    share = float(share)
    pace = float(TrainingSession.pace)
    if math.isnan(share):
        return pace
    share = min(1.0, max(0.0, share))
    if share > PAGE_BUSY:
        pace = min(MAX_PACE, pace * 1.5)
    elif share < PAGE_FREE:
        pace = max(1.0, pace / 1.25)
    TrainingSession.pace = pace
    return pace


def one_at_a_time(*sessions: TrainingSession) -> None:
    """Starting any of ``sessions`` pauses the others first (a lesson and its comparisons:
    one training at a time)."""
    for session in sessions:
        session.exclusive_with(*sessions)


def timing_of(owner: object) -> dict[str, Any]:
    """The timing settings (:data:`TIMING`) that ``owner``'s class declares, e.g. a view's
    ``budget_s = 0.12``: the keywords of its :class:`TrainingSession`; one it does not
    declare stays the session's default."""
    cls = type(owner)
    return {name: getattr(cls, name) for name in TIMING if hasattr(cls, name)}


def _own_session(value: Any) -> TrainingSession | None:
    """``value`` if it is a session, else the session ``value`` holds as its ``session``
    (read from its instance dictionary: no property runs), else None."""
    if isinstance(value, TrainingSession):
        return value
    found = getattr(value, "__dict__", {}).get("session")
    return found if isinstance(found, TrainingSession) else None


def sessions_of(view: Any) -> list[TrainingSession]:
    """``view``'s session and the sessions held by its attributes (directly, or in a list,
    tuple or dict attribute): its comparisons', its sub-tabs'. A lesson left for another tab
    pauses them all, so the lesson on screen has the machine."""
    found: list[TrainingSession] = [view.session]
    for value in vars(view).values():
        if isinstance(value, dict):
            items = list(value.values())
        elif isinstance(value, list | tuple):
            items = list(value)
        else:
            items = [value]
        for item in items:
            session = _own_session(item)
            if session is not None and session not in found:
                found.append(session)
    return found
