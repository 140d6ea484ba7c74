"""The Memory lesson's equations in the notation of Solberg's lecture ("RNN example with external
memory" and "Attending to previous states II"), for the settings chosen, and where the page
departs from it. Plain text (Markdown); no Panel here."""

from __future__ import annotations

from pyplay.ui.lectures import lecture, lecture_label

__all__ = ["lecture_equations"]

_SOLBERG = lecture_label("solberg")  # the lecture the lesson follows, as a label names it

SCORE = (
    "A drawn cell passes no gradient. Training adds the **score-function** (REINFORCE) term "
    "`(L − b) ∇ log pⱼ` for every draw, `L` the example's loss and `b` a running mean of the "
    "loss (the estimator the hard glimpse uses; unbiased for any `b`, lower variance with `b` "
    "near the mean). Evaluating takes the likeliest cell; the views show one draw, the cell "
    "drawn marked □."
)


def _memnet(hard: str, feedback: str, update: str) -> list[str]:
    controller = (
        "sᵗ = h(xᵗ, sᵗ⁻¹, yᵗ⁻¹, rᵗ⁻¹)" if feedback == "output" else "sᵗ = h(xᵗ, sᵗ⁻¹, rᵗ⁻¹)"
    )
    hard_read, hard_write = hard in ("read", "both"), hard in ("write", "both")
    read = (
        "`rᵗ = v(qᵗ, M) = Mⱼ` with probability `pⱼᵗ` (**hard** read)"
        if hard_read
        else "`rᵗ = Σⱼ pⱼᵗ Mⱼ` (soft read)"
    )
    if hard_write:
        rule = "Mⱼᵗ = wᵗ" if update == "overwrite" else "Mⱼᵗ = Mⱼᵗ⁻¹ + wᵗ"
        write = f"draw `j` with probability `pⱼʷ`, then `{rule}`, every other cell kept (**hard**)"
    elif update == "overwrite":
        write = "`Mⱼᵗ = (1 − pⱼʷ) Mⱼᵗ⁻¹ + pⱼʷ wᵗ` (overwrite)"
    else:
        write = "`Mⱼᵗ = Mⱼᵗ⁻¹ + pⱼʷ wᵗ` (residual)"
    lines = [
        f"- controller: `{controller}`, output `yᵗ = f(sᵗ, rᵗ)`"
        + ("" if feedback == "output" else f" ({_SOLBERG}'s h also reads `yᵗ⁻¹`)"),
        "- read: `qᵗ = Q⁽ʳ⁾(sᵗ)`, `αⱼᵗ = f(qᵗ, K⁽ʳ⁾(Mⱼ))`, `pᵗ = softmax(αᵗ)`, " + read,
        f"- write: `wᵗ = W(sᵗ)`, `pʷ` found as for a read with `Q⁽ʷ⁾, K⁽ʷ⁾`; {write}",
    ]
    if hard != "none":
        lines.append(f"- {SCORE}")
    lines.append(
        f"- Where the page departs from {lecture('solberg')}: the match `f` is a sharpened "
        "cosine, "
        "`β cos(q, K(Mⱼ))`, not an inner product; a step writes before it reads, so `rᵗ` "
        "reads `Mᵗ`, not `Mᵗ⁻¹`"
        + (
            "; the `yᵗ⁻¹` read back is the raw output (the logits)."
            if feedback == "output"
            else "."
        )
    )
    return lines


def _attend(form: str) -> list[str]:
    if form == "state":
        return [
            "- `αᵢᵗ = f(Q(sᵗ⁻¹, xᵗ), K(sⁱ))`, `pᵗ = softmax(αᵗ)`, `s̃ᵗ⁻¹ = Σᵢ pᵢᵗ sⁱ` over the "
            "earlier states `i = 1 … t−1`",
            "- `sᵗ = h(xᵗ, s̃ᵗ⁻¹, yᵗ⁻¹)`: the attended state **replaces** the previous state; "
            "`yᵗ = f(sᵗ)`",
            f"- Choices {lecture('solberg')} leaves open: `Q(sᵗ⁻¹, xᵗ) = W_q hᵗ⁻¹ + U_q xᵗ + b`, "
            "`K(sⁱ) = hⁱ`, `f(q, k) = q·k/√H`; the LSTM's state is `s = (h, c)` and one `pᵗ` "
            "blends both; `yᵗ⁻¹` is the raw output (the logits).",
        ]
    return [
        "- `qᵗ = W_q sᵗ⁻¹ + b`, `αᵢᵗ = qᵗ·sⁱ/√H`, `pᵗ = softmax(αᵗ)`, `rᵗ = Σᵢ pᵢᵗ sⁱ`",
        "- `sᵗ = h(xᵗ, sᵗ⁻¹, rᵗ)`, `yᵗ = f(sᵗ, rᵗ)`",
        f"- Where the page departs from {lecture('solberg')}: here the read is an extra input "
        f"and `sᵗ⁻¹` is kept; {_SOLBERG}'s form, `sᵗ = h(xᵗ, s̃ᵗ⁻¹, yᵗ⁻¹)`, lets the attended "
        "state replace it (choose it under *Attending RNN*).",
    ]


def lecture_equations(model: str, hard: str, feedback: str, update: str, form: str) -> str:
    """The equations of ``model`` ("memnet", "attend" or "lstm") with the lesson's settings,
    in the notation of Solberg's lecture (an empty string for the LSTM)."""
    if model == "memnet":
        return f"**This memory net in the notation of {lecture('solberg')}**\n\n" + "\n".join(
            _memnet(hard, feedback, update)
        )
    if model == "attend":
        heading = f"**Attending to previous states, in the notation of {lecture('solberg')}**"
        return heading + "\n\n" + "\n".join(_attend(form))
    return ""
