"""Sequence-to-sequence tasks: batch layout, determinism, each task's rule, user pairs."""

from __future__ import annotations

import datetime

import numpy as np
import pytest

from pyplay.tasks.pairs import BOS, EOS, PAD, PairBatch, UserPairs, Vocab, exact_match, parse_pairs
from pyplay.tasks.seq2seq import (
    PAIR_TASKS,
    DateFormat,
    Reversal,
    Sorting,
    Translation,
    VariableCopy,
)


def texts(task, batch: PairBatch) -> list[tuple[str, str]]:
    out = []
    for b in range(batch.src.shape[0]):
        src = task.src_vocab.decode(batch.src[b, : batch.src_lengths[b]])
        out.append((src, task.tgt_vocab.decode(batch.tgt_out[b])))
    return out


@pytest.mark.parametrize("name", sorted(PAIR_TASKS))
def test_batch_layout_and_seeding(name: str) -> None:
    task = PAIR_TASKS[name](rng=3)
    batch = task.batch(16)
    B, S = batch.src.shape
    U = batch.tgt_in.shape[1]
    assert B == 16 and batch.tgt_out.shape == batch.tgt_mask.shape == (B, U)
    assert batch.src_lengths.max() == S and batch.src_lengths.min() >= 1
    for b in range(B):
        n = int(batch.tgt_mask[b].sum())  # target length + EOS
        assert batch.tgt_in[b, 0] == BOS
        assert batch.tgt_out[b, n - 1] == EOS
        np.testing.assert_array_equal(batch.tgt_in[b, 1:n], batch.tgt_out[b, : n - 1])
        assert (batch.tgt_out[b, n:] == PAD).all() and (
            batch.src[b, batch.src_lengths[b] :] == PAD
        ).all()
        assert (batch.src[b, : batch.src_lengths[b]] >= 3).all()
    again = PAIR_TASKS[name](rng=3).batch(16)
    np.testing.assert_array_equal(again.src, batch.src)
    np.testing.assert_array_equal(again.tgt_out, batch.tgt_out)
    other = PAIR_TASKS[name](rng=4).batch(16)
    assert other.src.shape != batch.src.shape or not np.array_equal(other.src, batch.src)


def test_reversal_and_copy_rules() -> None:
    task = Reversal(n_symbols=5, min_len=3, max_len=9, rng=0)
    for src, tgt in texts(task, task.batch(50)):
        assert tgt == src[::-1] and 3 <= len(src) <= 9 and set(src) <= set("abcde")
    task2 = VariableCopy(rng=1)
    assert all(s == t for s, t in texts(task2, task2.batch(20)))


@pytest.mark.parametrize("output", ["values", "positions"])
def test_sorting(output: str) -> None:
    task = Sorting(output=output, rng=2)
    for src, tgt in texts(task, task.batch(40)):
        values = [int(v) for v in src.split()]
        got = [int(v) for v in tgt.split()]
        if output == "values":
            assert got == sorted(values)
        else:
            assert sorted(got) == list(range(len(values)))  # a permutation of positions
            assert [values[i] for i in got] == sorted(values)


def test_dates_are_valid_iso_of_the_source() -> None:
    task = DateFormat(rng=5)
    seen_formats = set()
    for src, tgt in texts(task, task.batch(200)):
        date = datetime.date.fromisoformat(tgt)
        if "/" in src:
            seen_formats.add("slash")
            d, m, y = (int(p) for p in src.split("/"))
        elif "," in src:
            seen_formats.add("comma")
            month, d_s, y_s = src.replace(",", "").split()
            d, y, m = int(d_s), int(y_s), _month(month)
        else:
            d_s, month, y_s = src.split()
            seen_formats.add("long" if len(month) > 3 or month == "May" else "short")
            d, y, m = int(d_s), int(y_s), _month(month)
        assert (date.day, date.month, date.year) == (d, m, y)
    assert seen_formats == {"slash", "comma", "long", "short"}


