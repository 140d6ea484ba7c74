"""The CTC lattice and the list of paths (pyplay.decode.ctc_lattice): the paths are exactly
those whose collapse is the label (brute force over every class sequence), their
probabilities add up to the forward algorithm's p(l|x), the lattice's log p equals the loss,
and every frame's occupation sums to 1."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from pyplay.decode.ctc import ctc_loss
from pyplay.decode.ctc_decode import ctc_collapse
from pyplay.decode.ctc_lattice import MAX_PATHS, ctc_lattice, ctc_paths, path_log_prob
from pyplay.losses import log_softmax


def _log_probs(T: int, C: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return log_softmax(rng.normal(size=(T, C)), axis=1)  # (T, C)


@pytest.mark.parametrize(
    "target, T, C",
    [([1, 2], 4, 3), ([1, 1], 4, 3), ([2], 3, 3), ([1, 2, 1], 6, 3), ([3, 1, 3, 2], 6, 4)],
)
def test_paths_are_exactly_those_that_collapse_to_the_label(target, T, C):
    every = [p for p in itertools.product(range(C), repeat=T) if ctc_collapse(p) == target]
    assert sorted(ctc_paths(target, T)) == sorted(every)
    assert len(set(ctc_paths(target, T))) == len(every)


@pytest.mark.parametrize("target, T, C", [([1, 2], 5, 3), ([2, 2], 5, 3), ([1, 3, 2], 7, 4)])
def test_path_probabilities_add_up_to_the_dynamic_programme(target, T, C):
    lp = _log_probs(T, C, seed=len(target) + T)
    total = sum(np.exp(path_log_prob(lp, p)) for p in ctc_paths(target, T))
    loss, _ = ctc_loss(lp[None], np.array([target]), [T], [len(target)], reduction="none")
    lattice = ctc_lattice(lp, target)
    assert total == pytest.approx(np.exp(-loss[0]), rel=1e-12)
    assert lattice.log_p == pytest.approx(-loss[0], rel=1e-12)


def test_the_lattice_occupation_sums_to_one_and_alpha_beta_meet():
    lp = _log_probs(9, 4, seed=3)
    lat = ctc_lattice(lp, [1, 3, 3])
    assert lat.extended.tolist() == [0, 1, 0, 3, 0, 3, 0]
    np.testing.assert_allclose(lat.gamma.sum(axis=1), 1.0, rtol=1e-12)
    # alpha_t(s) beta_t(s) summed over s is p(l|x) at every frame
    joint = np.logaddexp.reduce(lat.log_alpha + lat.log_beta, axis=1)  # (T,)
    np.testing.assert_allclose(joint, lat.log_p, rtol=1e-12)
    # only the first blank and the first label can start, the last two end
    assert np.isneginf(lat.log_alpha[0, 2:]).all()
    assert np.isneginf(lat.log_beta[-1, :-2]).all()


def test_a_label_too_long_for_the_frames_has_no_path():
    lp = _log_probs(2, 3, seed=0)
    assert ctc_paths([1, 1], 2) == []  # a repeat needs a blank between: three frames
    lat = ctc_lattice(lp, [1, 1])
    assert np.isneginf(lat.log_p) and not lat.gamma.any()


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="target must not hold the blank"):
        ctc_paths([0, 1], 4)
    with pytest.raises(ValueError, match="T must leave at most"):
        ctc_paths([1, 2], 40)
    with pytest.raises(ValueError, match="T must be >= 1"):
        ctc_paths([1], 0)
    with pytest.raises(ValueError, match="path must hold one class id"):
        path_log_prob(_log_probs(3, 3, 0), [1, 2])
    assert MAX_PATHS >= 1000
