"""RTRL beside BPTT on the chapter's basic recurrent network (eq. 6.3-6.4, Figure 6.3), and
the lecture's point about their costs (pyplay.dynamic.rtrl)."""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck import assert_grad_close, numeric_grad
from pyplay.dynamic import layrecnet, narxnet
from pyplay.dynamic.rtrl import bptt_gradient, cost_figures, rtrl_gradient


@pytest.mark.parametrize("B, T, R, S, O", [(1, 1, 1, 1, 1), (3, 12, 2, 4, 3), (2, 30, 1, 6, 1)])
def test_eq_6_3_rtrl_gradient_equals_bptt_to_1e_10(B: int, T: int, R: int, S: int, O: int):
    net = layrecnet((1,), (S,), input_size=R, output_size=O, rng=S)
    rng = np.random.default_rng(T)
    p, y = rng.normal(size=(B, T, R)), rng.normal(size=(B, T, O))
    bptt, rtrl = bptt_gradient(net, p, y), rtrl_gradient(net, p, y)
    assert set(rtrl) == set(net.params)
    diff = max(float(np.max(np.abs(rtrl[k] - bptt[k]))) for k in bptt)
    print(f"RTRL vs BPTT, B={B} T={T} S={S}: max difference {diff:.1e}")
    assert diff < 1e-10
    assert max(float(np.max(np.abs(v))) for v in bptt.values()) > 1e-3  # not a zero gradient


def test_rtrl_gradient_is_the_numerical_gradient_of_F() -> None:
    net = layrecnet((1,), (3,), input_size=2, output_size=2, rng=1)
    rng = np.random.default_rng(2)
    p, y = rng.normal(size=(2, 8, 2)), rng.normal(size=(2, 8, 2))

    def F() -> float:
        return 0.5 * float(np.sum((net.forward(p)[0] - y) ** 2))

    g = rtrl_gradient(net, p, y)
    for name, value in net.params.items():
        assert_grad_close(g[name], numeric_grad(F, value), name)


def test_cost_figures_grow_as_the_lecture_says() -> None:
    """BPTT: operations O(T S^2), memory O(T S); RTRL: operations O(T S^4), memory O(S^3),
    independent of T (online)."""
    base = cost_figures(T=100, S=64)
    longer, wider = cost_figures(T=200, S=64), cost_figures(T=100, S=128)
    assert longer.bptt_ops == 2 * base.bptt_ops and longer.rtrl_ops == 2 * base.rtrl_ops
    assert longer.bptt_memory == 2 * base.bptt_memory
    assert longer.rtrl_memory == base.rtrl_memory  # RTRL stores nothing per step
    order = {
        k: np.log2(getattr(wider, k) / getattr(base, k))
        for k in ("bptt_ops", "bptt_memory", "rtrl_ops", "rtrl_memory")
    }
    assert abs(order["bptt_ops"] - 2) < 0.05 and abs(order["bptt_memory"] - 1) < 1e-12
    assert abs(order["rtrl_ops"] - 4) < 0.05 and abs(order["rtrl_memory"] - 3) < 0.05
    assert base.rtrl_ops > 20 * base.bptt_ops  # S = 64: RTRL is far dearer


def test_bad_arguments_name_the_argument() -> None:
    with pytest.raises(TypeError, match=r"net must be a pyplay\.dynamic\.LDDN"):
        rtrl_gradient("net", np.zeros((1, 2, 1)), np.zeros((1, 2, 1)))
    with pytest.raises(ValueError, match=r"net must be the basic recurrent network of eq\. 6\.3"):
        rtrl_gradient(narxnet(rng=0), np.zeros((1, 2, 1)), np.zeros((1, 2, 1)))
    net = layrecnet((1,), (2,), input_size=2, output_size=1)
    with pytest.raises(ValueError, match=r"p must have shape \(B, T, 2\) and y \(B, T, 1\)"):
        rtrl_gradient(net, np.zeros((1, 3, 1)), np.zeros((1, 3, 1)))
    with pytest.raises(ValueError, match="S must be >= 1, got 0"):
        cost_figures(10, 0)