def _month(name: str) -> int:
    return next(
        k for k in range(1, 13) if datetime.date(2000, k, 1).strftime("%B").startswith(name)
    )


def test_translation_split_and_vocab() -> None:
    task = Translation(held_out=24, rng=0)
    assert len(task.train_pairs) == 168 and len(task.test_pairs) == 24
    assert not set(task.train_pairs) & set(task.test_pairs)
    drawn = {pair for pair in texts(task, task.batch(300))}
    assert drawn <= set(task.train_pairs)
    assert ("she sees a cat", "elle voit un chat") in set(task.train_pairs) | set(task.test_pairs)
    assert Translation(rng=9).test_pairs == task.test_pairs  # the split does not follow the seed


def test_vocab_encode_decode_and_errors() -> None:
    v = Vocab(("a", "b"))
    assert v.encode("ab") == [3, 4] and v.decode([BOS, 3, 4, EOS, 3]) == "ab" and len(v) == 5
    with pytest.raises(ValueError, match="source contains 'z'"):
        v.encode("az", "source")
    with pytest.raises(ValueError, match="distinct"):
        Vocab(("a", "a"))


def test_exact_match() -> None:
    batch = PairBatch.of([([3, 4], [3, 4]), ([3], [4])])
    assert exact_match([[3, 4, EOS], [3, EOS]], batch) == 0.5
    assert exact_match([[3, 4], [4, EOS, 3]], batch) == 1.0


def test_user_pairs_and_their_errors() -> None:
    task = UserPairs("cat\tchat\ndog\tchien\n\n", rng=0)
    assert set(texts(task, task.batch(20))) == {("cat", "chat"), ("dog", "chien")}
    with pytest.raises(ValueError, match="line 2 must be 'source<TAB>target'"):
        parse_pairs("a\tb\nno tab here")
    with pytest.raises(ValueError, match="line 1 must have text on both sides"):
        parse_pairs("\tb")
    with pytest.raises(ValueError, match="at least one"):
        parse_pairs("\n \n")
    with pytest.raises(ValueError, match="at most 200 characters"):
        parse_pairs("a" * 201 + "\tb")
    with pytest.raises(ValueError, match="at most 2 lines"):
        parse_pairs("a\tb\nc\td\ne\tf", max_pairs=2)
    with pytest.raises(TypeError, match="pairs must be text"):
        parse_pairs(b"a\tb")  # type: ignore[arg-type]


def test_task_argument_errors() -> None:
    with pytest.raises(ValueError, match="max_len"):
        Reversal(min_len=5, max_len=3)
    with pytest.raises(ValueError, match="output must be one of"):
        Sorting(output="ranks")
    with pytest.raises(ValueError, match="batch_size"):
        Reversal().batch(0)


def test_pairs_box_takes_what_the_help_promises_and_lines_are_named_right() -> None:
    # issue 21: a line a<TAB>b<TAB>c made the target 'b<TAB>c'; U+2028 split a line and the
    # message then pointed at the wrong text; the box cut a 60k paste at 5,000 characters
    with pytest.raises(ValueError, match=r"line 2 must be 'source<TAB>target' with one tab, got 2"):
        parse_pairs("x\ty\na\tb\tc")
    assert parse_pairs("ab\u2028c\td\ne\tf") == [("ab\u2028c", "d"), ("e", "f")]
    with pytest.raises(ValueError, match=r"line 3 must be"):
        parse_pairs("a\tb\r\nc\td\rno tab")
    from pyplay.tasks.pairs import MAX_PAIR_CHARS, MAX_PAIRS, MAX_PAIRS_TEXT

    longest = "\n".join(["a" * MAX_PAIR_CHARS + "\t" + "b" * MAX_PAIR_CHARS] * MAX_PAIRS)
    assert len(longest) <= MAX_PAIRS_TEXT  # the page's box holds the most the help promises
    assert len(parse_pairs(longest)) == MAX_PAIRS
