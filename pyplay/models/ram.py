r"""The recurrent attention model (Mnih et al. 2014): classify an image from a few glimpses.

Solberg's TEK5040 lecture's "Image classification with RNN and location-based attention": start
with a centre or random glimpse with centre :math:`l^0`; then for :math:`t = 1, \dots, \tau`

1. extract a glimpse with centre at :math:`l^{t-1}`,
2. extract features for the location,
3. update the state of the RNN,
4. if :math:`t < \tau` predict the next glimpse centre :math:`l^t`, else classify.

In Mnih et al.'s form, with :math:`h^0 = 0`:

.. math::

    \rho^t &= \rho(x, l^{t-1}) \quad\text{(the glimpse sensor,
        :mod:`pyplay.models.ram_sensor`: } k \text{ patches around } l^{t-1}) \\
    g^t &= \mathrm{ReLU}\bigl(W_g [\mathrm{ReLU}(W_x \rho^t + b_x);\,
        \mathrm{ReLU}(W_l l^{t-1} + b_l)] + b_g\bigr) \quad\text{(what and where)} \\
    h^t &= \tanh(W_{ih} g^t + b_{ih} + W_{hh} h^{t-1} + b_{hh}) \quad\text{(the core RNN)} \\
    \mu^t &= \tanh(W_\mu h^t + b_\mu), \quad l^t \sim \mathcal{N}(\mu^t, \sigma^2 I),
        \quad b^t = w_b^\top h^t + c_b \quad (t < \tau) \\
    y &= W_c h^\tau + b_c \quad\text{(the class scores, at } t = \tau)

Training is Mnih et al.'s hybrid: the classifier, core and glimpse network by backpropagation
of the cross-entropy of :math:`y` (BPTT, below); the location network by REINFORCE
(:mod:`pyplay.models.ram_policy`) with the reward :math:`R = [\arg\max y = \text{class}]` and
the advantage :math:`R - b^t`; the baseline by the squared error :math:`(b^t - R)^2`, reading
:math:`h^t` as a constant. With ``reinforce_core=True`` (the default: Mnih et al. train every
parameter for the reward) the REINFORCE term also flows back through :math:`\mu^t` into
:math:`h^t`, the core and the glimpse network, so that they learn to say where the digit is;
with ``False`` the location network reads :math:`h^t` as a constant too, as many later
implementations do. The locations are inputs to the glimpse network, not differentiated (a
crop has no gradient in :math:`l`).

Per batch of :math:`B` the terms are :math:`\frac1B \sum_b \mathrm{CE}_b`,
:math:`-\frac1B \sum_b \sum_{t<\tau} (R_b - b^t_b) \log \pi(l^t_b \mid h^t_b)` and
:math:`\frac1B \sum_b \sum_{t<\tau} (b^t_b - R_b)^2`. BPTT, with :math:`\delta h^\tau =
\delta y\, W_c` and :math:`\delta h^{t-1} = \delta a^t W_{hh}`:

.. math::

    \delta a^t = (\delta h^t + [t < \tau]\, \delta a_\mu^t W_\mu) \odot (1 - (h^t)^2), \quad
    \delta g^t = \delta a^t W_{ih}, \quad
    \delta W_{hh} \mathrel{+}= (\delta a^t)^\top h^{t-1}, \quad
    \delta W_{ih} \mathrel{+}= (\delta a^t)^\top g^t,

with :math:`\delta a_\mu^t` the REINFORCE term's gradient at :math:`W_\mu h^t + b_\mu` (zero
unless ``reinforce_core``), then through the ReLUs of the glimpse network to
:math:`W_g, W_x, W_l`. With
``policy="learned"`` the glimpses after :math:`l^0` are drawn from the policy while training
and are :math:`l^t = \mu^t` otherwise; with ``policy="random"`` they are
:math:`\mathcal{U}[-1, 1]^2` always, the comparison that shows what the policy learned.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay._checks import (
    as_generator,
    check_array,
    check_choice,
    check_dtype,
    check_float,
    check_int,
)
from pyplay.limits import check_elements
from pyplay.models.contract import Backward, ModelBase, check_model_size, config_int
from pyplay.models.ram_path import GlimpsePath, path_of
from pyplay.models.ram_policy import draw, draw_uniform, log_prob_grad
from pyplay.models.ram_sensor import look, patch_sizes, pyramid
from pyplay.nn import init
from pyplay.nn._ops import matmul

__all__ = ["POLICIES", "STARTS", "RamCache", "RecurrentAttention"]

POLICIES = ("learned", "random")
STARTS = ("centre", "random")


@dataclass(frozen=True)
class RamCache:
    """What :meth:`RecurrentAttention.backward` needs; time-major, step :math:`t` at index
    ``t - 1`` (``hs`` at ``t``, :math:`h^0` first)."""

    rho: np.ndarray  # (tau, B, D) the glimpses rho^t, flattened
    l_raw: np.ndarray  # (tau, B, 2) l^0..l^{tau-1} as drawn (the policy's actions)
    l: np.ndarray  # (tau, B, 2) the same clipped to [-1, 1]: where each glimpse looked
    cat: np.ndarray  # (tau, B, Hx + Hl) [ReLU(W_x rho^t + b_x); ReLU(W_l l^{t-1} + b_l)]
    g: np.ndarray  # (tau, B, G) g^t
    hs: np.ndarray  # (tau + 1, B, H) h^0..h^tau
    mu: np.ndarray  # (tau - 1, B, 2) mu^1..mu^{tau-1}
    baseline: np.ndarray  # (tau - 1, B) b^1..b^{tau-1}


class RecurrentAttention(ModelBase):
    """Classifies an image from ``glimpses`` glimpses, choosing where to look (module docstring).

    Parameters
    ----------
    num_classes, channels : int
        C classes; channels of the images (B, channels, H, W), of any H and W.
    glimpse_size, scales, factor : int
        The sensor: ``scales`` patches of sides ``glimpse_size * factor**i``, each averaged
        down to ``glimpse_size`` x ``glimpse_size``.
    glimpses : int
        :math:`\\tau`, the glimpses before the class (at least 1; the policy acts from 2).
    rho_hidden, loc_hidden, glimpse_features, hidden_size : int
        The sizes of :math:`\\mathrm{ReLU}(W_x \\rho)`, :math:`\\mathrm{ReLU}(W_l l)`,
        :math:`g^t` and :math:`h^t`.
    sigma : float
        The policy's spread :math:`\\sigma` (0 < sigma <= 2). The location network starts at
        zero (:math:`\\mu^t = 0`, the centre) and learns from its draws around it.
    policy : {"learned", "random"}
    start : {"centre", "random"}
        :math:`l^0 = (0, 0)` or drawn from :math:`\\mathcal{U}[-1, 1]^2`.
    reinforce_core : bool
        Whether the REINFORCE term reaches the core and the glimpse network (module
        docstring).
    dtype : numpy.float32 or numpy.float64
    rng : numpy.random.Generator or int seed
        The weights, then (a Generator spawned from it, :attr:`generator`) the locations.
    """

    objective = "ram"

    def __init__(
        self,
        num_classes: int = 10,
        channels: int = 1,
        glimpse_size: int = 12,
        scales: int = 2,
        factor: int = 2,
        glimpses: int = 2,
        rho_hidden: int = 56,
        loc_hidden: int = 16,
        glimpse_features: int = 64,
        hidden_size: int = 64,
        sigma: float = 0.3,
        policy: str = "learned",
        start: str = "centre",
        reinforce_core: bool = True,
        dtype: Any = np.float32,
        rng: np.random.Generator | int | None = 0,
    ) -> None:
        self.num_classes = C = check_int("num_classes", num_classes, min_value=2)
        self.channels = check_int("channels", channels, min_value=1, max_value=64)
        self.glimpse_size = g = check_int("glimpse_size", glimpse_size, min_value=1, max_value=64)
        self.scales = k = check_int("scales", scales, min_value=1, max_value=6)
        self.factor = check_int("factor", factor, min_value=2, max_value=4)
        if patch_sizes(g, k, self.factor)[-1] > 1024:
            raise ValueError(
                "the largest patch, glimpse_size * factor**(scales - 1), must be at most 1024 "
                f"pixels, got {patch_sizes(g, k, self.factor)[-1]}"
            )
        self.glimpses = check_int("glimpses", glimpses, min_value=1, max_value=64)
        self.rho_hidden = Hx = check_int("rho_hidden", rho_hidden, min_value=1)
        self.loc_hidden = Hl = check_int("loc_hidden", loc_hidden, min_value=1)
        self.glimpse_features = G = check_int("glimpse_features", glimpse_features, min_value=1)
        self.hidden_size = H = check_int("hidden_size", hidden_size, min_value=1)
        self.sigma = check_float("sigma", sigma, min_value=0.0, max_value=2.0, min_inclusive=False)
        self.policy = check_choice("policy", policy, POLICIES)
        self.start = check_choice("start", start, STARTS)
        if not isinstance(reinforce_core, bool):
            raise TypeError(f"reinforce_core must be True or False, got {reinforce_core!r}")
        self.reinforce_core = reinforce_core
        self.dtype = check_dtype("dtype", dtype)
        check_model_size(type(self), locals())  # before anything is built
        D = k * self.channels * g * g
        gen = as_generator(rng)
        self.params: dict[str, np.ndarray] = {}
        for name, shape, fan_in in (
            ("glimpse.fc_x.weight", (Hx, D), D),
            ("glimpse.fc_x.bias", (Hx,), D),
            ("glimpse.fc_l.weight", (Hl, 2), 2),
            ("glimpse.fc_l.bias", (Hl,), 2),
            ("glimpse.fc_g.weight", (G, Hx + Hl), Hx + Hl),
            ("glimpse.fc_g.bias", (G,), Hx + Hl),
            ("core.weight_ih", (H, G), H),
            ("core.weight_hh", (H, H), H),
            ("core.bias_ih", (H,), H),
            ("core.bias_hh", (H,), H),
            ("location.weight", (2, H), H),
            ("location.bias", (2,), H),
            ("classifier.weight", (C, H), H),
            ("classifier.bias", (C,), H),
            ("baseline.weight", (1, H), H),
            ("baseline.bias", (1,), H),
        ):
            s = 1 / np.sqrt(fan_in)  # torch's default for Linear and RNNCell
            what = f"RecurrentAttention {name} {shape}"
            self.params[name] = init.uniform(gen, -s, s, shape, self.dtype, what)
        self.params["location.weight"][...] = 0  # mu^t = 0: the policy starts at the centre
        self.params["location.bias"][...] = 0
        self.generator = gen.spawn(1)[0]  # the locations' draws

    @classmethod
    def estimate_parameters(cls, config: Mapping[str, Any]) -> int:
        """An upper estimate of the parameter count ``config`` describes (without building)."""
        C, ch = config_int(config, "num_classes", 10), config_int(config, "channels", 1)
        g, k = config_int(config, "glimpse_size", 12), config_int(config, "scales", 2)
        Hx, Hl = config_int(config, "rho_hidden", 56), config_int(config, "loc_hidden", 16)
        G, H = config_int(config, "glimpse_features", 64), config_int(config, "hidden_size", 64)
        D = k * ch * g * g
        return Hx * (D + 1) + 3 * Hl + G * (Hx + Hl + 1) + H * (G + H + 2) + (C + 3) * (H + 1)

    # ------------------------------------------------------------------ forward
    def forward(
        self, images: Any, *, training: bool = True, locations: Any = None
    ) -> tuple[np.ndarray, RamCache]:
        """Class scores (B, C) of ``images`` (B, channels, H, W) and the cache.

        The glimpse centres after :math:`l^0` are drawn from :attr:`generator`
        (``policy="learned"`` while ``training``, ``policy="random"`` always) or are
        :math:`\\mu^t` (a learned policy not training); ``locations`` (B, tau, 2) gives
        :math:`l^0 \\dots l^{\\tau-1}` instead (to check gradients with the locations fixed).
        """
        x = self._check_images(images)
        B, tau, p = x.shape[0], self.glimpses, self.params
        given = None if locations is None else self._check_locations(locations, B)
        l_raw = np.empty((tau, B, 2), dtype=self.dtype)  # (tau, B, 2)
        if given is not None:
            l_raw[0] = given[:, 0]
        elif self.start == "random":
            l_raw[0] = draw_uniform(B, self.generator, self.dtype)
        else:
            l_raw[0] = 0.0
        hs = np.zeros((tau + 1, B, self.hidden_size), dtype=self.dtype)  # (tau + 1, B, H)
        pyr = pyramid(x, self.glimpse_size, self.scales, self.factor)  # the block means, once
        rho, cat, g, mu, base = [], [], [], [], []
        for t in range(1, tau + 1):
            lt = np.clip(l_raw[t - 1], -1.0, 1.0)  # (B, 2) where glimpse t looks
            r = look(pyr, lt).reshape(B, -1)  # (B, D) rho^t
            ax = p["glimpse.fc_x.bias"] + np.zeros((B, 1), dtype=self.dtype)  # (B, Hx)
            for k in self._scale_blocks():  # W_x rho^t, one scale's columns at a time
                ax += matmul(r[:, k], p["glimpse.fc_x.weight"][:, k].T)
            hx = np.maximum(ax, 0)  # (B, Hx)
            hl = np.maximum(
                matmul(lt, p["glimpse.fc_l.weight"].T) + p["glimpse.fc_l.bias"], 0
            )  # (B, Hl)
            c = np.concatenate([hx, hl], axis=1)  # (B, Hx + Hl)
            gt = np.maximum(
                matmul(c, p["glimpse.fc_g.weight"].T) + p["glimpse.fc_g.bias"], 0
            )  # (B, G)
            a = matmul(gt, p["core.weight_ih"].T) + p["core.bias_ih"] + p["core.bias_hh"]  # (B, H)
            hs[t] = np.tanh(a + matmul(hs[t - 1], p["core.weight_hh"].T))  # (B, H) h^t
            rho.append(r)
            cat.append(c)
            g.append(gt)
            if t == tau:
                break
            m = np.tanh(matmul(hs[t], p["location.weight"].T) + p["location.bias"])  # (B, 2) mu^t
            mu.append(m)
            base.append(hs[t] @ p["baseline.weight"][0] + p["baseline.bias"][0])  # (B,) b^t
            if given is not None:
                l_raw[t] = given[:, t]
            elif self.policy == "random":
                l_raw[t] = draw_uniform(B, self.generator, self.dtype)
            elif training:
                l_raw[t] = draw(m, self.sigma, self.generator)
            else:
                l_raw[t] = m
        y = matmul(hs[tau], p["classifier.weight"].T) + p["classifier.bias"]  # (B, C)
        cache = RamCache(
            np.stack(rho),  # (tau, B, D)
            l_raw,
            np.clip(l_raw, -1.0, 1.0),  # (tau, B, 2)
            np.stack(cat),  # (tau, B, Hx + Hl)
            np.stack(g),  # (tau, B, G)
            hs,
            np.array(mu, dtype=self.dtype).reshape(tau - 1, B, 2),  # (tau - 1, B, 2)
            np.array(base, dtype=self.dtype).reshape(tau - 1, B),  # (tau - 1, B)
        )
        return y, cache

    def _scale_blocks(self) -> list[slice]:
        """The columns of :math:`W_x` that read each scale's patch. :math:`W_x \\rho` is
        computed as the sum of one product per scale: the same numbers, in products small
        enough (m n k below 2^19 at a batch of 64 and ``rho_hidden`` 56) that OpenBLAS runs
        each on one thread; a step whose product was split over threads while another
        process kept the two cores busy was measured 20 times slower."""
        P = self.channels * self.glimpse_size**2
        return [slice(i * P, (i + 1) * P) for i in range(self.scales)]

    def _check_images(self, images: Any) -> np.ndarray:
        x = check_array("images", images, ndim=4, dtype=self.dtype, layout="(B, C, H, W)")
        B, C, H, W = x.shape
        if C != self.channels or min(B, H, W) < 1:
            raise ValueError(
                f"images must have shape (B >= 1, channels={self.channels}, H >= 1, W >= 1), "
                f"got {x.shape}"
            )
        pad = 2 * (patch_sizes(self.glimpse_size, self.scales, self.factor)[-1] // 2 + 1)
        check_elements("images padded for the glimpse sensor", (B, C, H + pad, W + pad), x.dtype)
        return x

    def _check_locations(self, locations: Any, B: int) -> np.ndarray:
        l = check_array("locations", locations, ndim=3, dtype=self.dtype, layout="(B, tau, 2)")
        if l.shape != (B, self.glimpses, 2):
            raise ValueError(
                f"locations must have shape (B, glimpses, 2) = {(B, self.glimpses, 2)}, "
                f"got {l.shape}"
            )
        return l

    # ------------------------------------------------------------------ backward
    def backward(self, dy: Any, cache: RamCache, rewards: Any = None) -> Backward:
        """Gradients from d(loss)/d(scores) ``dy`` (B, C) by BPTT and, given each example's
        reward ``rewards`` (B,) and a learned policy, the REINFORCE gradient of the location
        network and the squared error's of the baseline (module docstring; without rewards,
        or with a random policy, those two get zeros). ``record`` holds the advantages
        ``"advantage"`` (tau - 1, B) and the gradient reaching the means ``"dmu"``
        (tau - 1, B, 2)."""
        p, c = self.params, cache
        tau, B = c.l.shape[0], c.l.shape[1]
        dY = check_array("dy", dy, ndim=2, dtype=self.dtype, layout="(B, C)")
        if dY.shape != (B, self.num_classes):
            raise ValueError(
                f"dy must have shape (B, num_classes) = {(B, self.num_classes)}, got {dY.shape}"
            )
        gr = {name: np.zeros_like(v) for name, v in p.items()}
        dh_policy = np.zeros_like(c.hs)  # (tau + 1, B, H) what the policy sends back to h^t
        record: dict[str, Any] = {}
        if rewards is not None and self.policy == "learned" and tau > 1:
            R = check_array("rewards", rewards, ndim=1, dtype=self.dtype, layout="(B,)")
            if R.shape[0] != B:
                raise ValueError(f"rewards must hold one reward per example (B={B}), got {R.shape}")
            adv = R - c.baseline  # (tau - 1, B) R - b^t
            dmu = -(adv / B)[:, :, None] * log_prob_grad(c.l_raw[1:], c.mu, self.sigma)
            dam = dmu * (1 - c.mu**2)  # (tau - 1, B, 2) through the tanh
            h = c.hs[1:tau]  # (tau - 1, B, H) h^1..h^{tau-1}
            gr["location.weight"] = np.einsum("tbk,tbh->kh", dam, h)  # (2, H)
            gr["location.bias"] = dam.sum(axis=(0, 1))  # (2,)
            if self.reinforce_core:
                dh_policy[1:tau] = dam @ p["location.weight"]  # (tau - 1, B, H)
            db = 2 * (c.baseline - R) / B  # (tau - 1, B) d (b^t - R)^2 / B
            gr["baseline.weight"] = np.einsum("tb,tbh->h", db, h)[None]  # (1, H)
            gr["baseline.bias"] = db.sum().reshape(1)  # (1,)
            record = {"advantage": adv, "dmu": dmu}
        gr["classifier.weight"] = matmul(dY.T, c.hs[tau])  # (C, H)
        gr["classifier.bias"] = dY.sum(axis=0)  # (C,)
        dh = matmul(dY, p["classifier.weight"])  # (B, H) delta h^tau
        Hx = self.rho_hidden
        for t in range(tau, 0, -1):
            da = (dh + dh_policy[t]) * (1 - c.hs[t] ** 2)  # (B, H) delta a^t
            gr["core.weight_ih"] += matmul(da.T, c.g[t - 1])  # (H, G)
            gr["core.weight_hh"] += matmul(da.T, c.hs[t - 1])  # (H, H)
            gr["core.bias_ih"] += da.sum(axis=0)
            dh = matmul(da, p["core.weight_hh"])  # (B, H) delta h^{t-1}
            dag = matmul(da, p["core.weight_ih"]) * (c.g[t - 1] > 0)  # (B, G)
            gr["glimpse.fc_g.weight"] += matmul(dag.T, c.cat[t - 1])  # (G, Hx + Hl)
            gr["glimpse.fc_g.bias"] += dag.sum(axis=0)
            dcat = matmul(dag, p["glimpse.fc_g.weight"]) * (c.cat[t - 1] > 0)  # (B, Hx + Hl)
            for k in self._scale_blocks():  # (Hx, D) one scale's columns at a time
                gr["glimpse.fc_x.weight"][:, k] += matmul(dcat[:, :Hx].T, c.rho[t - 1][:, k])
            gr["glimpse.fc_x.bias"] += dcat[:, :Hx].sum(axis=0)
            gr["glimpse.fc_l.weight"] += matmul(dcat[:, Hx:].T, c.l[t - 1])  # (Hl, 2)
            gr["glimpse.fc_l.bias"] += dcat[:, Hx:].sum(axis=0)
        gr["core.bias_hh"] = gr["core.bias_ih"].copy()
        grads = {name: np.asarray(gr[name], dtype=self.dtype) for name in p}
        return Backward(grads, record=record or None)

    # ------------------------------------------------------------------ for drawing
    def glimpse_path(
        self, images: Any, *, training: bool = False, locations: Any = None
    ) -> GlimpsePath:
        """Where each example of ``images`` looks (:class:`~pyplay.models.ram_path.GlimpsePath`,
        :math:`l^0 \\dots l^{\\tau-1}` and the patches in pixels); the locations as
        :meth:`forward` chooses them (by default :math:`\\mu^t`, not drawn)."""
        y, cache = self.forward(images, training=training, locations=locations)
        sizes = patch_sizes(self.glimpse_size, self.scales, self.factor)
        return path_of(cache.l, np.shape(images)[2:], sizes, y.argmax(axis=1))
