"""CTC: loss and gradient against PyTorch and brute force, decoding, the frames task, learning."""

from __future__ import annotations

import itertools
import time

import numpy as np
import pytest

from gradcheck import assert_grad_close, max_rel_error, numeric_grad
from pyplay.decode import (
    ctc_best_path,
    ctc_collapse,
    ctc_greedy_decode,
    ctc_loss,
    ctc_loss_logits,
    ctc_prefix_beam_search,
)
from pyplay.losses import log_softmax
from pyplay.models import SequenceModel
from pyplay.optim import Adam
from pyplay.tasks.ctc_frames import CTCBatch, CTCFrames, edit_distance

REDUCTIONS = ("none", "sum", "mean")


def ragged_problem(blank: int = 0, seed: int = 0) -> tuple[np.ndarray, ...]:
    """B=5 sequences of unequal frame and label counts (one empty labelling, repeats)."""
    rng = np.random.default_rng(seed)
    B, T, C, S = 5, 11, 5, 5
    logits = rng.standard_normal((B, T, C)) * 1.5  # (B, T, C)
    labels = [c for c in range(C) if c != blank]
    targets = rng.choice(labels, size=(B, S))  # (B, S)
    targets[1, :3] = labels[1]  # a run of three equal labels
    targets[3, :2] = labels[0]  # a repeated pair
    input_lengths = np.array([11, 9, 6, 11, 3])
    target_lengths = np.array([5, 3, 0, 4, 1])
    targets[2] = -1  # padding is never read
    return logits, targets, input_lengths, target_lengths


def torch_ctc(logits, targets, input_lengths, target_lengths, blank, reduction, zero_inf=False):
    """Torch's loss and its gradients with respect to the logits and to the log-probabilities."""
    torch = pytest.importorskip("torch")
    z = torch.tensor(logits, dtype=torch.float64, requires_grad=True)
    lp = torch.log_softmax(z, dim=-1)
    lp.retain_grad()
    loss = torch.nn.functional.ctc_loss(
        lp.transpose(0, 1),  # torch is time-major (T, B, C)
        torch.tensor(np.where(targets < 0, 0, targets)),
        torch.tensor(input_lengths),
        torch.tensor(target_lengths),
        blank=blank,
        reduction=reduction,
        zero_infinity=zero_inf,
    )
    loss.sum().backward()
    return loss.detach().numpy(), z.grad.numpy(), lp.grad.numpy()


@pytest.mark.parametrize("blank", [0, 2, 4])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_loss_and_logit_gradient_match_torch(reduction: str, blank: int) -> None:
    logits, targets, in_len, tgt_len = ragged_problem(blank)
    want, dz_want, _ = torch_ctc(logits, targets, in_len, tgt_len, blank, reduction)
    loss, dlp = ctc_loss(log_softmax(logits), targets, in_len, tgt_len, blank, reduction)
    loss2, dz = ctc_loss_logits(logits, targets, in_len, tgt_len, blank, reduction)
    assert np.shape(loss) == np.shape(want)
    assert max_rel_error(loss, want) <= 1e-6
    assert max_rel_error(loss2, want) <= 1e-6
    assert max_rel_error(dz, dz_want) <= 1e-6
    assert dlp.shape == dz.shape == logits.shape and dlp.dtype == np.float64


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_torch_log_prob_gradient_is_ours_plus_softmax(reduction: str) -> None:
    """torch's backward returns softmax - gamma on valid frames; ours is -gamma (free log_probs)."""
    logits, targets, in_len, tgt_len = ragged_problem(0, seed=1)
    _, _, dlp_torch = torch_ctc(logits, targets, in_len, tgt_len, 0, reduction)
    lp = log_softmax(logits)
    _, dlp = ctc_loss(lp, targets, in_len, tgt_len, reduction=reduction)
    B, T, _ = lp.shape
    scale = np.ones(B) if reduction != "mean" else 1.0 / (np.maximum(tgt_len, 1) * B)
    valid = np.arange(T)[None, :] < in_len[:, None]  # (B, T)
    expected = dlp + np.exp(lp) * (valid * scale[:, None])[..., None]
    assert max_rel_error(expected, dlp_torch) <= 1e-6
    assert np.abs(dlp - dlp_torch).max() > 1e-2  # the two conventions really differ


def test_posterior_occupation_sums_to_one_on_valid_frames() -> None:
    logits, targets, in_len, tgt_len = ragged_problem(0, seed=2)
    _, dlp = ctc_loss(log_softmax(logits), targets, in_len, tgt_len, reduction="sum")
    occupation = -dlp.sum(axis=-1)  # (B, T)
    valid = np.arange(logits.shape[1])[None, :] < in_len[:, None]
    np.testing.assert_allclose(occupation[valid], 1.0, rtol=1e-12)
    assert not dlp[~valid].any() and (dlp <= 0).all()


