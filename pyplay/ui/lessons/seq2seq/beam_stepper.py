"""Beam search you can step through, for the sequence-to-sequence lesson (no Panel here).

:class:`BeamStepper` wraps a :class:`~pyplay.decode.beam.BeamSearch` over a trained
:class:`~pyplay.models.seq2seq.EncoderDecoder` and turns its records into what the views draw: a
ranked list of the live, finished and pruned hypotheses of the current step (plain text) and
the search tree (one node per kept hypothesis and per pruned candidate near the beam, one edge
to its parent), with greedy decoding of the same source beside it. Both run on a frozen copy
of the model taken when the search starts, so training on while stepping changes neither and
greedy and beam scores of the same hypothesis agree. With a ``lexicon``
(:class:`~pyplay.decode.lexicon.LexiconConstraint`) both may only write its words.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay.decode.beam import BeamSearch, BeamStep
from pyplay.decode.greedy import greedy_decode
from pyplay.decode.lexicon import LexiconConstraint
from pyplay.decode.pruning import Pruning
from pyplay.models.seq2seq import EncoderDecoder
from pyplay.tasks.pairs import BOS, EOS, Vocab

__all__ = ["BEAM_MAX_LENGTH", "BeamStepper", "TreeData"]

BEAM_MAX_LENGTH = 30  # the most tokens the page's beam search writes (EOS included)

REASONS = {
    "live": "in the beam",
    "eos": "finished (EOS)",
    "max_length": "finished (max length)",
    "outside_beam": "pruned: outside the beam",
    "cannot_beat_finished": "pruned: cannot beat the finished ones",
    "disallowed": "pruned: not allowed",
    "zero_probability": "pruned: probability 0",
    "incomplete": "pruned: incomplete",
    "per_node": "pruned: its node is full (per node)",
    "below_threshold": "pruned: below the threshold",
}


@dataclass(frozen=True)
class TreeData:
    """Columns of the tree figure: nodes (x = step, y = slot, the hypothesis as ``label``, the
    token it added as ``token``) and parent edges."""

    nodes: dict[str, list[Any]]
    edges: dict[str, list[float]]


class BeamStepper:
    """Step / Back / Run through beam search on one source ids row (1, S)."""

    def __init__(
        self,
        model: EncoderDecoder,
        tgt_vocab: Vocab,
        src: np.ndarray,
        beam_width: int = 3,
        length_penalty: float = 0.0,
        max_length: int = BEAM_MAX_LENGTH,
        lexicon: LexiconConstraint | None = None,
        pruning: Pruning | None = None,
    ) -> None:
        lengths = np.array([src.shape[1]])
        model = copy.deepcopy(model)  # frozen: the optimiser updates the lesson's in place
        self.vocab = tgt_vocab
        self.search = BeamSearch(
            model.step,
            model.start(src, lengths),
            BOS,
            EOS,
            beam_width=beam_width,
            max_length=max_length,
            length_penalty=length_penalty,
            reorder=model.reorder,
            vocab_size=len(tgt_vocab),
            constraint=lexicon,
            pruning=pruning,
        )
        (greedy,) = greedy_decode(
            model.step, model.start(src, lengths), BOS, EOS, max_length,
            vocab_size=len(tgt_vocab), constraint=lexicon,
        )  # fmt: skip
        self.lexicon = lexicon
        self.greedy_text = self.text(greedy.tokens)
        if greedy.status == "dead_end":  # under the lexicon: no allowed token was left
            self.greedy_text += " (dead end: no lexicon word fits)"
        self.greedy_log_prob = float(greedy.log_prob)
        self.width = beam_width

    def text(self, tokens: tuple[int, ...] | list[int]) -> str:
        out = self.vocab.decode([t for t in tokens if t != EOS])
        return out + (" <eos>" if tokens and tokens[-1] == EOS else "")

    # ------------------------------------------------------------------ moving
    def step(self) -> BeamStep | None:
        return None if self.search.done else self.search.advance()

    def back(self) -> BeamStep | None:
        return self.search.back() if self.search.history else None

    def run(self) -> None:
        self.search.run()

    # ------------------------------------------------------------------ what to show
    def listing(self) -> str:
        """The current step as ranked plain text: live, finished so far, pruned (near the beam)."""
        history = self.search.history
        lines = [f"Step {self.search.step} of at most {self.search.max_length}"]
        if self.lexicon is not None:
            lines[0] += f", only the {len(self.lexicon.tree):,} words of the targets (lexicon)"
        if self.search.pruning.active:
            lines[0] += f"; beam width {self.width}, {self.search.pruning.describe()}"
        lines.append(f"greedy: {self.greedy_text!r}  log p = {self.greedy_log_prob:.3f}")
        if not history:
            lines.append("(press Step to expand the start token)")
            return "\n".join(lines)
        last = history[-1]
        lines.append("live:")
        lines += [self._line(h) for h in last.live] or ["  (none)"]
        lines.append("finished (best first):")
        lines += [self._line(h) for h in self.search.results()] or ["  (none yet)"]
        near = [h for h in last.pruned if h.rank < 2 * self.width + len(last.finished)]
        lines.append("pruned this step (near the beam):")
        lines += [f"{self._line(h)}  <- {REASONS[h.status]}" for h in near] or ["  (none)"]
        if self.search.done:
            best = self.search.results()
            lines.append(f"done: best {self.text(best[0].tokens)!r}" if best else "done")
        return "\n".join(lines)

    def _line(self, h: Any) -> str:
        return f"  {self.text(h.tokens)!r:<28} log p {h.log_prob:8.3f}  score {h.score:8.3f}"

    def tree(self) -> TreeData:
        """Nodes of every step so far (kept, finished and pruned near the beam) and edges."""
        nodes: dict[str, list[Any]] = {
            "x": [0], "y": [0], "label": ["<bos>"], "token": ["<bos>"], "score": [0.0],
            "status": ["start"],
        }  # fmt: skip
        edges: dict[str, list[float]] = {"x0": [], "y0": [], "x1": [], "y1": []}
        slot_of_live: dict[int, float] = {0: 0.0}  # previous step: live index -> y
        for rec in self.search.history:
            shown = [*rec.live, *rec.finished]
            shown += [h for h in rec.pruned if h.rank < 2 * self.width + len(rec.finished)]
            shown.sort(key=lambda h: h.rank)
            next_slots: dict[int, float] = {}
            for y, h in enumerate(shown):
                nodes["x"].append(rec.step)
                nodes["y"].append(y)
                nodes["label"].append(self.text(h.tokens))
                nodes["token"].append(self.text(h.tokens[-1:]).strip() or "␣")  # its last token
                nodes["score"].append(round(h.score, 4))
                nodes["status"].append(REASONS[h.status])
                edges["x0"].append(rec.step - 1)
                edges["y0"].append(slot_of_live.get(h.parent, 0.0))
                edges["x1"].append(rec.step)
                edges["y1"].append(float(y))
                if h.status == "live":
                    next_slots[rec.live.index(h)] = y
            slot_of_live = next_slots
        return TreeData(nodes, edges)
