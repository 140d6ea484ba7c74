r"""The Google Neural Machine Translation encoder-decoder (GNMT, Wu et al. 2016), the form of
Solberg's lecture: :class:`~pyplay.models.seq2seq.encoder_decoder.EncoderDecoder` with
``encoder="gnmt"``.

The lecture's slide says four things: encoder and decoder are RNNs; the **bottom encoder layer
is bidirectional**, the decoder uses attention; **plenty of residual connections** in both
encoder and decoder. It leaves the details to the paper's figure, so they follow Wu et al.
2016 (section 3 and Figure 1). With layers numbered from 1 at the bottom, :math:`m^l_t` the
output of layer :math:`l`'s recurrent cell and :math:`x^l_t` what the layer hands upwards
(Wu et al., section 3.1):

.. math::

    x^l_t = m^l_t + x^{l-1}_t \ \text{for}\ l \ge 3, \qquad x^l_t = m^l_t \ \text{below},

residual connections starting from the third layer from the bottom (:data:`RESIDUAL_FROM`).

Encoder (``num_layers`` L >= 2)
    Layer 1 reads the embedded source both ways, :math:`m^1_t = [\overrightarrow{m}^1_t;
    \overleftarrow{m}^1_t]` (width 2H); layers 2 .. L read one way (one
    :class:`~pyplay.nn.recurrent.Recurrent` stack with ``residual=True``: its first layer,
    layer 2, turns 2H into H, and from its second, layer 3, every layer adds its input). The
    decoder attends over the top, :math:`x^L_j` (width H).
Decoder (L layers)
    Layer 1 reads the previous target token only, :math:`m^1_i = f(E y_{i-1}, m^1_{i-1})`;
    its output asks the attention (Wu's Figure 1: the bottom decoder layer's output obtains
    the attention context, which goes to all the remaining layers) and is layer 2's input.
    The attention of Wu et al.'s section 3, with :math:`y_{i-1}` there the bottom layer's
    output of the previous step and :math:`\mu_j` the mask of real source positions:

    .. math::

        e_{ij} = \mathrm{score}(m^1_{i-1}, x^L_j), \quad
        \alpha_{ij} = \frac{\mu_j \exp e_{ij}}{\sum_k \mu_k \exp e_{ik}}, \quad
        a_i = \sum_j \alpha_{ij} x^L_j,

    then every layer above reads the context beside its input,
    :math:`m^l_i = f([x^{l-1}_i; a_i], m^l_{i-1})` for :math:`l = 2 .. L` (the residual adds
    :math:`x^{l-1}_i`, not the context), and the head reads the top,
    :math:`p(y_i) = \mathrm{softmax}(W_o x^L_i + b_o)`. Wu's AttentionFunction is "a feed
    forward network with one hidden layer", the additive score; any score of
    :mod:`~pyplay.models.seq2seq.luong` may be chosen.

Where this departs from the paper (which does not say): each decoder layer starts from the
encoder layer's final state of the same height, as the other wirings do, the bottom layer's
two directions joined by a :class:`~pyplay.models.seq2seq.bridge.Bridge`. ``wiring`` says when
the bottom layer's output asks: ``"bahdanau"`` its output of the previous step, as Wu et al.
write it (the attention comes before the step, as Bahdanau's); ``"attention"`` its output of
this step (after the step, as Luong's; TensorFlow's NMT tutorial calls that GNMT v2). No
dropout, no length normalisation in the beam.

Every query depends on the bottom layer alone, so with teacher forcing the bottom layer runs
over all steps, then the attention over all steps at once, then each layer above: no
step-by-step loop while training.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay._checks import check_choice
from pyplay.models.contract import gather_params
from pyplay.models.seq2seq.bridge import Bridge, BridgeCache

__all__ = [
    "ENCODERS",
    "RESIDUAL_FROM",
    "GNMTCache",
    "GNMTDecoder",
    "GNMTEncoder",
    "check_gnmt",
    "structure",
]

ENCODERS = ("stack", "gnmt")  # EncoderDecoder(encoder=...): the plain stack or GNMT's
RESIDUAL_FROM = 3  # the first layer (from 1 at the bottom) that adds its input: Wu et al. 2016
QUERIES = {"bahdanau": "previous", "attention": "current"}  # the wiring -> the query's step


def check_gnmt(
    encoder: Any, wiring: str, num_layers: int, bidirectional_encoder: bool, share_rnn: bool
) -> str:
    """``encoder`` checked (one of :data:`ENCODERS`) with the settings GNMT needs."""
    encoder = check_choice("encoder", encoder, ENCODERS)
    if encoder == "stack":
        return encoder
    if wiring not in QUERIES:
        raise ValueError(
            "encoder='gnmt' attends from its bottom decoder layer: wiring must be 'bahdanau' "
            "(that layer's previous output asks, Wu et al. 2016) or 'attention' (its output "
            f"at this step), got wiring={wiring!r}"
        )
    if num_layers < 2:
        raise ValueError(
            "encoder='gnmt' needs num_layers >= 2: a bidirectional bottom layer and one-way "
            f"layers above it, which read the attention context; got num_layers={num_layers}"
        )
    for name, flag, why in (
        ("bidirectional_encoder", bidirectional_encoder, "its bottom layer only is bidirectional"),
        ("share_rnn", share_rnn, "encoder and decoder have stacks of their own"),
    ):
        if flag:
            raise ValueError(f"encoder='gnmt': {why}, so leave {name} False; got {name}=True")
    return encoder


def structure(num_layers: int) -> str:
    """What a GNMT of ``num_layers`` layers is, in words (the lesson's built message)."""
    L = num_layers
    above = f"{L - 1} unidirectional layer{'s' if L > 2 else ''}"
    residual = (
        f"residual from layer {RESIDUAL_FROM}"
        if L >= RESIDUAL_FROM
        else f"no residual yet (it starts at layer {RESIDUAL_FROM})"
    )
    return (
        f"GNMT: encoder with a bidirectional bottom layer, {above}, {residual}; decoder of "
        f"{L} layers, the bottom one queries the attention, its context enters layers 2-{L}"
    )


def _rows(state: Any, start: int, stop: int) -> Any:
    """Layers ``start:stop`` of a state h (L, B, H) or (h, c)."""
    if isinstance(state, tuple):
        return tuple(part[start:stop] for part in state)
    return state[start:stop]


def _join(states: list[Any]) -> Any:
    """Per-layer states, (l, B, H) or (h, c) each, stacked along the layers."""
    if isinstance(states[0], tuple):
        return tuple(np.concatenate(parts, axis=0) for parts in zip(*states, strict=True))
    return np.concatenate(states, axis=0)  # (L, B, H)


# ------------------------------------------------------------------ encoder
@dataclass(frozen=True)
class GNMTEncoderCache:
    """The bottom layer's, the stack's and the bridge's caches; ``record`` the states of every
    layer under a single stack's keys (``"l0"``, ``"l0_reverse"``, ``"l1"``, ...) or None."""

    bottom: Any
    upper: Any
    bridge: BridgeCache
    record: dict[str, dict[str, np.ndarray]] | None


class GNMTEncoder:
    """GNMT's encoder (see the module docstring): parameters ``bottom.*`` (layer 1, both
    directions), ``upper.*`` (``upper.weight_ih_l0`` is layer 2, ``_l1`` layer 3, ...) and
    ``bridge.*`` (the bottom layer's final states into the decoder's bottom layer)."""

    num_directions = 1  # the states it hands on, the top layer's, are one-way (width H)

    def __init__(
        self, rnn: Any, input_size: int, hidden_size: int, num_layers: int, dtype: Any, rng: Any
    ) -> None:
        H = hidden_size
        self.bottom = rnn(input_size, H, bidirectional=True, dtype=dtype, rng=rng)
        self.upper = rnn(2 * H, H, num_layers - 1, dtype=dtype, rng=rng, residual=True)
        self.bridge = Bridge(H, self.bottom.cell.has_cell, dtype, rng)
        self.params = gather_params(self.layers())

    def layers(self) -> list[tuple[str, Any]]:
        bridge = [(f"bridge.{name}", part) for name, part in self.bridge.layers()]
        return [("bottom", self.bottom), ("upper", self.upper), *bridge]

    def forward(
        self, x: Any, lengths: Any = None, record: bool = False
    ) -> tuple[np.ndarray, Any, GNMTEncoderCache]:
        """``(x^L (B, S, H), the decoder's initial state (L, B, H) or (h, c), cache)`` for
        embedded ``x`` (B, S, E) or a :class:`~pyplay.nn.token_input.TokenInput`."""
        out1, state1, c1 = self.bottom.forward(x, lengths=lengths, record=record)  # (B, S, 2H)
        out, state2, c2 = self.upper.forward(out1, lengths=lengths, record=record)  # (B, S, H)
        h1, k1 = state1 if isinstance(state1, tuple) else (state1, None)  # (2, B, H)
        h0, k0, bridge = self.bridge.forward(h1, k1)  # (1, B, H) each
        state = _join([(h0, k0) if k0 is not None else h0, state2])  # (L, B, H)
        rec = None
        if record:
            above = {f"l{int(k[1:]) + 1}": v for k, v in c2.record.items()}  # layers 2 .. L
            rec = {**c1.record, **above}
        return out, state, GNMTEncoderCache(c1, c2, bridge, rec)

    def backward(
        self, dout: np.ndarray, dstate: Any, cache: GNMTEncoderCache
    ) -> tuple[Any, None, dict[str, np.ndarray]]:
        """``(dx, None, grads)`` from d(loss)/d(x^L) (B, S, H) and d(loss)/d(the initial
        state it handed on); ``dx`` as the bottom layer's backward gives it."""
        dh, dc = dstate if isinstance(dstate, tuple) else (dstate, None)  # (L, B, H)
        above = (dh[1:], dc[1:]) if dc is not None else dh[1:]
        dx1, _, g2 = self.upper.backward(dout, above, cache.upper)  # (B, S, 2H)
        dh1, dc1, gb = self.bridge.backward(dh[:1], None if dc is None else dc[:1], cache.bridge)
        bottom = (dh1, dc1) if dc1 is not None else dh1  # (2, B, H)
        dx, _, g1 = self.bottom.backward(dx1, bottom, cache.bottom)  # (B, S, E) or (V, E)
        grads = {f"bottom.{k}": v for k, v in g1.items()}
        grads.update({f"upper.{k}": v for k, v in g2.items()})
        grads.update({f"bridge.{k}": v for k, v in gb.items()})
        return dx, None, {name: grads[name] for name in self.params}


# ------------------------------------------------------------------ decoder
@dataclass(frozen=True)
class GNMTCache:
    """The bottom layer's cache, each layer's above it (layer 2 first) and the scorer's."""

    bottom: Any
    layers: list[Any]
    attn: Any


class GNMTDecoder:
    """GNMT's decoder (see the module docstring) with the protocol of
    :class:`~pyplay.models.seq2seq.bahdanau.BahdanauDecoder` (``forward``, ``backward``,
    ``step`` and ``scorer``). Parameters ``bottom.*`` (layer 1, input E) and ``layer{l}.*``
    for l = 2 .. L (input H + K); the ``scorer`` (query size H, key size K), set by its owner,
    keeps its own."""

    def __init__(
        self,
        rnn: Any,
        input_size: int,
        hidden_size: int,
        key_size: int,
        num_layers: int,
        query: str,
        dtype: Any,
        rng: Any,
    ) -> None:
        H, K = hidden_size, key_size
        self.input_size, self.hidden_size, self.key_size = input_size, H, K
        self.query = check_choice("query", query, tuple(QUERIES.values()))
        self.bottom = rnn(input_size, H, dtype=dtype, rng=rng)
        self.upper = [rnn(H + K, H, dtype=dtype, rng=rng) for _ in range(num_layers - 1)]
        self.scorer: Any = None
        self.params = gather_params(self.layers())

    def layers(self) -> list[tuple[str, Any]]:
        return [("bottom", self.bottom)] + [
            (f"layer{l}", layer) for l, layer in enumerate(self.upper, start=2)
        ]

    def _queries(self, m1: np.ndarray, state0: Any) -> np.ndarray:
        """The bottom layer's outputs that ask, (B, U, H): this step's or the previous one's
        (:math:`m^1_0` the initial state)."""
        if self.query == "current":
            return m1
        h0 = state0[0] if isinstance(state0, tuple) else state0  # (L, B, H)
        return np.concatenate([h0[0][:, None], m1[:, :-1]], axis=1)  # (B, U, H)

    def forward(
        self, x: np.ndarray, state0: Any, enc_out: np.ndarray, mask: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, GNMTCache]:
        """Teacher-forced top outputs :math:`x^L` (B, U, H) for embeddings ``x`` (B, U, E), the
        attention weights (B, U, S) and the cache. Steps after a target's end are computed and
        never read (the decoder is causal), so target lengths are not needed."""
        m1, _, c1 = self.bottom.forward(x, state=_rows(state0, 0, 1))  # (B, U, H)
        context, weights, attn = self.scorer.forward(
            self._queries(m1, state0), enc_out, enc_out, mask=mask
        )  # (B, U, K)
        z, caches = m1, []
        for l, layer in enumerate(self.upper, start=2):
            zc = np.concatenate([z, context], axis=2)  # (B, U, H + K)
            m, _, c = layer.forward(zc, state=_rows(state0, l - 1, l))  # (B, U, H)
            z = m + z if l >= RESIDUAL_FROM else m
            caches.append(c)
        return z, weights, GNMTCache(c1, caches, attn)

    def backward(
        self, dz: np.ndarray, cache: GNMTCache
    ) -> tuple[Any, Any, np.ndarray, dict[str, np.ndarray], dict[str, np.ndarray]]:
        """From d(loss)/d(x^L) (B, U, H): ``(dx (B, U, E), dstate0, denc_out (B, S, K), rnn
        grads, scorer grads)``."""
        H = self.hidden_size
        dcontext = np.zeros((*dz.shape[:2], self.key_size), dtype=dz.dtype)  # (B, U, K)
        grads: dict[str, np.ndarray] = {}
        dstates: list[Any] = [None] * (len(self.upper) + 1)
        for l in reversed(range(2, len(self.upper) + 2)):
            dzc, dstates[l - 1], g = self.upper[l - 2].backward(dz, None, cache.layers[l - 2])
            dcontext += dzc[:, :, H:]  # the context entered every layer above the bottom
            dz = dzc[:, :, :H] + dz if l >= RESIDUAL_FROM else dzc[:, :, :H]  # (B, U, H)
            grads.update({f"layer{l}.{k}": v for k, v in g.items()})
        dq, dk, dv, score_grads = self.scorer.backward(dcontext, cache.attn)  # dq (B, U, H)
        dm1 = np.array(dz)  # (B, U, H) a fresh copy
        if self.query == "current":
            dm1 += dq
        else:
            dm1[:, :-1] += dq[:, 1:]  # step i's query is the bottom output of step i - 1
        dx, dstate1, g = self.bottom.backward(dm1, None, cache.bottom)  # (B, U, E)
        grads.update({f"bottom.{k}": v for k, v in g.items()})
        if self.query == "previous":  # the first query is the initial state
            dh1, dc1 = dstate1 if isinstance(dstate1, tuple) else (dstate1, None)  # (1, B, H)
            dh1 = dh1 + dq[None, :, 0]
            dstate1 = (dh1, dc1) if dc1 is not None else dh1
        dstates[0] = dstate1
        rnn_grads = {name: grads[name] for name in self.params}
        return dx, _join(dstates), dk + dv, rnn_grads, score_grads

    def step(
        self, x_t: np.ndarray, state: Any, enc_out: np.ndarray, mask: np.ndarray
    ) -> tuple[np.ndarray, Any, np.ndarray, None]:
        """One step for embeddings ``x_t`` (N, 1, E): ``(x^L (N, 1, H), state, weights (N, S),
        None)``."""
        if self.query == "previous":
            h = state[0] if isinstance(state, tuple) else state  # (L, N, H)
            context, a, _ = self.scorer.forward(h[0][:, None], enc_out, enc_out, mask=mask)
        m1, state1, _ = self.bottom.forward(x_t, state=_rows(state, 0, 1), training=False)
        if self.query == "current":
            context, a, _ = self.scorer.forward(m1, enc_out, enc_out, mask=mask)  # (N, 1, K)
        z, states = m1, [state1]
        for l, layer in enumerate(self.upper, start=2):
            zc = np.concatenate([z, context], axis=2)  # (N, 1, H + K)
            m, state_l, _ = layer.forward(zc, state=_rows(state, l - 1, l), training=False)
            z = m + z if l >= RESIDUAL_FROM else m
            states.append(state_l)
        return z, _join(states), a[:, 0], None