@pytest.mark.slow
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_gradcheck_log_probs_as_free_variables(reduction: str) -> None:
    rng = np.random.default_rng(3)
    _, targets, in_len, tgt_len = ragged_problem(1, seed=3)
    lp = rng.standard_normal((5, 11, 5)) - 1.0  # not normalised: free variables
    weights = rng.random(5) + 0.5  # a projection of the "none" losses

    def total(x: np.ndarray) -> tuple[float, np.ndarray]:
        loss, g = ctc_loss(x, targets, in_len, tgt_len, blank=1, reduction=reduction)
        if reduction == "none":  # project the (B,) losses; "none" returns d(sum)/d(log_probs)
            return float(np.sum(loss * weights)), g * weights[:, None, None]
        return float(loss), g

    _, analytic = total(lp)
    numeric = numeric_grad(lambda: total(lp)[0], lp)
    assert_grad_close(analytic, numeric, f"dlog_probs ({reduction})", rtol=1e-6)


@pytest.mark.slow
def test_gradcheck_logits() -> None:
    logits, targets, in_len, tgt_len = ragged_problem(0, seed=4)
    _, dz = ctc_loss_logits(logits, targets, in_len, tgt_len)
    numeric = numeric_grad(lambda: ctc_loss_logits(logits, targets, in_len, tgt_len)[0], logits)
    assert_grad_close(dz, numeric, "dlogits", rtol=1e-6)


def all_labelling_probs(probs: np.ndarray, blank: int) -> dict[tuple[int, ...], float]:
    """p(l|x) for every labelling, by enumerating all C^T paths and collapsing each."""
    T, C = probs.shape
    out: dict[tuple[int, ...], float] = {}
    for path in itertools.product(range(C), repeat=T):
        label = tuple(ctc_collapse(list(path), blank))
        out[label] = out.get(label, 0.0) + float(np.prod(probs[np.arange(T), path]))
    return out


@pytest.mark.parametrize("blank", [0, 1])
def test_probability_is_the_sum_over_every_alignment(blank: int) -> None:
    rng = np.random.default_rng(5)
    lp = log_softmax(rng.standard_normal((1, 4, 3)))
    table = all_labelling_probs(np.exp(lp[0]), blank)
    assert sum(table.values()) == pytest.approx(1.0, rel=1e-12)
    labels = [c for c in range(3) if c != blank]
    cases = [(), (labels[0],), (labels[0], labels[0]), (labels[0], labels[1]), (labels[1],) * 3]
    for target in cases:
        padded = np.array([[*target, *[labels[0]] * (3 - len(target))]])
        loss, _ = ctc_loss(lp, padded, [4], [len(target)], blank=blank, reduction="sum")
        assert np.exp(-loss) == pytest.approx(table.get(target, 0.0), rel=1e-10), target
    # four frames cannot hold a labelling like (a, a, a) plus two separating blanks
    assert (labels[1],) * 3 not in table


def test_impossible_alignment_is_infinite_or_zeroed() -> None:
    logits = np.random.default_rng(6).standard_normal((2, 4, 3))
    targets = np.array([[1, 1, 1], [1, 2, 0]])  # row 0 needs 5 frames, row 1 fits
    lengths, tgt_len = np.array([4, 4]), np.array([3, 2])
    loss, dz = ctc_loss_logits(logits, targets, lengths, tgt_len, reduction="none")
    assert np.isinf(loss[0]) and np.isfinite(loss[1]) and not dz[0].any() and dz[1].any()
    want, _, _ = torch_ctc(logits, targets, lengths, tgt_len, 0, "none")
    assert np.isinf(want[0]) and max_rel_error(loss[1], want[1]) <= 1e-6
    zl, zdz = ctc_loss_logits(logits, targets, lengths, tgt_len, zero_infinity=True)
    want, dz_want, _ = torch_ctc(logits, targets, lengths, tgt_len, 0, "mean", zero_inf=True)
    assert max_rel_error(zl, want) <= 1e-6 and max_rel_error(zdz, dz_want) <= 1e-6
    assert not zdz[0].any()


