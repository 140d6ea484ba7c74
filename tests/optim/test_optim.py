"""Optimisers, clipping and schedules against torch.optim, plus state round trips."""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck import max_rel_error
from pyplay.optim import (
    SGD,
    Adam,
    AdamW,
    CosineAnnealingLR,
    LinearWarmup,
    RMSprop,
    StepLR,
    clip_grad_norm,
    global_norm,
)

torch = pytest.importorskip("torch")

CASES = [
    (SGD, torch.optim.SGD, {"lr": 0.1}),
    (SGD, torch.optim.SGD, {"lr": 0.1, "momentum": 0.9}),
    (SGD, torch.optim.SGD, {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01}),
    (SGD, torch.optim.SGD, {"lr": 0.05, "momentum": 0.5, "dampening": 0.3}),
    (Adam, torch.optim.Adam, {"lr": 0.01}),
    (Adam, torch.optim.Adam, {"lr": 0.01, "weight_decay": 0.1, "amsgrad": True}),
    (AdamW, torch.optim.AdamW, {"lr": 0.01}),
    (AdamW, torch.optim.AdamW, {"lr": 0.01, "weight_decay": 0.3, "betas": (0.8, 0.99)}),
    (RMSprop, torch.optim.RMSprop, {"lr": 0.01}),
    (
        RMSprop,
        torch.optim.RMSprop,
        {"lr": 0.01, "momentum": 0.9, "centered": True, "weight_decay": 0.01},
    ),
]


def _params(seed=0):
    rng = np.random.default_rng(seed)
    return {"w": rng.normal(size=(3, 4)), "b": rng.normal(size=4)}


@pytest.mark.parametrize(("ours", "theirs", "kw"), CASES)
def test_matches_torch_step_by_step(ours, theirs, kw):
    params = _params()
    tparams = {k: torch.tensor(v.copy(), requires_grad=True) for k, v in params.items()}
    opt = ours(params, **kw)
    topt = theirs(list(tparams.values()), **kw)
    rng = np.random.default_rng(1)
    for step in range(8):
        grads = {k: rng.normal(size=v.shape) for k, v in params.items()}
        opt.step(grads)
        for k, p in tparams.items():
            p.grad = torch.from_numpy(grads[k].copy())
        topt.step()
        for k in params:
            assert max_rel_error(params[k], tparams[k].detach().numpy()) < 1e-6, (step, k)


@pytest.mark.parametrize(("ours", "_", "kw"), CASES)
def test_state_dict_resumes_identically(ours, _, kw):
    rng = np.random.default_rng(2)
    grads = [{k: rng.normal(size=v.shape) for k, v in _params().items()} for _ in range(6)]
    straight = _params()
    opt = ours(straight, **kw)
    for g in grads:
        opt.step(g)
    resumed = _params()
    first = ours(resumed, **kw)
    for g in grads[:3]:
        first.step(g)
    state = first.state_dict()
    second = ours(resumed, **kw)
    second.load_state_dict(state)
    for g in grads[3:]:
        second.step(g)
    for k in straight:
        np.testing.assert_array_equal(straight[k], resumed[k])


def test_updates_in_place_and_checks_keys():
    params = _params()
    w = params["w"]
    opt = Adam(params, lr=0.1)
    opt.step({"w": np.ones((3, 4)), "b": np.ones(4)})
    assert params["w"] is w and not np.allclose(w, _params()["w"])
    with pytest.raises(ValueError, match="missing"):
        opt.step({"w": np.ones((3, 4))})
    with pytest.raises(ValueError, match=r"grads\['b'\]"):
        opt.step({"w": np.ones((3, 4)), "b": np.ones(5)})
    with pytest.raises(ValueError, match="lr"):
        Adam(params, lr=-1.0)
    with pytest.raises(ValueError, match="nesterov"):
        SGD(params, lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="does not fit"):
        opt.load_state_dict({"lr": 0.1, "step": 1})


