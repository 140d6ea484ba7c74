"""What every lesson state has: whether it is training, the message the page shows, a status
line, and a version number that views watch to redraw after a rebuild. No Panel here."""

from __future__ import annotations

import param

__all__ = ["MESSAGE_KINDS", "LessonBase"]

MESSAGE_KINDS = ["info", "success", "warning", "danger"]


class LessonBase(param.Parameterized):
    """Base of the lesson states.

    ``running`` is True while the page's periodic callback trains; ``message`` and
    ``message_kind`` are shown as an alert (:meth:`notify`); ``status`` is the line under the
    controls (step, loss, speed); ``version`` is bumped whenever the model is rebuilt or
    loaded, so views reset their plots.
    """

    running = param.Boolean(default=False)
    message = param.String(default="")
    message_kind = param.Selector(objects=MESSAGE_KINDS, default="info")
    status = param.String(default="")
    version = param.Integer(default=0, doc="bumped whenever the model is rebuilt or loaded")

    def notify(self, text: str, kind: str = "info") -> None:
        """Show ``text`` in the page (kind: info, success, warning, danger)."""
        self.message_kind = kind
        self.message = text
