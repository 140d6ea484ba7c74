r"""Soft and hard attention on one glimpse: a network that reads one position of a sequence.

Given inputs :math:`x_1 \dots x_T` (B, T, F), a small score network says where to look and a
read-out classifies what was read (Xu et al. 2015 call the two kinds *soft* and *hard*;
Mnih et al. 2014 train glimpses with the same score-function gradient):

.. math::

    e_t &= v^\top \tanh(W_a x_t + b_a), \qquad \alpha = \mathrm{softmax}(e) \\
    r &= \textstyle\sum_t \alpha_t x_t \;\text{(soft)} \qquad\text{or}\qquad
        r = x_j,\; j \sim \mathrm{Categorical}(\alpha) \;\text{(hard)} \\
    y &= U \tanh(W_h r + b_h) + c

Soft attention is differentiable: the gradient reaches :math:`e` through :math:`\alpha`.
Hard attention picks one position, so no gradient flows through the choice; the
*score-function* (REINFORCE, Williams 1992) estimator uses

.. math::

    \nabla_\theta\, \mathbb{E}_{j \sim \alpha}[L_j]
        = \mathbb{E}_{j \sim \alpha}\bigl[\nabla_\theta L_j
        + (L_j - b)\, \nabla_\theta \log \alpha_j\bigr],
    \qquad \frac{\partial \log \alpha_j}{\partial e_t} = [t = j] - \alpha_t

which holds for any baseline :math:`b` that does not depend on :math:`j` (the term it adds has
expectation :math:`b \sum_j \nabla \alpha_j = 0`); a baseline near :math:`\mathbb{E}[L]` lowers
the estimator's variance (:class:`GlimpseObjective` keeps a running mean of the loss). The
estimator's code is :mod:`pyplay.models.score_function`, shared with the hard memory heads.
With ``training=False`` a hard model looks at :math:`\arg\max_t \alpha_t`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay._checks import as_generator, check_array, check_choice, check_dtype, check_int
from pyplay.losses import softmax
from pyplay.models.contract import Backward, ModelBase, check_model_size, config_int
from pyplay.models.score_function import advantage, logit_grad, sample
from pyplay.nn import init

__all__ = ["ATTENTION", "GlimpseCache", "GlimpseNet"]

ATTENTION = ("soft", "hard")


@dataclass(frozen=True)
class GlimpseCache:
    """What :meth:`GlimpseNet.backward` needs."""

    x: np.ndarray  # (B, T, F)
    u: np.ndarray  # (B, T, A) tanh(W_a x_t + b_a)
    alpha: np.ndarray  # (B, T)
    index: np.ndarray | None  # (B,) the positions looked at (hard), None (soft)
    r: np.ndarray  # (B, F)
    h: np.ndarray  # (B, H)


class GlimpseNet(ModelBase):
    """Looks at a sequence once, softly or by choosing one position (module docstring).

    Parameters
    ----------
    input_size, num_classes : int
        F features per position, C classes.
    attention : {"soft", "hard"}
    attn_size, hidden_size : int
        A of the score network, H of the read-out.
    dtype : numpy.float32 or numpy.float64
    rng : numpy.random.Generator or int seed
        The weights, then (a Generator spawned from it) the hard glimpses' draws.
    """

    objective = "glimpse"

    def __init__(
        self,
        input_size: int,
        num_classes: int,
        attention: str = "soft",
        attn_size: int = 16,
        hidden_size: int = 32,
        dtype: Any = np.float32,
        rng: np.random.Generator | int | None = 0,
    ) -> None:
        self.input_size = F = check_int("input_size", input_size, min_value=1)
        self.num_classes = C = check_int("num_classes", num_classes, min_value=2)
        self.attention = check_choice("attention", attention, ATTENTION)
        self.attn_size = A = check_int("attn_size", attn_size, min_value=1)
        self.hidden_size = H = check_int("hidden_size", hidden_size, min_value=1)
        self.dtype = check_dtype("dtype", dtype)
        check_model_size(type(self), locals())  # before anything is built
        gen = as_generator(rng)
        self.params: dict[str, np.ndarray] = {}
        for name, shape, fan_in in (
            ("attn.weight", (A, F), F),
            ("attn.bias", (A,), F),
            ("attn.v", (A,), A),
            ("hidden.weight", (H, F), F),
            ("hidden.bias", (H,), F),
            ("head.weight", (C, H), H),
            ("head.bias", (C,), H),
        ):
            k = 1 / np.sqrt(fan_in)
            what = f"GlimpseNet {name} {shape}"
            self.params[name] = init.uniform(gen, -k, k, shape, self.dtype, what)
        self.generator = gen.spawn(1)[0]  # the hard glimpses' draws

    @classmethod
    def estimate_parameters(cls, config: Mapping[str, Any]) -> int:
        """An upper estimate of the parameter count ``config`` describes (without building)."""
        F, C = config_int(config, "input_size", 1), config_int(config, "num_classes", 2)
        A, H = config_int(config, "attn_size", 16), config_int(config, "hidden_size", 32)
        return A * (F + 2) + H * (F + 1) + C * (H + 1)

    def scores(self, inputs: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The inputs checked (B, T, F), tanh(W_a x + b_a) (B, T, A) and alpha (B, T)."""
        x = check_array("inputs", inputs, ndim=3, dtype=self.dtype, layout="(B, T, F)")
        if x.shape[2] != self.input_size or x.shape[1] < 1:
            raise ValueError(
                f"inputs must have shape (B, T >= 1, input_size={self.input_size}), got {x.shape}"
            )
        p = self.params
        u = np.tanh(x @ p["attn.weight"].T + p["attn.bias"])  # (B, T, A)
        return x, u, softmax(u @ p["attn.v"], axis=-1)  # (B, T)

    def forward(
        self, inputs: Any, *, index: Any = None, training: bool = True
    ) -> tuple[np.ndarray, GlimpseCache]:
        """Class scores (B, C) and the cache. A hard model draws its positions from
        :attr:`generator` (``training=True``), looks at the most likely ones
        (``training=False``), or at ``index`` (B,) when given (to enumerate them)."""
        x, u, alpha = self.scores(inputs)
        B, T, _ = x.shape
        chosen: np.ndarray | None = None
        if self.attention == "soft":
            r = np.einsum("bt,btf->bf", alpha, x)  # (B, F)
        else:
            if index is not None:
                chosen = check_array("index", index, ndim=1, kind="i", layout="(B,)")
                if chosen.shape[0] != B or chosen.min() < 0 or chosen.max() >= T:
                    raise ValueError(f"index must hold B={B} positions in 0..{T - 1}")
            elif training:
                chosen = sample(alpha, self.generator)  # (B,)
            else:
                chosen = alpha.argmax(axis=1)  # (B,)
            r = x[np.arange(B), chosen]  # (B, F)
        p = self.params
        h = np.tanh(r @ p["hidden.weight"].T + p["hidden.bias"])  # (B, H)
        y = h @ p["head.weight"].T + p["head.bias"]  # (B, C)
        return y, GlimpseCache(x, u, alpha, chosen, r, h)

    def backward(
        self,
        dy: Any,
        cache: GlimpseCache,
        losses: Any = None,
        baseline: float = 0.0,
    ) -> Backward:
        """Gradients from d(loss)/d(scores) ``dy`` (B, C). A hard model also needs each row's
        loss ``losses`` (B,) for the score-function term, weighted like ``dy`` (mean: 1/B);
        ``record["de"]`` holds the gradient reaching the scores e (B, T)."""
        p, c = self.params, cache
        B = c.x.shape[0]
        dY = np.asarray(dy, dtype=self.dtype)
        if dY.shape != (B, self.num_classes):
            raise ValueError(f"dy must have shape (B, num_classes) = {(B, self.num_classes)}")
        g = {"head.weight": dY.T @ c.h, "head.bias": dY.sum(axis=0)}  # (C, H), (C,)
        dz = (dY @ p["head.weight"]) * (1 - c.h**2)  # (B, H)
        g["hidden.weight"], g["hidden.bias"] = dz.T @ c.r, dz.sum(axis=0)  # (H, F), (H,)
        if c.index is None:  # soft: through alpha
            dalpha = np.einsum("bf,btf->bt", dz @ p["hidden.weight"], c.x)  # (B, T)
            de = c.alpha * (dalpha - (c.alpha * dalpha).sum(axis=1, keepdims=True))  # (B, T)
        else:  # hard: (L_j - b) d log alpha_j / de, each row weighted 1/B like dy
            de = logit_grad(c.alpha, c.index, advantage(losses, baseline, B, self.dtype))
        du = de[:, :, None] * p["attn.v"] * (1 - c.u**2)  # (B, T, A)
        g["attn.v"] = np.einsum("bt,bta->a", de, c.u)
        g["attn.weight"] = np.einsum("bta,btf->af", du, c.x)  # (A, F)
        g["attn.bias"] = du.sum(axis=(0, 1))
        grads = {name: np.asarray(g[name], dtype=self.dtype) for name in p}
        return Backward(grads, record={"de": de})
