"""State of the Sequence to sequence lesson's "One shared RNN" section: an encoder-decoder
with separate encoder and decoder RNNs and one whose single RNN reads the source and goes on
writing the target (``EncoderDecoder(share_rnn=True)``, the "encoder-decoder, shared
RNN" of Solberg's lecture), trained side by side on the same batches (no Panel).

It takes the lesson's settings when it starts (task if reversal or copy, else reversal; the
training lengths, cell, hidden size, layers, wiring, attention score, learning rate, batch
size and seed; the encoder reads one way in both, as a shared RNN must) and trains models of
its own for :data:`SHARED_STEPS` steps, through the loop that drives
:class:`~pyplay.ui.lessons.seq2seq.by_length.LengthComparison`; then it measures both models'
greedy exact match on fresh pairs.
"""

from __future__ import annotations

from typing import Any

from pyplay.tasks.pairs import exact_match
from pyplay.tasks.seq2seq import PAIR_TASKS
from pyplay.train import Trainer
from pyplay.ui.lessons.seq2seq.by_length import ComparisonSetting, LengthComparison

__all__ = ["MODELS", "SHARED_STEPS", "SharedComparison", "recurrent_parameters"]

SHARED_STEPS = 300  # training steps of each model
MODELS = {"separate": "separate encoder and decoder", "shared": "one shared RNN"}
TEST_PAIRS = 100  # fresh pairs for the exact match at the end


def recurrent_parameters(model: Any) -> int:
    """The parameters of ``model``'s recurrent stacks (encoder, decoder or the shared one)."""
    stacks = ("encoder.rnn.", "decoder.rnn.", "rnn.")
    return sum(v.size for k, v in model.params.items() if k.startswith(stacks))


class SharedComparison(LengthComparison):
    """Separate against shared encoder-decoder RNNs, on the same batches: their learning
    curves (:attr:`losses`), parameter counts and, once trained, exact match."""

    MODELS = MODELS

    def __init__(self) -> None:
        super().__init__()
        self._scores: tuple[int, dict[str, float]] | None = None

    def _trainer(self, setting: ComparisonSetting, key: str) -> Trainer:
        self._scores = None
        return self.make_trainer(setting, share_rnn=key == "shared")

    def parameters(self) -> dict[str, tuple[int, int]]:
        """Each model's (parameters, recurrent parameters)."""
        return {
            key: (t.model.num_parameters(), recurrent_parameters(t.model))
            for key, t in self.trainers.items()
        }

    def scores(self) -> dict[str, float]:
        """Greedy exact match of each model on the same fresh pairs (computed once per step
        count)."""
        if self.setting is None:
            return {}
        if self._scores is None or self._scores[0] != self.step_count:
            found = {}
            task = PAIR_TASKS[self.setting.task]
            for key, trainer in self.trainers.items():
                batch = task(
                    min_len=self.setting.min_len, max_len=self.setting.max_len, rng=99
                ).batch(TEST_PAIRS)  # the same pairs for both
                out = trainer.model.greedy(batch.src, batch.src_lengths, self.setting.max_len + 2)
                found[key] = exact_match(out, batch)
            self._scores = (self.step_count, found)
        return self._scores[1]

    def progress(self) -> str:
        """One line: the steps done, the parameter counts and the last losses (and exact
        match once done)."""
        s = self.setting
        if s is None:
            return "Not trained yet: press Train both."
        text = self.steps_line()
        counts = self.parameters()
        for key, (n, n_rnn) in counts.items():
            name = MODELS[key]
            text += f" {name[0].upper()}{name[1:]}: {n:,} parameters ({n_rnn:,} recurrent)"
            if self.losses.get(key):
                tail = self.losses[key][-20:]
                text += f", loss {sum(tail) / len(tail):.3f} (mean of the last {len(tail)})"
            text += "."
        if self.finished:
            found = self.scores()
            text += (
                " Exact match on fresh pairs: "
                + ", ".join(f"{MODELS[k]} {v:.2f}" for k, v in found.items())
                + "."
            )
        return text
