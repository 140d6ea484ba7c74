"""State of the "Sequence to sequence" lesson: settings, the encoder-decoder being trained, and
decoding a source the learner types, with the attention weights of every output step.

As in :mod:`pyplay.ui.lessons.rnn.state`, errors become :attr:`Seq2SeqState.message` and nothing
trained or typed is lost.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import param

from pyplay.decode.lexicon import LexiconConstraint, PrefixTree
from pyplay.decode.pruning import Pruning
from pyplay.models.seq2seq import EncoderDecoder
from pyplay.models.seq2seq.encoder_decoder import ATTENDING
from pyplay.models.seq2seq.gnmt import structure
from pyplay.objectives import reverse_sources
from pyplay.tasks.pairs import BOS, EOS, UserPairs
from pyplay.tasks.seq2seq import PAIR_TASKS
from pyplay.train import Trainer
from pyplay.ui.base_state import LessonBase, lr_param, seed_param
from pyplay.ui.checkpoint import LoadedFile
from pyplay.ui.lessons.rnn.state import LessonState
from pyplay.ui.lessons.seq2seq.beam_stepper import BeamStepper
from pyplay.ui.trainer_lesson import TrainerLesson

__all__ = [
    "ENCODER_LABELS", "LENGTH_TASKS", "PAIR_LABELS", "WIRING_LABELS", "Decoding", "Seq2SeqState",
    "pair_task", "parse_source",
]  # fmt: skip

PAIR_LABELS = {
    "Reversal": "reversal",
    "Copy": "copy_var",
    "Sorting (positions as tokens)": "sorting",
    "Dates to ISO": "dates",
    "English to French": "translation",
    "Your pairs": "pairs",
}
WIRING_LABELS = {"Luong": "attention", "Bahdanau": "bahdanau", "Init": "init", "Context": "context"}
ENCODER_LABELS = {"Stacked": "stack", "GNMT": "gnmt"}  # the model's encoder="..."
_REBUILD = (
    "task", "cell", "wiring", "score", "scale_by", "hidden_size", "num_layers", "bidirectional",
    "encoder", "share_rnn", "seed", "reverse_source", "min_len", "max_len",
)  # fmt: skip
LENGTH_TASKS = ("reversal", "copy_var")  # the tasks whose source lengths are settings
MAX_SOURCE_CHARS = 200


def pair_task(name: str, seed: int, min_len: int = 3, max_len: int = 10) -> Any:
    """A built-in pair task (a key of ``PAIR_TASKS``); those of ``LENGTH_TASKS`` (reversal and
    copy) over strings of ``min_len`` to ``max_len`` symbols."""
    if name in LENGTH_TASKS:
        return PAIR_TASKS[name](min_len=min_len, max_len=max_len, rng=seed)
    return PAIR_TASKS[name](rng=seed)


def parse_source(vocab: Any, text: str) -> tuple[list[str], np.ndarray]:
    """The tokens of a typed source ``text`` and their ids (1, S) in ``vocab``; a ValueError
    saying what does not fit."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("type a source sequence first")
    if len(text) > MAX_SOURCE_CHARS:
        raise ValueError(f"at most {MAX_SOURCE_CHARS} characters, got {len(text)}")
    tokens = vocab.split(text.strip())
    return tokens, np.array([vocab.encode(tokens, "the source")])  # (1, S)


@dataclass(frozen=True)
class Decoding:
    """A decoded source: its tokens as read, the output tokens, the attention weights
    (len(output) + 1 rows including EOS, len(source) columns; None without attention), the
    encoder's states by layer and direction (``"l0"``, ``"l0_reverse"``, ``"l1"``, ...: (S, H)
    each, source positions in the order typed) and the decoder's (len(output) + 1, L, H):
    every layer's state after each output step."""

    source: list[str]
    output: list[str]
    text: str
    weights: np.ndarray | None
    encoder: dict[str, np.ndarray] = field(default_factory=dict)
    decoder: np.ndarray | None = None