def test_float32_and_empty_sequences() -> None:
    logits, targets, in_len, tgt_len = ragged_problem(0)
    l32, g32 = ctc_loss_logits(logits.astype(np.float32), targets, in_len, tgt_len)
    l64, g64 = ctc_loss_logits(logits, targets, in_len, tgt_len)
    assert g32.dtype == np.float32 and abs(l32 - l64) < 1e-5 * abs(l64)
    assert np.abs(g32 - g64).max() < 1e-6
    lp = log_softmax(logits[:2])
    loss, g = ctc_loss(lp, [[1], [1]], [0, 0], [0, 1], reduction="none")
    assert loss[0] == 0.0 and np.isinf(loss[1]) and not g.any()


def test_greedy_decoding_merges_repeats_and_drops_blanks() -> None:
    path = [0, 1, 1, 0, 1, 2, 2, 2, 0, 0, 3]
    assert ctc_collapse(path) == [1, 1, 2, 3]
    assert ctc_collapse(path, blank=2) == [0, 1, 0, 1, 0, 3]
    assert ctc_collapse([]) == []
    scores = np.eye(4)[[path, [3, 3, 0, 3, 1, 1, 1, 1, 1, 1, 1]]] * 5.0  # (2, 11, 4)
    assert ctc_greedy_decode(scores) == [[1, 1, 2, 3], [3, 3, 1]]
    paths, labels = ctc_best_path(scores, [4, 3])
    assert paths == [[0, 1, 1, 0], [3, 3, 0]] and labels == [[1], [3]]


def test_best_path_is_not_the_best_labelling() -> None:
    """Two frames of p(blank)=0.6, p(a)=0.4: the best path is blank-blank (0.36) but 'a' has
    three paths (a-, -a, aa) worth 0.64."""
    lp = np.log(np.array([[0.6, 0.4], [0.6, 0.4]]))
    assert ctc_greedy_decode(lp[None]) == [[]]
    best = ctc_prefix_beam_search(lp, beam_width=4)
    assert [p for p, _ in best] == [[1], []]
    assert best[0][1] == pytest.approx(np.log(0.64)) and best[1][1] == pytest.approx(np.log(0.36))


@pytest.mark.parametrize("seed", range(6))
def test_prefix_beam_search_with_a_wide_beam_is_exact(seed: int) -> None:
    rng = np.random.default_rng(seed)
    lp = log_softmax(rng.standard_normal((4, 3)) * 2)  # T=4, C=3
    table = all_labelling_probs(np.exp(lp), blank=0)
    exact = sorted(table.items(), key=lambda kv: -kv[1])
    beams = ctc_prefix_beam_search(lp, beam_width=64)
    assert len(beams) == len(table)  # nothing pruned: every reachable labelling is scored
    assert beams[0][0] == list(exact[0][0])
    for labels, score in beams:
        assert np.exp(score) == pytest.approx(table[tuple(labels)], rel=1e-10)
    narrow = ctc_prefix_beam_search(lp, beam_width=2)
    assert len(narrow) == 2 and narrow[0][1] >= narrow[1][1]


def test_prefix_beam_search_batch_and_lengths() -> None:
    rng = np.random.default_rng(7)
    lp = log_softmax(rng.standard_normal((3, 6, 4)))
    lengths = np.array([6, 4, 1])
    batch = ctc_prefix_beam_search(lp, lengths, beam_width=5, blank=3)
    for b in range(3):
        alone = ctc_prefix_beam_search(lp[b, : lengths[b]], beam_width=5, blank=3)
        assert batch[b] == alone
        assert ctc_prefix_beam_search(lp[b], int(lengths[b]), beam_width=5, blank=3) == alone
    assert {tuple(p) for p, _ in batch[2]} == {(), (0,), (1,), (2,)}


