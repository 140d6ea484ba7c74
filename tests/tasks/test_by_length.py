"""Accuracy by source length (pyplay.tasks.by_length) and fixed-length pairs of the pair tasks:
an oracle scores 1.0, shapes, errors, and the classic result that attention holds up on long
sources where a plain encoder-decoder does not."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from pyplay.models.seq2seq import EncoderDecoder
from pyplay.tasks.by_length import LengthCurve, accuracy_by_length, check_lengths_range
from pyplay.tasks.pairs import EOS, PairBatch, output_scores
from pyplay.tasks.seq2seq import DateFormat, Reversal, Sorting, VariableCopy
from pyplay.train import Trainer

WIRINGS = ("init", "attention")


class Oracle:
    """Decodes a pair task perfectly (reversal or copy), or always writes ``wrong``."""

    def __init__(self, reverse: bool, extra: list[int] | None = None) -> None:
        self.reverse, self.extra, self.calls = reverse, extra or [], 0

    def greedy(self, src: Any, src_lengths: Any, max_length: int = 50) -> list[list[int]]:
        self.calls += 1
        out = []
        for row, n in zip(src.tolist(), src_lengths.tolist(), strict=True):
            ids = row[:n][::-1] if self.reverse else row[:n]
            out.append([*ids, *self.extra][:max_length])
        return out


# ------------------------------------------------------------------ tasks
@pytest.mark.parametrize("cls", [Reversal, VariableCopy])
def test_pairs_of_a_fixed_length_keep_the_task_rule(cls: type) -> None:
    task = cls(min_len=3, max_len=5, rng=0)
    batch = PairBatch.of(task.pairs_of_length(7, 12))  # beyond the task's own range on purpose
    assert batch.src.shape == (7, 12) and (batch.src_lengths == 12).all()
    src = batch.src
    want = src[:, ::-1] if cls is Reversal else src
    assert (batch.tgt_out[:, :12] == want).all() and (batch.tgt_out[:, 12] == EOS).all()


def test_the_random_length_draws_are_unchanged() -> None:
    """Drawing a length then the letters, in that order, as before fixed lengths existed."""
    rng = np.random.default_rng(3)
    n = int(rng.integers(3, 11))
    letters = rng.integers(0, 8, size=n)
    source, target = Reversal(min_len=3, max_len=10, rng=3).example()
    assert source == "".join("abcdefgh"[i] for i in letters) and target == source[::-1]


def test_sorting_draws_fixed_lengths_and_refuses_positions_it_cannot_write() -> None:
    values = PairBatch.of(Sorting(output="values", rng=0).pairs_of_length(4, 11))
    assert values.src.shape == (4, 11)
    assert PairBatch.of(Sorting(max_len=8, rng=0).pairs_of_length(3, 8)).src.shape == (3, 8)
    with pytest.raises(ValueError, match=r"at most max_len \(8\).*got 9"):
        Sorting(max_len=8, rng=0).pairs_of_length(3, 9)


def test_fixed_lengths_errors() -> None:
    with pytest.raises(TypeError, match="dates task cannot draw sources of a chosen length"):
        DateFormat(rng=0).pairs_of_length(2, 5)
    with pytest.raises(ValueError, match="length"):
        Reversal(rng=0).pairs_of_length(2, 0)
    with pytest.raises(ValueError, match="count"):
        Reversal(rng=0).pairs_of_length(0, 3)


def test_output_scores_count_whole_outputs_and_tokens_in_place() -> None:
    batch = PairBatch.of([([3, 4], [4, 3]), ([5, 6, 7], [7, 6, 5])])
    assert output_scores([[4, 3, EOS], [7, 6, 5]], batch) == (1.0, 1.0)
    # row 0 one token short (half its tokens), row 1 one token too many (all in place)
    exact, token = output_scores([[4], [7, 6, 5, 5]], batch)
    assert exact == 0.0 and token == pytest.approx((0.5 + 1.0) / 2)
    with pytest.raises(ValueError, match="one output per row"):
        output_scores([[4]], batch)


# ------------------------------------------------------------------ the evaluator
def test_a_perfect_oracle_scores_one_at_every_length() -> None:
    task = Reversal(min_len=3, max_len=6, rng=0)
    oracle = Oracle(reverse=True)
    curve = accuracy_by_length(oracle, task, range(3, 13), n=20)
    assert isinstance(curve, LengthCurve) and curve.n == 20
    assert curve.lengths.tolist() == list(range(3, 13))
    assert curve.exact_match.shape == curve.token_accuracy.shape == (10,)
    assert (curve.exact_match == 1.0).all() and (curve.token_accuracy == 1.0).all()
    assert curve.at(12) == (1.0, 1.0)


def test_a_wrong_oracle_scores_by_its_mistakes() -> None:
    """Copy read as reversal: only palindromes come out right; an extra token after the
    target spoils exact match but not the tokens in place."""
    task = VariableCopy(n_symbols=2, min_len=1, max_len=4, rng=0)
    curve = accuracy_by_length(Oracle(reverse=False, extra=[3]), task, [1, 2], n=50)
    assert (curve.exact_match == 0.0).all() and (curve.token_accuracy == 1.0).all()
    curve = accuracy_by_length(Oracle(reverse=True), task, [1, 2], n=400, rng=5)
    assert curve.exact_match[0] == 1.0  # one letter: its own reverse
    assert 0.4 < curve.exact_match[1] < 0.6  # two of two letters: half are aa or bb


def test_evaluation_leaves_the_training_stream_alone_and_batches_lengths() -> None:
    task, twin = Reversal(rng=4), Reversal(rng=4)
    oracle = Oracle(reverse=True)
    accuracy_by_length(oracle, task, [5, 3, 4], n=10)
    assert oracle.calls == 1  # 30 rows: one batch
    assert (task.batch(5).src == twin.batch(5).src).all()
    a = accuracy_by_length(EncoderDecoder(11, 11, hidden_size=8, rng=0), task, [2, 7], n=9)
    b = accuracy_by_length(EncoderDecoder(11, 11, hidden_size=8, rng=0), task, [2, 7], n=9)
    assert a.lengths.tolist() == [2, 7]
    np.testing.assert_array_equal(a.token_accuracy, b.token_accuracy)  # same seed, same pairs


def test_reverse_source_feeds_the_source_backwards() -> None:
    """A copier fed the reversed source writes the reversal."""
    task = Reversal(rng=0)
    curve = accuracy_by_length(Oracle(reverse=False), task, [4, 9], n=10, reverse_source=True)
    assert (curve.exact_match == 1.0).all()


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"lengths": []}, ValueError, "at least one length"),
        ({"lengths": [3, 3]}, ValueError, "distinct"),
        ({"lengths": [0, 2]}, ValueError, "lengths"),
        ({"lengths": "34"}, TypeError, "lengths must be a range"),
        ({"lengths": [2.5]}, TypeError, "lengths"),
        ({"n": 0}, ValueError, "n"),
        ({"lengths": range(1, 101), "n": 2000}, ValueError, "at most 100,000 pairs"),
        ({"reverse_source": 1}, TypeError, "reverse_source must be True or False"),
        ({"model": object()}, TypeError, "model must decode greedily"),
        ({"task": "reversal"}, TypeError, "task must be a pyplay pair task"),
        ({"task": DateFormat(rng=0)}, TypeError, "cannot draw sources of a chosen length"),
    ],
)
def test_bad_arguments_are_refused(kwargs: dict[str, Any], error: type, match: str) -> None:
    args: dict[str, Any] = {
        "model": Oracle(reverse=True), "task": Reversal(rng=0), "lengths": [3], "n": 5,
    }  # fmt: skip
    args.update(kwargs)
    with pytest.raises(error, match=match):
        accuracy_by_length(**args)


def test_lengths_are_sorted_and_a_missing_length_is_named() -> None:
    assert check_lengths_range([5, 2, 9]).tolist() == [2, 5, 9]
    curve = accuracy_by_length(Oracle(reverse=True), Reversal(rng=0), [4], n=3)
    with pytest.raises(ValueError, match="length 5 was not evaluated"):
        curve.at(5)


# ------------------------------------------------------------------ the classic result
def _trained(wiring: str) -> EncoderDecoder:
    """A GRU encoder-decoder of 32 units trained 500 steps on reversal of 3-8 letters
    (both wirings see the same batches: same task seed)."""
    task = Reversal(min_len=3, max_len=8, rng=0)
    model = EncoderDecoder(
        11, 11, embedding_dim=16, hidden_size=32, cell="gru", wiring=wiring, rng=0
    )
    trainer = Trainer(model, task, lr=0.01, batch_size=32, clip=1.0, rng=0)
    for _ in trainer.run(500):
        pass
    return model


@pytest.mark.slow
def test_attention_holds_up_on_long_sources_and_just_beyond_the_training_range() -> None:
    """Trained on 3-8 letters. Measured exact match (200 sources a length, seed 1234), plain
    against attention: length 3 1.00 / 0.99, 6 0.49 / 0.99, 8 (the longest trained) 0.10 /
    0.94, 9 (beyond the range) 0.01 / 0.35; from 10 on both 0.00 (neither decoder has ever
    written more than 8 tokens)."""
    task = Reversal(min_len=3, max_len=8, rng=0)
    curves = {w: accuracy_by_length(_trained(w), task, range(3, 17), n=200) for w in WIRINGS}
    for k, length in enumerate(curves["init"].lengths.tolist()):
        row = " ".join(f"{w} {c.exact_match[k]:.2f}/{c.token_accuracy[k]:.2f}" for w, c in
                       curves.items())  # fmt: skip
        print(f"[by length] L={length}: {row}")
    plain, attention = curves["init"], curves["attention"]
    assert attention.at(8)[0] >= 0.7 and plain.at(8)[0] <= 0.3  # long, in range
    assert attention.at(9)[0] - plain.at(9)[0] >= 0.2  # beyond the range
    assert attention.at(3)[0] >= 0.95 and plain.at(3)[0] >= 0.95  # short: both fine