class Seq2SeqState(TrainerLesson, LessonBase):
    """Settings and actions of the sequence-to-sequence lesson (files: ``save_bytes`` and
    ``load_bytes`` of :class:`~pyplay.ui.checkpoint.SavableLesson`)."""

    task = param.Selector(objects=list(PAIR_LABELS.values()), default="reversal")
    cell = param.Selector(objects=["gru", "lstm", "rnn"], default="gru")
    wiring = param.Selector(objects=list(WIRING_LABELS.values()), default="attention")
    score = param.Selector(
        objects=["general", "dot", "scaled_dot", "additive", "cosine", "location"],
        default="general",
    )
    scale_by = param.Selector(
        objects=["key_size", "source_length"],
        default="key_size",
        doc="what the scaled dot product divides by: √d (Vaswani) or √n_source (Schmidt)",
    )
    hidden_size = param.Integer(default=48, softbounds=(4, 128))
    num_layers = param.Integer(
        default=1, softbounds=(1, 3), doc="stacked recurrent layers, in encoder and decoder"
    )
    bidirectional = param.Boolean(
        default=False, doc="the encoder reads both ways; a bridge joins its final states"
    )
    encoder = param.Selector(
        objects=list(ENCODER_LABELS.values()),
        default="stack",
        doc="stacked layers (bidirectional or not), or GNMT's: a bidirectional bottom layer "
        "under one-way residual layers, its decoder attending from its bottom layer",
    )
    share_rnn = param.Boolean(
        default=False, doc="one RNN reads the source and goes on writing the target"
    )
    lr = lr_param(0.01)
    batch_size = param.Integer(default=32, softbounds=(1, 256))
    sampling = param.Number(
        default=0.0, softbounds=(0.0, 1.0), doc="scheduled-sampling probability"
    )
    reverse_source = param.Boolean(default=False)
    min_len = param.Integer(
        default=3, softbounds=(1, 15), doc="shortest training source (reversal, copy)"
    )
    max_len = param.Integer(
        default=10, softbounds=(2, 20), doc="longest training source (reversal, copy)"
    )
    seed = seed_param()
    model: EncoderDecoder | None

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.user_pairs: str | None = None
        self._start(rebuild=_REBUILD, training=["lr", "batch_size", "sampling"])

    # ------------------------------------------------------------------ building
    def _make_task(self) -> Any:
        if self.task == "pairs":
            if self.user_pairs is None:
                raise ValueError(
                    "Paste or upload your tab-separated pairs first, then choose 'Your pairs'."
                )
            return UserPairs(self.user_pairs, rng=self.seed)
        if self.task in LENGTH_TASKS and self.max_len < self.min_len:
            raise ValueError(
                f"the longest source ({self.max_len}) must not be shorter than the "
                f"shortest ({self.min_len})"
            )
        return pair_task(self.task, self.seed, min_len=self.min_len, max_len=self.max_len)

    def _build_model(self, task: Any) -> EncoderDecoder:
        gnmt = self.encoder == "gnmt"
        if self.share_rnn and (self.bidirectional or gnmt):
            fix = (
                "choose the Stacked encoder or untick"
                if gnmt
                else "untick Bidirectional encoder or"
            )
            raise ValueError(
                "one shared RNN reads the source left to right and then goes on writing, so "
                f"it cannot read backwards too: {fix} Share one RNN"
            )
        if gnmt and self.wiring not in ("attention", "bahdanau"):
            raise ValueError(
                "GNMT's decoder attends from its bottom layer: choose the Bahdanau wiring (its "
                "previous output asks, as Wu et al.) or Luong (its new output asks)"
            )
        if gnmt and self.num_layers < 2:
            raise ValueError(
                "GNMT puts one-way layers over a bidirectional bottom layer, and its decoder "
                "reads the attention from layer 2 up: set Layers to 2 or more"
            )
        return EncoderDecoder(
            len(task.src_vocab),
            len(task.tgt_vocab),
            embedding_dim=16,
            hidden_size=self.hidden_size,
            num_layers=self.num_layers,
            cell=self.cell,
            bidirectional_encoder=self.bidirectional and not gnmt,  # GNMT's bottom layer only
            wiring=self.wiring,
            score=self.score if self.wiring in ATTENDING else None,  # only attention scores
            share_rnn=self.share_rnn,
            scale_by=self.model_scale_by(),
            rng=self.seed,
            encoder=self.encoder,
        )

    def model_scale_by(self) -> str:
        """``scale_by`` as the model takes it: the setting with the scaled dot product in an
        attending wiring, else the default (no other score divides by anything)."""
        uses = self.wiring in ATTENDING and self.score == "scaled_dot"
        return str(self.scale_by) if uses else "key_size"

    def read_file(self, data: Any) -> LoadedFile:
        """As :meth:`~pyplay.ui.checkpoint.SavableLesson.read_file`; a lesson file saved before
        ``scale_by`` existed divided the scaled dot product by √d, and its settings now say so
        (rather than keeping the page's current choice, which its model would not fit)."""
        loaded = super().read_file(data)
        if not loaded.native and "scale_by" not in loaded.settings:
            loaded = replace(loaded, settings={**loaded.settings, "scale_by": "key_size"})
        if not loaded.native and "encoder" not in loaded.settings:  # files before GNMT
            loaded = replace(loaded, settings={**loaded.settings, "encoder": "stack"})
        return loaded

    def _make_trainer(self, model: EncoderDecoder, task: Any) -> Trainer:
        return Trainer(
            model,
            task,
            lr=self.lr,
            batch_size=self.batch_size,
            clip=1.0,
            sampling=self.sampling,
            reverse_source=self.reverse_source,
            rng=self.seed,
        )

    def _built_message(self, task: Any, model: Any) -> str:
        n = sum(p.size for p in model.params.values())
        divisor = {"key_size": " by √d", "source_length": " by √n_source"}[self.scale_by]
        score = self.score + (divisor if self.score == "scaled_dot" else "")
        what = {
            "attention": f"Luong attention ({score})",
            "bahdanau": f"Bahdanau attention ({score})",
            "init": "no attention",
        }
        if self.encoder == "gnmt":  # its decoder attends as neither Luong nor Bahdanau does
            asks = {"attention": "new", "bahdanau": "previous"}[self.wiring]
            what = {self.wiring: f"attention ({score}) asked by the {asks} bottom output"}
        parts = [what.get(self.wiring, "context input")]
        if self.num_layers > 1:
            parts.append(f"{self.num_layers} layers")
        if self.encoder == "gnmt":
            parts.append(structure(self.num_layers))
        elif self.share_rnn:
            parts.append("one RNN shared by encoder and decoder")
        elif self.bidirectional:
            parts.append("bidirectional encoder")
        return (
            f"New {self.cell.upper()} encoder-decoder, {', '.join(parts)}, {n:,} parameters. "
            f"{task.describe()}"
        )

    # ------------------------------------------------------------------ training

    def evaluate(self) -> dict[str, float]:
        """Greedy exact match and loss on fresh examples (shown after a pause)."""
        return {} if self.trainer is None else self.trainer.evaluate(batch_size=100)

    # ------------------------------------------------------------------ decoding
    def example_source(self) -> str:
        """A source from the task, for the text box."""
        return "" if self.task_obj is None else self.task_obj.example()[0]

    def translate(self, text: str) -> Decoding | None:
        """Greedy decoding of ``text`` with the attention weights of each step, or None with a
        message when ``text`` does not fit the task's vocabulary."""
        if self.model is None or self.task_obj is None:
            return None
        parsed = self._source_ids(text, "Cannot translate")
        if parsed is None:
            return None
        tokens, ids = parsed
        lengths = np.array([ids.shape[1]])
        state = self.model.start(ids, lengths)
        out: list[int] = []
        rows: list[np.ndarray] = []
        states: list[np.ndarray] = []
        token = np.array([BOS])
        for _ in range(3 * ids.shape[1] + 10):
            logp, state = self.model.step(token, state, rows)
            h = state.rnn[0] if isinstance(state.rnn, tuple) else state.rnn  # (L, 1, H)
            states.append(h[:, 0])
            token = logp.argmax(axis=1)  # (1,)
            if int(token[0]) == EOS:
                break
            out.append(int(token[0]))
        weights = np.concatenate(rows, axis=0) if rows else None  # (U, S)
        record = self.model.encode(ids, lengths, record=True)[3].record
        encoder = {k: v["h"][0] for k, v in record.items()}  # (S, H) each
        if self.reverse_source:  # positions in the order the learner typed
            weights = None if weights is None else weights[:, ::-1]
            encoder = {k: v[::-1] for k, v in encoder.items()}
        words = [self.task_obj.tgt_vocab.decode([i]) for i in out]
        text = self.task_obj.tgt_vocab.decode(out)
        return Decoding(tokens, words, text, weights, encoder, np.stack(states))  # (U, L, H)

    def _source_ids(self, text: str, what: str) -> tuple[list[str], np.ndarray] | None:
        """The tokens of ``text`` and its ids (1, S) as the model reads them (reversed when
        ``reverse_source``), or None with a message."""
        try:
            tokens, ids = parse_source(self.task_obj.src_vocab, text)  # ids: (1, S)
        except ValueError as err:
            self.notify(f"{what}: {err}", "warning")
            return None
        if self.reverse_source:
            ids = reverse_sources(ids, np.array([ids.shape[1]]))
        return tokens, ids

    def target_lexicon(self) -> LexiconConstraint:
        """The words of the learner's target sentences as a prefix tree: the beam may then
        write only those words, separated by single spaces. Only "Your pairs" have
        character-level words (reversal, copy, sorting and dates write symbols, not words;
        translation writes whole words as single tokens, so a word lexicon would constrain
        nothing); otherwise a ValueError saying so."""
        task = self.task_obj
        if self.task != "pairs" or task is None:
            raise ValueError(
                "a lexicon needs word-like output spelled character by character: use your "
                "own pairs (the built-in tasks write symbols, digits or whole-word tokens)"
            )
        vocab = task.tgt_vocab
        words = {w for _, target in task.pairs for w in target.split(" ") if w}
        if not words:
            raise ValueError("your targets hold no word")
        tree = PrefixTree.from_words(vocab.encode(list(w), "a target word") for w in sorted(words))
        space = vocab.encode([" "])[0] if " " in vocab.symbols else None
        return LexiconConstraint(tree, len(vocab), EOS, space)

    def start_beam(
        self,
        text: str,
        beam_width: int = 3,
        length_penalty: float = 0.0,
        lexicon: bool = False,
        pruning: Pruning | None = None,
    ) -> BeamStepper | None:
        """A beam search over ``text`` to step through (only the targets' words when
        ``lexicon``; ``pruning``'s limits beside the width), or None with a message."""
        if self.model is None or self.task_obj is None:
            return None
        parsed = self._source_ids(text, "Cannot search")
        if parsed is None:
            return None
        try:
            words = self.target_lexicon() if lexicon else None
            return BeamStepper(
                self.model, self.task_obj.tgt_vocab, parsed[1], beam_width, length_penalty,
                lexicon=words, pruning=pruning,
            )  # fmt: skip
        except (ValueError, TypeError) as err:
            self.notify(f"Cannot search: {err}", "warning")
            return None

    def set_user_pairs(self, data: bytes | str) -> bool:
        """Use tab-separated pairs (validated); switches to the "Your pairs" task."""
        try:
            text = LessonState._decode(data, "the pairs")
            UserPairs(text)
        except (ValueError, TypeError) as err:
            self.notify(f"Pairs not used: {err}", "danger")
            return False
        self.user_pairs = text
        if self.task == "pairs":
            self.reset()
        else:
            self.task = "pairs"
        self.notify(f"Using your {len(UserPairs(text).pairs):,} pairs.", "success")
        return True