def test_errors_name_the_argument() -> None:
    lp = log_softmax(np.zeros((2, 4, 3)))
    tg, il, tl = np.array([[1, 2], [2, 0]]), np.array([4, 3]), np.array([2, 1])
    cases = [
        ((lp[0], tg, il, tl), {}, ValueError, "log_probs must be a 3-D array"),
        ((lp, tg[0], il, tl), {}, ValueError, "targets must be a 2-D array"),
        ((lp, tg.astype(float), il, tl), {}, TypeError, "targets must hold integer"),
        ((lp, tg, [5, 3], tl), {}, ValueError, "input_lengths must lie between 0 and T=4"),
        ((lp, tg, [-1, 3], tl), {}, ValueError, "input_lengths must lie between"),
        ((lp, tg, il, [3, 1]), {}, ValueError, "target_lengths must lie between 0 and S=2"),
        ((lp, tg, il, [2, -1]), {}, ValueError, "target_lengths must lie between"),
        ((lp, tg, il, [2]), {}, ValueError, "target_lengths must have one entry per"),
        ((lp, [[1, 0], [2, 0]], il, tl), {}, ValueError, r"targets\[0, 1\] = 0"),
        ((lp, [[1, 3], [2, 0]], il, tl), {}, ValueError, "class ids in 0..2 other than"),
        ((lp, tg, il, tl), {"blank": 3}, ValueError, "blank must be <= 2"),
        ((lp, tg, il, tl), {"reduction": "avg"}, ValueError, "reduction must be one of"),
        ((lp, tg, il, tl), {"zero_infinity": 1}, TypeError, "zero_infinity must be True"),
    ]
    for args, kwargs, error, message in cases:
        with pytest.raises(error, match=message):
            ctc_loss(*args, **kwargs)
    bad = lp.copy()
    bad[0, 0, 0] = -np.inf
    with pytest.raises(ValueError, match="log_probs must be finite"):
        ctc_loss(bad, tg, il, tl)
    with pytest.raises(ValueError, match="logits must be a 3-D array"):
        ctc_loss_logits(lp[0], tg, il, tl)
    with pytest.raises(ValueError, match="beam_width must be >= 1"):
        ctc_prefix_beam_search(lp, beam_width=0)
    with pytest.raises(ValueError, match="input_lengths must lie between 0 and T=4"):
        ctc_greedy_decode(lp, [5, 1])
    with pytest.raises(ValueError, match="log_probs must not hold NaN"):
        ctc_prefix_beam_search(np.full((3, 2), np.nan))


def test_task_is_seeded_and_renders_the_labels() -> None:
    a, b, c = CTCFrames(rng=7).batch(16), CTCFrames(rng=7).batch(16), CTCFrames(rng=8).batch(16)
    assert isinstance(a, CTCBatch)
    for name in ("inputs", "targets", "lengths", "target_lengths", "frame_labels"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert not np.array_equal(a.lengths, c.lengths) or not np.array_equal(a.inputs, c.inputs)
    task = CTCFrames(n_symbols=3, min_len=2, max_len=5, noise=0.0, rng=1)
    batch = task.batch(64)
    B, T, F = batch.inputs.shape
    assert F == task.input_size == 3 and task.output_size == 4
    assert batch.mask.sum(axis=1).tolist() == batch.lengths.tolist() and T == batch.lengths.max()
    assert batch.target_lengths.min() >= 2 and batch.target_lengths.max() <= 5
    for k in range(B):
        frames = batch.frame_labels[k, : batch.lengths[k]]
        labels = batch.targets[k, : batch.target_lengths[k]].tolist()
        assert ctc_collapse(frames) == labels  # a silent frame separates equal neighbours
        lit = batch.inputs[k, : batch.lengths[k]]  # noise-free: the one-hot pattern, scaled
        assert (lit.argmax(axis=1) + 1)[frames > 0].tolist() == frames[frames > 0].tolist()
        assert not lit[frames == 0].any() and not batch.inputs[k, batch.lengths[k] :].any()
    perfect = np.eye(4)[batch.frame_labels] * 10.0  # (B, T, C): the true alignment
    scores = task.metric(perfect, batch)
    assert scores == {"exact_match": 1.0, "label_error_rate": 0.0}
    assert task.baseline_loss() > 1.0 and "CTC" in task.describe()
    assert edit_distance([1, 2, 3], [1, 3]) == 1 and edit_distance([], [2, 2]) == 2


@pytest.mark.slow
def test_bidirectional_gru_learns_to_read_the_frames() -> None:
    """Seeded: 250 Adam steps of 32 examples; measured exact match 0.86 on 300 held-out."""
    start = time.perf_counter()
    task = CTCFrames(rng=0)
    model = SequenceModel(
        "gru",
        input_kind="real",
        input_size=task.input_size,
        output_size=task.output_size,
        hidden_size=32,
        bidirectional=True,
        rng=0,
    )
    opt = Adam(model.params, lr=0.02)
    for _ in range(250):
        b = task.batch(32)
        logits, _, cache = model.forward(b.inputs.astype(np.float32), lengths=b.lengths)
        loss, dlogits = ctc_loss_logits(logits, b.targets, b.lengths, b.target_lengths)
        opt.step(model.backward(dlogits, cache).grads)
    test = CTCFrames(rng=99).batch(300)
    logits, _, _ = model.forward(test.inputs.astype(np.float32), lengths=test.lengths)
    scores = task.metric(logits, test)
    print(f"\n[ctc] {scores} final loss {loss:.3f} in {time.perf_counter() - start:.1f} s")
    assert scores["exact_match"] >= 0.7, scores
