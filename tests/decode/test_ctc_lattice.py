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


HELLO = ("-", "H", "EH", "L", "OU")  # the blank first, then the slide's phones


def test_slide_ctc_paths_of_h_eh_l_ou() -> None:
    """The IDSIA lecture's "Sequence Modeling with CTC - Training" slide: many paths
    correspond to the label "H EH L OU" (hello), a path's label being its phones with repeats,
    then blanks, removed; blanks are needed to output the same symbol twice. Over six frames
    the list is exactly the paths that collapse to the label (all 5^6 class sequences tried),
    and their probabilities add up to the forward algorithm's p(l|x)."""
    label = [HELLO.index(p) for p in ("H", "EH", "L", "OU")]
    T = 6
    every = [p for p in itertools.product(range(len(HELLO)), repeat=T) if ctc_collapse(p) == label]
    listed = ctc_paths(label, T)
    assert sorted(listed) == sorted(every) and len(listed) == len(set(listed)) == 45
    spelled = {" ".join(HELLO[k] for k in p) for p in listed}
    assert {"H H EH L OU OU", "- H EH L OU -", "H - EH L - OU", "H EH EH EH L OU"} <= spelled
    lp = _log_probs(T, len(HELLO), seed=4)
    total = sum(np.exp(path_log_prob(lp, p)) for p in listed)
    loss, _ = ctc_loss(lp[None], np.array([label]), [T], [len(label)], reduction="none")
    assert total == pytest.approx(np.exp(-loss[0]), rel=1e-12)
    assert ctc_lattice(lp, label).log_p == pytest.approx(-loss[0], rel=1e-12)
    # the slide's note: a repeated phone needs a blank between, so one frame more
    twice = [HELLO.index(p) for p in ("H", "EH", "L", "L", "OU")]
    assert ctc_paths(twice, 5) == [] and ctc_paths(twice, 6) == [(1, 2, 3, 0, 3, 4)]
