"""A "Try this" experiment of a lesson, declared once as data: :class:`Experiment`.

Each lesson's :class:`~pyplay.ui.lessons.spec.LessonSpec` lists its experiments. The page
shows one button per experiment (:mod:`pyplay.ui.try_this`), which sets the lesson up with
:func:`set_up`; the tests (``tests/ui/test_ui_experiments.py``) set each one up the same way,
train it natively for its budget and check its promise (``below``, ``above``). No Panel here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Experiment", "set_up"]


@dataclass(frozen=True)
class Experiment:
    """One experiment: what to set, how long to train, what to expect.

    Parameters
    ----------
    label : str
        The button's text (short: it names the setup).
    settings : mapping
        Setting name -> value; every other setting of the lesson (its spec's ``params``) goes
        back to its default, so the promise holds whatever was set before.
    steps : int
        The budget: training steps after which the promise holds.
    expect : str
        What the learner will see, in words (shown beside the button).
    below, above : float, optional
        The promise: the mean loss of the last 20 steps ends below ``below`` and/or stays
        above ``above``.
    relative : bool
        ``below`` and ``above`` are multiples of the task's baseline loss (the loss of the
        trivial predictor, the dashed line of the loss curve).
    """

    label: str
    settings: Mapping[str, Any]
    steps: int
    expect: str
    below: float | None = None
    above: float | None = None
    relative: bool = False

    def __post_init__(self) -> None:
        if self.below is None and self.above is None:
            raise ValueError(f"experiment {self.label!r} promises nothing: give below or above")
        if self.steps < 1:
            raise ValueError(f"steps must be at least 1, got {self.steps}")


def set_up(state: Any, params: tuple[str, ...], experiment: Experiment) -> None:
    """Set ``state`` (a lesson state with the settings ``params``) to ``experiment``: every
    setting to its default, then the experiment's, at once, and a fresh model.

    Raises
    ------
    KeyError
        An experiment setting that is no setting of the lesson (a mistake in its spec).
    """
    unknown = sorted(set(experiment.settings) - set(params))
    if unknown:
        raise KeyError(f"experiment {experiment.label!r} sets {unknown}, not in {params}")
    values = {name: state.param[name].default for name in params}
    values.update(experiment.settings)
    changed = {k: v for k, v in values.items() if getattr(state, k) != v}
    if changed:
        state.param.update(**changed)
    state.reset()
