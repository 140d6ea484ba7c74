r"""Show, Attend and Tell (Xu et al. 2015) in miniature: an LSTM that writes a caption while it
attends over a grid of convolutional features.

Wand's IDSIA lecture's "Image Captioning with Visual Attention" and Solberg's TEK5040
lecture's "image captioning with RNN and content-based attention" (*content based addressing
with 14 x 14 conv features as memory*). The encoder (:mod:`pyplay.models.captioner_encoder`)
turns the image into annotation vectors :math:`a = \{a_1, \dots, a_L\}`,
:math:`a_i \in \mathbb{R}^D`, one per grid cell; the decoder writes word :math:`y_t` from the
previous word, its state and a context
:math:`\hat z_t` read from :math:`a`:

.. math::

    \bar a &= \tfrac{1}{L} \textstyle\sum_i a_i, \qquad
        h_0 = \tanh(W_{init,h}\, \bar a + b_{init,h}), \qquad
        c_0 = \tanh(W_{init,c}\, \bar a + b_{init,c}) \\
    e_{ti} &= f_{att}(a_i, h_{t-1}) = w^\top \tanh(W_a a_i + U_a h_{t-1} + b_a), \qquad
        \alpha_t = \mathrm{softmax}(e_t) \\
    \hat z_t &= \textstyle\sum_i \alpha_{ti}\, a_i \;\text{(soft)}, \qquad
        \hat z_t = a_{s_t},\; s_t \sim \mathrm{Categorical}(\alpha_t) \;\text{(hard)}, \qquad
        \hat z_t = \bar a \;\text{(none)} \\
    h_t, c_t &= \mathrm{LSTM}([E y_{t-1};\, \hat z_t],\; h_{t-1}, c_{t-1}), \qquad
        p(y_t \mid a, y_{<t}) = \mathrm{softmax}(L_o [h_t;\, \hat z_t] + b_o)

:math:`f_{att}` is additive (Bahdanau's), as in Xu et al.; :math:`W_a a_i` is computed once per
image, not once per word. The LSTM step is the memory nets' fused step
(:func:`pyplay.models.memory.heads.lstm_step`: one matmul for the gates, PyTorch's gate order
``i, f, g, o``; parameters named as ``torch.nn.LSTMCell``'s); Xu et al.'s deep
output layer is simplified to one affine map of :math:`[h_t; \hat z_t]`. ``attention="none"``
is the plain encoder-decoder for comparison: every word sees the mean :math:`\bar a`, i.e.
uniform weights :math:`\alpha_{ti} = 1/L`, which is what :meth:`Captioner.forward` returns for it.

Soft attention is differentiable: :math:`\partial L/\partial e_t = \alpha_t \odot (g_t -
\alpha_t^\top g_t)` with :math:`g_{ti} = a_i^\top \partial L / \partial \hat z_t`. Hard attention
passes no gradient through its choices :math:`s_t`; Xu et al. train it with the score-function
(REINFORCE) estimator of :math:`\nabla\, \mathbb{E}_s[L]` (:mod:`pyplay.models.score_function`),
the caption's loss :math:`L_b` standing in for every choice of the caption:

.. math::

    \nabla_\theta\, \mathbb{E}_{s}[L] = \mathbb{E}_{s}\Bigl[\nabla_\theta L(s) +
        (L(s) - b) \textstyle\sum_t \nabla_\theta \log \alpha_{t, s_t}\Bigr], \qquad
    \frac{\partial \log \alpha_{t,s_t}}{\partial e_{ti}} = [i = s_t] - \alpha_{ti},

with a baseline :math:`b` (a running mean of the loss,
:class:`~pyplay.objectives.caption.CaptionObjective`) that lowers the variance and
keeps the estimate unbiased. The term reaches
:math:`h_{t-1}` through :math:`e_t`, so it flows back through time like any other gradient.
Left out of Xu et al.: the doubly stochastic regulariser :math:`\lambda \sum_i (1 - \sum_t
\alpha_{ti})^2`, the gate :math:`\beta_t` on :math:`\hat z_t`, and the hard model's entropy term.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay._checks import as_generator, check_array, check_choice, check_dtype, check_int
from pyplay.losses import softmax
from pyplay.models.captioner_encoder import COORDS, ConvEncoder, EncoderCache
from pyplay.models.contract import Backward, ModelBase, check_model_size, config_int
from pyplay.models.memory.heads import LSTMStep, lstm_step, lstm_step_backward
from pyplay.models.score_function import advantage, logit_grad, sample
from pyplay.nn import Embedding, Linear, init
from pyplay.tasks.pairs import BOS, EOS, PAD

__all__ = ["ATTENTION", "CaptionCache", "Captioner"]

ATTENTION = ("soft", "hard", "none")


@dataclass(frozen=True)
class CaptionCache:
    """What :meth:`Captioner.backward` needs, step by step."""

    enc: EncoderCache
    a: np.ndarray  # (B, L, D) annotation vectors
    h0: np.ndarray  # (B, H) tanh(W_init_h abar + b)
    c0: np.ndarray  # (B, H)
    init: tuple[Any, Any]  # the two Linear caches (abar)
    emb: np.ndarray  # (B, U) the embedding's cache (token ids)
    u: list[np.ndarray | None]  # per step (B, L, A) tanh(W_a a_i + U_a h_{t-1} + b_a)
    alpha: np.ndarray  # (B, U, L)
    index: np.ndarray | None  # (B, U) the cells looked at (hard), else None
    lstm: list[LSTMStep]  # per step the LSTM step's saved values
    hs: np.ndarray  # (B, U + 1, H) h_0 .. h_U
    out: np.ndarray  # (B, U, H + D) the output layer's cache [h_t; z_t]


class Captioner(ModelBase):
    """Show, Attend and Tell on small images (module docstring).

    Parameters
    ----------
    vocab_size : int
        V words, ids 0, 1, 2 being PAD, BOS, EOS (:class:`~pyplay.tasks.pairs.Vocab`).
    image_size : int
        S of the (B, 3, S, S) images (8..96); :attr:`grid` is about S/4 cells a side (6 x 6
        for S = 24).
    attention : {"soft", "hard", "none"}
    channels, feature_size : int
        The encoder's C1 and F (:math:`D = F + 2`).
    embedding_dim, hidden_size, attn_size : int
        E, H of the LSTM, A of :math:`f_{att}`.
    dtype : numpy.float32 or numpy.float64
    rng : numpy.random.Generator or int seed
        The weights, then (a Generator spawned from it) the hard model's draws.
    """

    objective = "caption"

    def __init__(
        self,
        vocab_size: int,
        image_size: int = 24,
        attention: str = "soft",
        channels: int = 8,
        feature_size: int = 16,
        embedding_dim: int = 16,
        hidden_size: int = 64,
        attn_size: int = 32,
        dtype: Any = np.float32,
        rng: np.random.Generator | int | None = 0,
    ) -> None:
        self.vocab_size = V = check_int("vocab_size", vocab_size, min_value=4)
        self.image_size = check_int("image_size", image_size, min_value=8, max_value=96)
        self.attention = check_choice("attention", attention, ATTENTION)
        self.channels = check_int("channels", channels, min_value=1, max_value=256)
        self.feature_size = check_int("feature_size", feature_size, min_value=1, max_value=1024)
        self.embedding_dim = E = check_int("embedding_dim", embedding_dim, min_value=1)
        self.hidden_size = H = check_int("hidden_size", hidden_size, min_value=1)
        self.attn_size = A = check_int("attn_size", attn_size, min_value=1)
        self.dtype = dt = check_dtype("dtype", dtype)
        check_model_size(type(self), locals())  # before anything is built
        gen = as_generator(rng)
        self.encoder = ConvEncoder(self.image_size, self.channels, self.feature_size, dt, gen)
        D = self.encoder.annotation_size
        self.grid = self.encoder.grid  # (g_h, g_w)
        self.init_h = Linear(D, H, dtype=dt, rng=gen)
        self.init_c = Linear(D, H, dtype=dt, rng=gen)
        self.embed = Embedding(V, E, dtype=dt, rng=gen)
        self.out = Linear(H + D, V, dtype=dt, rng=gen)
        k = 1 / np.sqrt(H)
        self.lstm = {  # torch.nn.LSTMCell(E + D, H)'s names, gates i, f, g, o
            name: init.uniform(gen, -k, k, shape, dt, f"Captioner lstm.{name} {shape}")
            for name, shape in (
                ("weight_ih", (4 * H, E + D)),
                ("weight_hh", (4 * H, H)),
                ("bias_ih", (4 * H,)),
                ("bias_hh", (4 * H,)),
            )
        }
        self.attn: dict[str, np.ndarray] = {}
        if self.attention != "none":  # AdditiveAttention's names: W_a, U_a, b_a, w
            for name, shape, fan_in in (
                ("weight_key", (A, D), D),
                ("weight_query", (A, H), H),
                ("bias", (A,), H),
                ("v", (A,), A),
            ):
                b = 1 / np.sqrt(fan_in)
                self.attn[name] = init.uniform(gen, -b, b, shape, dt, f"Captioner attn.{name}")
        self.params: dict[str, np.ndarray] = {
            **self.encoder.params,
            **{f"init_h.{k}": v for k, v in self.init_h.params.items()},
            **{f"init_c.{k}": v for k, v in self.init_c.params.items()},
            "embed.weight": self.embed.params["weight"],
            **{f"attn.{k}": v for k, v in self.attn.items()},
            **{f"lstm.{k}": v for k, v in self.lstm.items()},
            **{f"out.{k}": v for k, v in self.out.params.items()},
        }
        self.generator = gen.spawn(1)[0]  # the hard model's draws

    @classmethod
    def estimate_parameters(cls, config: Mapping[str, Any]) -> int:
        """An upper estimate of the parameter count ``config`` describes (without building)."""
        V, C1 = config_int(config, "vocab_size", 4), config_int(config, "channels", 8)
        F, E = config_int(config, "feature_size", 16), config_int(config, "embedding_dim", 16)
        H, A = config_int(config, "hidden_size", 64), config_int(config, "attn_size", 32)
        D = F + COORDS
        conv = C1 * (27 + 1) + F * (C1 * 16 + 1)
        return (
            conv
            + 2 * H * (D + 1)
            + V * E
            + A * (D + H + 2)
            + 4 * H * (E + D + H + 2)
            + V * (H + D + 1)
        )

    # ------------------------------------------------------------------ one step
    def _attend(
        self,
        a: np.ndarray,
        Ka: Any,
        abar: np.ndarray,
        h: np.ndarray,
        given: np.ndarray | None = None,
        training: bool = False,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
        """``(z_t (B, D), alpha_t (B, L), u (B, L, A) or None, s_t (B,) or None)`` for the
        state ``h`` = :math:`h_{t-1}`. A hard model looks at the cells ``given`` (B,), else
        draws them (``training``) or takes the most likely."""
        B, L, _ = a.shape
        if self.attention == "none":
            return abar, np.full((B, L), 1.0 / L, dtype=a.dtype), None, None
        p = self.attn
        q = h @ p["weight_query"].T + p["bias"]  # (B, A) U_a h_{t-1} + b_a
        u = np.tanh(Ka + q[:, None, :])  # (B, L, A)
        alpha = softmax(u @ p["v"], axis=1)  # (B, L) softmax of e_t
        if self.attention == "soft":
            return np.einsum("bl,bld->bd", alpha, a), alpha, u, None  # (B, D)
        if given is not None:
            s = given  # (B,)
        else:
            s = sample(alpha, self.generator) if training else alpha.argmax(axis=1)  # (B,)
        return a[np.arange(B), s], alpha, u, s  # (B, D)

    def _start(self, images: Any) -> tuple[Any, ...]:
        """Annotations, their mean, W_a a_i and the initial state."""
        a, enc = self.encoder.forward(images)  # (B, L, D)
        abar = a.mean(axis=1)  # (B, D)
        pre_h, ch = self.init_h.forward(abar)  # (B, H)
        pre_c, cc = self.init_c.forward(abar)  # (B, H)
        Ka = a @ self.attn["weight_key"].T if self.attn else None  # (B, L, A)
        return a, enc, abar, Ka, np.tanh(pre_h), np.tanh(pre_c), (ch, cc)

    def _lstm(
        self, x: np.ndarray, h: np.ndarray, c: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, LSTMStep]:
        p = self.lstm
        return lstm_step(x, h, c, p["weight_ih"], p["weight_hh"], p["bias_ih"] + p["bias_hh"])

    # ------------------------------------------------------------------ teacher forcing
    def forward(
        self, images: Any, tgt_in: Any, *, index: Any = None, training: bool = True
    ) -> tuple[np.ndarray, np.ndarray, CaptionCache]:
        """Word scores (B, U, V) for the previous words ``tgt_in`` (B, U) (BOS first: teacher
        forcing), the attention weights alpha (B, U, L) and the cache. A hard model draws its
        cells from :attr:`generator` (``training=True``), takes the most likely ones
        (``training=False``), or the cells ``index`` (B, U) when given."""
        a, enc, abar, Ka, h, c, init_caches = self._start(images)
        B, L, _ = a.shape
        tokens = check_array("tgt_in", tgt_in, ndim=2, kind="i", layout="(B, U)")
        if tokens.shape[0] != B or tokens.shape[1] < 1:
            raise ValueError(f"tgt_in must have shape (B={B}, U >= 1), got {tokens.shape}")
        U = tokens.shape[1]
        chosen = None
        if index is not None and self.attention != "hard":
            raise ValueError(
                f"index (the cells to look at) is for attention='hard' only, "
                f"this model's attention is {self.attention!r}"
            )
        if index is not None:
            chosen = check_array("index", index, ndim=2, kind="i", layout="(B, U)")
            if chosen.shape != (B, U) or chosen.min() < 0 or chosen.max() >= L:
                raise ValueError(f"index must hold (B, U) = {(B, U)} cells in 0..{L - 1}")
        emb, emb_cache = self.embed.forward(tokens)  # (B, U, E)
        h0, c0 = h, c
        hs, us, steps, alphas, hz = [h], [], [], [], []
        picked: list[np.ndarray] = []
        for t in range(U):
            given = None if chosen is None else chosen[:, t]
            z, alpha, u, s = self._attend(a, Ka, abar, h, given, training)  # (B, D), (B, L)
            x = np.concatenate([emb[:, t], z], axis=1)  # (B, E + D)
            h, c, step = self._lstm(x, h, c)  # (B, H) each
            hs.append(h)
            us.append(u)
            steps.append(step)
            alphas.append(alpha)
            if s is not None:
                picked.append(s)  # (B,)
            hz.append(np.concatenate([h, z], axis=1))  # (B, H + D)
        logits, out_cache = self.out.forward(np.stack(hz, axis=1))  # (B, U, V)
        alpha_all = np.stack(alphas, axis=1)  # (B, U, L)
        idx = np.stack(picked, axis=1) if picked else None  # (B, U) the hard model's cells
        cache = CaptionCache(
            enc, a, h0, c0, init_caches, emb_cache, us, alpha_all, idx, steps,
            np.stack(hs, axis=1), out_cache,
        )  # fmt: skip
        return logits, alpha_all, cache

    def backward(
        self, dlogits: Any, cache: CaptionCache, losses: Any = None, baseline: float = 0.0
    ) -> Backward:
        """Gradients from d(loss)/d(scores) ``dlogits`` (B, U, V), BPTT step by step. A hard
        model also needs each caption's loss ``losses`` (B,), weighted like ``dlogits`` (the
        batch loss is their mean), for the score-function term; ``record["de"]`` (B, U, L)
        holds the gradient reaching the scores e."""
        c, E, H = cache, self.embedding_dim, self.hidden_size
        a, alpha = c.a, c.alpha
        B, U, L = alpha.shape
        dY = check_array("dlogits", dlogits, ndim=3, dtype=self.dtype, layout="(B, U, V)")
        if dY.shape != (B, U, self.vocab_size):
            raise ValueError(f"dlogits must have shape {(B, U, self.vocab_size)}, got {dY.shape}")
        adv = None
        if self.attention == "hard":
            adv = advantage(losses, baseline, B, self.dtype)  # (B,) (L_b - b) / B
        dHZ, g_out = self.out.backward(dY, c.out)  # (B, U, H + D)
        g = {f"out.{k}": v for k, v in g_out.items()}
        dA = np.empty((U, B, 4 * H), dtype=self.dtype)  # the LSTM's pre-activation gradients
        g_attn = {k: np.zeros_like(v) for k, v in self.attn.items()}
        da = np.zeros_like(a)  # (B, L, D)
        dKa = np.zeros((B, L, self.attn_size), dtype=self.dtype) if self.attn else None
        dabar = np.zeros_like(a[:, 0])  # (B, D)
        dE = np.empty((B, U, E), dtype=self.dtype)
        de_all = np.zeros((B, U, L), dtype=self.dtype)
        dh, dc = np.zeros((B, H), dtype=self.dtype), np.zeros((B, H), dtype=self.dtype)
        rows = np.arange(B)
        for t in reversed(range(U)):
            dA[t], dc = lstm_step_backward(dHZ[:, t, :H] + dh, dc, c.lstm[t])  # (B, 4H), (B, H)
            dx = dA[t] @ self.lstm["weight_ih"]  # (B, E + D)
            dh = dA[t] @ self.lstm["weight_hh"]  # (B, H) d/dh_{t-1}
            dE[:, t] = dx[:, :E]
            dz = dHZ[:, t, H:] + dx[:, E:]  # (B, D)
            al = alpha[:, t]  # (B, L)
            if self.attention == "none":
                dabar += dz
                continue
            if c.index is None:  # soft: through alpha
                da += al[:, :, None] * dz[:, None, :]
                dalpha = np.einsum("bld,bd->bl", a, dz)  # (B, L)
                de = al * (dalpha - (al * dalpha).sum(axis=1, keepdims=True))  # (B, L)
            else:  # hard: z = a_{s_t}; (L_b - b)/B d log alpha_{t, s_t} / d e_t
                np.add.at(da, (rows, c.index[:, t]), dz)
                assert adv is not None
                de = logit_grad(al, c.index[:, t], adv)  # (B, L)
            de_all[:, t] = de
            u = c.u[t]
            assert u is not None and dKa is not None
            du = de[:, :, None] * self.attn["v"] * (1 - u * u)  # (B, L, A)
            g_attn["v"] += np.einsum("bl,bla->a", de, u)
            dKa += du
            dq = du.sum(axis=1)  # (B, A)
            g_attn["weight_query"] += dq.T @ c.hs[:, t]  # (A, H)
            g_attn["bias"] += dq.sum(axis=0)
            dh = dh + dq @ self.attn["weight_query"]  # (B, H) h_{t-1} is also the query
        dx_h, g_h = self.init_h.backward(dh * (1 - c.h0**2), c.init[0])  # (B, D)
        dx_c, g_c = self.init_c.backward(dc * (1 - c.c0**2), c.init[1])  # (B, D)
        da += (dabar + dx_h + dx_c)[:, None, :] / L  # abar = mean of a_i
        if dKa is not None:
            g_attn["weight_key"] = np.einsum("bla,bld->ad", dKa, a)  # (A, D)
            da += dKa @ self.attn["weight_key"]  # (B, L, D)
        g.update({f"init_h.{k}": v for k, v in g_h.items()})
        g.update({f"init_c.{k}": v for k, v in g_c.items()})
        g["embed.weight"] = self.embed.backward(dE, c.emb)[1]["weight"]
        g.update({f"attn.{k}": v for k, v in g_attn.items()})
        X = np.stack([step.u for step in c.lstm])  # (U, B, E + D)
        g["lstm.weight_ih"] = np.einsum("tbg,tbf->gf", dA, X)  # (4H, E + D)
        g["lstm.weight_hh"] = np.einsum("tbg,bth->gh", dA, c.hs[:, :-1])  # (4H, H)
        g["lstm.bias_ih"] = g["lstm.bias_hh"] = dA.sum(axis=(0, 1))  # (4H,) one sum, two names
        g.update(self.encoder.backward(da, c.enc))
        grads = {name: np.asarray(g[name], dtype=self.dtype) for name in self.params}
        return Backward(grads, record={"de": de_all})

    # ------------------------------------------------------------------ decoding
    def greedy(self, images: Any, max_len: int = 16) -> tuple[np.ndarray, np.ndarray]:
        """Greedy captions: ids (B, T) (each row up to its EOS, PAD after it) and the
        attention weights alpha (B, T, L) that wrote them (zero after EOS); a hard model
        looks at its most likely cell."""
        T = check_int("max_len", max_len, min_value=1, max_value=1000)
        a, _, abar, Ka, h, c, _ = self._start(images)
        B, L, _ = a.shape
        ids = np.full((B, T), PAD, dtype=np.int64)
        alphas = np.zeros((B, T, L), dtype=self.dtype)
        prev = np.full(B, BOS, dtype=np.int64)  # (B,)
        done = np.zeros(B, dtype=bool)
        for t in range(T):
            z, alpha, _, _ = self._attend(a, Ka, abar, h)  # (B, D), (B, L)
            x = np.concatenate([self.embed.params["weight"][prev], z], axis=1)  # (B, E + D)
            h, c, _ = self._lstm(x, h, c)
            scores, _ = self.out.forward(np.concatenate([h, z], axis=1))  # (B, V)
            prev = scores.argmax(axis=1)  # (B,)
            ids[~done, t] = prev[~done]
            alphas[~done, t] = alpha[~done]
            done |= prev == EOS
            if done.all():
                break
        return ids, alphas

    def attention_maps(self, images: Any, max_len: int = 16) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per image, the greedy caption's ids (T_out,) up to and with its EOS and the attention
        map of each word, alpha (T_out, g_h, g_w): where the model looked as it wrote it (for
        ``attention="none"`` the uniform 1/L)."""
        ids, alphas = self.greedy(images, max_len)
        result = []
        for b in range(ids.shape[0]):
            ends = np.flatnonzero(ids[b] == EOS)
            n = int(ends[0]) + 1 if ends.size else int((ids[b] != PAD).sum())
            result.append((ids[b, :n], alphas[b, :n].reshape(n, *self.grid)))
        return result