def test_clip_matches_torch():
    rng = np.random.default_rng(4)
    grads = {"a": rng.normal(size=(5, 3)) * 10, "b": rng.normal(size=7)}
    tensors = [torch.tensor(v.copy(), requires_grad=True) for v in grads.values()]
    for t, v in zip(tensors, grads.values(), strict=True):
        t.grad = torch.from_numpy(v.copy())
    before = global_norm(grads)
    norm = clip_grad_norm(grads, 1.0)
    tnorm = torch.nn.utils.clip_grad_norm_(tensors, 1.0)
    assert norm == pytest.approx(before) and norm == pytest.approx(float(tnorm))
    for t, v in zip(tensors, grads.values(), strict=True):
        assert max_rel_error(v, t.grad.numpy()) < 1e-6
    assert global_norm(grads) == pytest.approx(1.0, rel=1e-5)
    small = {"a": np.full(3, 0.1)}
    clip_grad_norm(small, 1.0)
    np.testing.assert_array_equal(small["a"], np.full(3, 0.1))


@pytest.mark.parametrize(
    ("ours", "theirs", "kw"),
    [
        (StepLR, torch.optim.lr_scheduler.StepLR, {"step_size": 3, "gamma": 0.5}),
        (
            CosineAnnealingLR,
            torch.optim.lr_scheduler.CosineAnnealingLR,
            {"T_max": 10, "eta_min": 0.001},
        ),
    ],
)
def test_schedules_match_torch(ours, theirs, kw):
    opt = SGD(_params(), lr=0.1)
    sched = ours(opt, **kw)
    topt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
    tsched = theirs(topt, **kw)
    for _ in range(12):
        assert opt.lr == pytest.approx(topt.param_groups[0]["lr"], rel=1e-9)
        opt.step({k: np.zeros_like(v) for k, v in opt.params.items()})
        sched.step()
        topt.step()
        tsched.step()


def test_linear_warmup_then_cosine():
    opt = SGD(_params(), lr=1.0)
    sched = LinearWarmup(opt, warmup_steps=4, after=(CosineAnnealingLR, {"T_max": 4}))
    seen = [opt.lr]
    for _ in range(8):
        sched.step()
        seen.append(opt.lr)
    np.testing.assert_allclose(seen[:4], [0.25, 0.5, 0.75, 1.0])
    assert seen[4] == pytest.approx(1.0) and seen[6] == pytest.approx(0.5)
    assert seen[8] == pytest.approx(0.0, abs=1e-12)
    state = sched.state_dict()
    again = LinearWarmup(SGD(_params(), lr=1.0), warmup_steps=4)
    again.load_state_dict(state)
    assert again.t == 8


@pytest.mark.parametrize("amsgrad", [False, True])
def test_adam_flat_step_equals_the_per_parameter_update(amsgrad: bool) -> None:
    """Adam's flat path (all parameters at once) against its per-parameter ``_update``: the
    same numbers bit for bit, the state dict included, and a state loaded into the flat
    buffers is used by the next step."""
    rng = np.random.default_rng(0)
    fast = {
        "w": rng.normal(size=(3, 4)).astype(np.float32),
        "b": rng.normal(size=5).astype(np.float32),
    }
    plain = {k: v.copy() for k, v in fast.items()}
    opt_fast, opt_plain = (
        Adam(fast, lr=0.01, amsgrad=amsgrad),
        Adam(plain, lr=0.01, amsgrad=amsgrad),
    )
    opt_plain._flat = None  # the per-parameter path
    for _ in range(4):
        g = {k: rng.normal(size=v.shape) for k, v in fast.items()}  # float64: cast as before
        opt_fast.step(g)
        opt_plain.step({k: v.copy() for k, v in g.items()})
    for k in fast:
        np.testing.assert_array_equal(fast[k], plain[k])
    s_fast, s_plain = opt_fast.state_dict(), opt_plain.state_dict()
    assert s_fast.keys() == s_plain.keys()
    for k in s_fast:
        np.testing.assert_array_equal(s_fast[k], s_plain[k])
    opt_fast.load_state_dict(s_plain)
    opt_plain.load_state_dict(s_plain)
    g = {k: rng.normal(size=v.shape) for k, v in fast.items()}
    opt_fast.step(g)
    opt_plain.step(g)
    for k in fast:
        np.testing.assert_array_equal(fast[k], plain[k])
