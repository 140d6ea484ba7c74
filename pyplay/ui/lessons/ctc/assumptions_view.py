"""CTC's assumptions, each broken by a small case, beside an attention encoder-decoder: a section
of the CTC lesson (rendering only; the numbers are :mod:`pyplay.ui.lessons.ctc.assumptions`)."""

from __future__ import annotations

import math
from typing import Any

import panel as pn

from pyplay.ui.lectures import lecture
from pyplay.ui.lessons.ctc.assumptions import (
    ATTENTION_STEPS,
    Case,
    independence_case,
    length_case,
    order_case,
)
from pyplay.ui.text import Text

__all__ = ["AssumptionsSection", "case_text"]

HELP = (
    f"{lecture('wand')}: CTC assumes **not more targets than inputs**, **orderedness** and "
    "**outputs that are statistically independent** (given the network's state); the "
    "encoder-decoder makes no assumption about lengths or order. Each case below breaks one "
    "and says what CTC gives, computed by the page's CTC code. **Length**: the label "
    "H EH L L OU (HELLO with the L twice: a blank must sit between repeats) needs 6 frames; "
    "with fewer there is no path and the loss is infinite. **Order**: the orders of a, b, c "
    "reversed, one frame each: the reversed label's only path writes the last symbol at "
    "frame 1, before a net reading in order has seen it (a bidirectional net has, but must "
    "carry it across the whole sequence). **Independence**: two identical frames labelled "
    "a b or b a; CTC's frames cannot depend on each other, so it puts half its mass on "
    "a a and b b (which collapse to a and b). **Train the attention models** fits a small "
    f"attention encoder-decoder to each case ({ATTENTION_STEPS} steps, about two seconds) "
    "and gives its loss beside CTC's."
)
TITLES = {
    "length": "Not more targets than inputs",
    "order": "Orderedness",
    "independence": "Conditional independence",
}


def case_text(case: Case) -> str:
    """A case's rows, then CTC's loss against the attention model's (plain text)."""
    ctc = "inf (no path)" if math.isinf(case.ctc_loss) else f"{case.ctc_loss:.3f}"
    if math.isnan(case.attention_loss):
        att = "not trained yet (press the button)"
    else:
        att = f"{case.attention_loss:.3f}"
    if case.name == "length":
        att += " (untrained: finite all the same)"
    return "\n".join(
        [
            f"{TITLES[case.name]}:",
            *(f"  {row}" for row in case.rows),
            f"  loss per sequence: CTC {ctc}, attention encoder-decoder {att}",
        ]
    )


class AssumptionsSection:
    """The section's text and its training button."""

    def __init__(self) -> None:
        self.text = Text("", css_classes=["pyplay-ctc-assumptions"])
        self.button = pn.widgets.Button(name="Train the attention models", width=220)
        self.button.on_click(lambda *_: self.show(train=True))
        self.show(train=False)

    def show(self, train: bool) -> None:
        cases = (length_case(), order_case(train), independence_case(train))
        self.text.object = "\n\n".join(case_text(c) for c in cases)

    def sections(self) -> list[Any]:
        return [
            "## What CTC assumes, and an attention model beside it",
            pn.pane.Markdown(HELP),
            self.button,
            self.text,
        ]
