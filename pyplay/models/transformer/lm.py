r"""A decoder-only transformer over sequences: a tiny GPT, and a drop-in for the recurrent
:class:`~pyplay.models.SequenceModel` on every per-step task.

.. math::

    e_t = \sqrt{D}\, E[x_t] \;\text{(tokens) or}\; e_t = W_{in} x_t + b_{in} \;\text{(real)},
    \qquad u^0_t = e_t + P_t, \\
    u^{l} = \mathrm{Block}_l(u^{l-1}) \;\; (l = 1..L), \qquad
    y_t = W_o\, \mathrm{LN}(u^L_t) + b_o ,

where each block is a :class:`~pyplay.nn.TransformerEncoderLayer` (pre-norm by default, as
GPT-2) whose self-attention is causal (position :math:`t` sees :math:`1..t`, so the output at
:math:`t` may be trained against the target at :math:`t`), :math:`P` the positional encoding
(:mod:`pyplay.nn.positional`; with ``"concat"`` the code is joined, :math:`u^0_t = [e_t;
P_t]`, and :math:`e_t` is ``d_model - d_pos`` wide) and the final layer norm present with
pre-norm blocks. With ``tie_weights`` the head reuses the token table,
:math:`W_o = E` (Press and Wolf 2017); the table starts N(0, 1/D) and is scaled by
:math:`\sqrt D` on the way in (Vaswani et al. 2017), so both uses start at unit scale.

Parameters take torch's names: ``embedding.weight`` (or ``input.weight``/``input.bias``),
``pos.weight`` (learned positions), ``encoder.layers.0.self_attn.in_proj_weight``, ...,
``encoder.norm.weight``, ``head.weight`` (absent when tied), ``head.bias``.

``forward`` follows :class:`~pyplay.models.SequenceModel`: with no ``state`` in training it
runs the whole sequence and returns a cache for ``backward``; with a ``state`` (or
``training=False``) it decodes incrementally with a key/value cache
(:meth:`pyplay.nn.TransformerEncoder.step`) and returns the new state, so
:func:`pyplay.sampling.sample` and the decoding searches drive it unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay._checks import as_generator, check_array, check_choice, check_int
from pyplay.decode.step import RowsState
from pyplay.models.contract import (
    Backward,
    PerStepBase,
    blocks,
    check_model_size,
    config_int,
    gather_params,
)
from pyplay.nn.embedding import Embedding
from pyplay.nn.linear import Linear
from pyplay.nn.positional import POSITIONAL, input_width, make_positional
from pyplay.nn.transformer import TransformerEncoder, TransformerState

__all__ = ["LMState", "TransformerModel", "TransformerModelCache"]


@dataclass(frozen=True)
class TransformerModelCache:
    """What :meth:`TransformerModel.backward` needs; ``record()`` gives every layer's per-head
    attention weights (B, h, T, T) and residual-stream norms."""

    inputs: Any  # the embedding's or the input layer's cache
    pos: Any
    encoder: Any
    head_in: np.ndarray  # (B, T, D) what the head read

    def record(self) -> dict[str, np.ndarray]:
        return dict(self.encoder.record())


@dataclass(frozen=True)
class LMState(RowsState):
    """Incremental decoding: the stack's key/value caches (their length is the position of
    the next input)."""

    stack: TransformerState

    @property
    def length(self) -> int:
        return self.stack.length


class TransformerModel(PerStepBase):
    """Causal transformer: embedding (or a linear input layer) + positions -> blocks -> head.

    Parameters
    ----------
    input_size, output_size : int
        Vocabulary size (tokens) or features (real inputs); outputs per step.
    input_kind : {"tokens", "real"}
    d_model, nhead, num_layers, dim_feedforward : int
        Width, heads (dividing ``d_model``), blocks, feed-forward width (default 4 d_model).
    positional : one of :data:`~pyplay.nn.positional.POSITIONAL`
        With ``"concat"`` the embedding (or input layer) is ``d_model - d_pos`` wide and the
        position code fills the last ``d_pos`` components (:mod:`pyplay.nn.positional`).
    max_len : int
        Longest sequence (positions) the model reads.
    causal : bool
        Mask future positions (False lets every step see the whole sequence, which per-step
        targets then leak through: the lesson's "what breaks" switch).
    norm_first : bool
        Pre-norm blocks plus a final layer norm (GPT-2), or post-norm (Vaswani).
    activation : {"gelu", "relu"}
    tie_weights : bool
        The head reuses the token embedding (tokens in and out, same size).
    dropout : float
    dtype, rng : as everywhere in pyplay.
    value_function : {"linear", "identity"}
        The blocks' self-attention value function: torch's :math:`V = X W_v^\\top + b_v`, or
        none, :math:`V = X` (Solberg's TEK5040 lecture: the output is a weighted sum of the
        inputs themselves; :class:`~pyplay.nn.multihead.MultiheadAttention`).
    """

    def __init__(
        self,
        input_size: int,
        output_size: int,
        input_kind: str = "tokens",
        d_model: int = 32,
        nhead: int = 4,
        num_layers: int = 2,
        dim_feedforward: int | None = None,
        positional: str = "sinusoidal",
        max_len: int = 256,
        causal: bool = True,
        norm_first: bool = True,
        activation: str = "gelu",
        tie_weights: bool = False,
        dropout: float = 0.0,
        dtype: Any = np.float32,
        rng: np.random.Generator | int | None = 0,
        value_function: str = "linear",
    ) -> None:
        self._set_io(input_size, output_size, input_kind, dtype)
        D = self.d_model = check_int("d_model", d_model, min_value=1)
        F = check_int("dim_feedforward", 4 * D if dim_feedforward is None else dim_feedforward)
        self.positional = check_choice("positional", positional, POSITIONAL)
        for name, flag in (("causal", causal), ("norm_first", norm_first), ("tie", tie_weights)):
            if not isinstance(flag, bool):
                raise TypeError(f"{name} must be True or False, got {flag!r}")
        if tie_weights and (self.input_kind != "tokens" or self.input_size != self.output_size):
            raise ValueError(
                "tie_weights needs token inputs and as many outputs as tokens "
                f"(input_size == output_size), got {self.input_kind} inputs of size "
                f"{self.input_size} and {self.output_size} outputs"
            )
        self.causal, self.norm_first, self.tie_weights = causal, norm_first, tie_weights
        check_model_size(type(self), locals())  # before anything is built
        if tie_weights and self.positional == "concat":
            raise ValueError(
                "tie_weights needs the embedding as wide as the model, which a concatenated "
                "position code narrows (positional='concat'); untie or add the positions"
            )
        gen = as_generator(rng)
        self.embedding: Embedding | None = None
        self.input: Linear | None = None
        E = input_width(self.positional, D)  # D, or D - d_pos with a concatenated code
        if self.input_kind == "tokens":
            self.embedding = Embedding(self.input_size, E, dtype=self.dtype, rng=gen)
            self.embedding.params["weight"] *= self.dtype.type(D**-0.5)  # N(0, 1/D)
        else:
            self.input = Linear(self.input_size, E, dtype=self.dtype, rng=gen)
        self.pos = make_positional(self.positional, max_len, D, self.dtype, gen)
        self.max_len = self.pos.max_len
        self.encoder = TransformerEncoder(
            D, nhead, num_layers, F, dropout, activation, norm_first=norm_first,
            norm=norm_first, dtype=self.dtype, rng=gen, value_function=value_function,
        )  # fmt: skip
        self.value_function = self.encoder.value_function
        self.nhead, self.num_layers = nhead, num_layers
        self.dim_feedforward, self.activation, self.dropout = F, activation, float(dropout)
        self.head = Linear(D, self.output_size, dtype=self.dtype, rng=gen)
        if tie_weights:
            del self.head.params["weight"]
        self.params: dict[str, np.ndarray] = gather_params(self._layers())

    def _layers(self) -> list[tuple[str, Any]]:
        first = (
            ("embedding", self.embedding) if self.embedding is not None else ("input", self.input)
        )
        return [first, ("pos", self.pos), ("encoder", self.encoder), ("head", self.head)]

    @classmethod
    def estimate_parameters(cls, config: Mapping[str, Any]) -> int:
        """An upper estimate of the parameter count ``config`` describes (without building)."""
        D, n_in = config_int(config, "d_model", 32), config_int(config, "input_size", 1)
        F, L = config_int(config, "dim_feedforward", 4 * D), config_int(config, "num_layers", 2)
        pos = config_int(config, "max_len", 256) * D if config.get("positional") == "learned" else 0
        out = config_int(config, "output_size", 1)
        return (n_in + 1) * D + pos + blocks(D, F, L, 1) + 2 * D + (D + 1) * out

    # ------------------------------------------------------------------ maths
    def _embed(self, inputs: Any) -> tuple[np.ndarray, Any]:
        if self.embedding is not None:
            ids = check_array("inputs", inputs, ndim=2, kind="i", layout="(B, T) token ids")
            x, cache = self.embedding.forward(ids)  # (B, T, D)
            return x * self.dtype.type(np.sqrt(self.d_model)), cache
        assert self.input is not None
        X = check_array("inputs", inputs, ndim=3, dtype=self.dtype, layout="(B, T, F)")
        return self.input.forward(X)  # (B, T, D)

    def _head(self, u: np.ndarray) -> np.ndarray:
        W = self.params["embedding.weight"] if self.tie_weights else self.head.params["weight"]
        return u @ W.T + self.head.params["bias"]  # (B, T, O)

    def forward(
        self,
        inputs: Any,
        state: LMState | None = None,
        lengths: Any = None,
        *,
        record: bool = False,
        training: bool = True,
    ) -> tuple[np.ndarray, LMState | None, TransformerModelCache | None]:
        """Outputs (B, T, output_size), the decoding state and the cache.

        Whole sequence (``state`` None, ``training`` True): ``(y, None, cache)``; padded steps
        past ``lengths`` are masked as keys when not causal (causal steps never see later
        ones). Incremental (a ``state``, or ``training=False``; causal only): ``(y, new state,
        None)``, the rows continuing the sequence the state has read. ``record`` is accepted
        for the recurrent models' signature; the cache always records.
        """
        if state is not None or (not training and self.causal):
            return self._step(inputs, state)
        x, in_cache = self._embed(inputs)  # (B, T, D)
        u, pos_cache = self.pos.forward(x)  # (B, T, D)
        kpm = None
        if lengths is not None and not self.causal:
            kpm = (
                np.arange(u.shape[1])[None, :] >= np.asarray(lengths)[:, None]
            )  # (B, T) True = pad
        h, enc_cache = self.encoder.forward(
            u, src_key_padding_mask=kpm, is_causal=self.causal, training=training
        )  # (B, T, D)
        return self._head(h), None, TransformerModelCache(in_cache, pos_cache, enc_cache, h)

    def _step(self, inputs: Any, state: LMState | None) -> tuple[np.ndarray, LMState, None]:
        if not self.causal:
            raise ValueError("incremental decoding (a state) needs causal=True")
        if state is not None and not isinstance(state, LMState):
            raise TypeError(f"state must be an LMState, got {type(state).__name__}")
        stack = self.encoder.init_state() if state is None else state.stack
        x, _ = self._embed(inputs)  # (B, n, D)
        u, _ = self.pos.forward(x, offset=stack.length)  # (B, n, D)
        h, stack, _ = self.encoder.step(u, stack)  # (B, n, D)
        return self._head(h), LMState(stack), None

    def backward(
        self, dy: np.ndarray, cache: TransformerModelCache | None, dstate: Any = None
    ) -> Backward:
        """Gradients of every parameter (keys of :attr:`params`) from d(loss)/d(outputs)."""
        if not isinstance(cache, TransformerModelCache):
            raise TypeError(
                "cache must come from forward(..., training=True) without a state, got "
                f"{type(cache).__name__}"
            )
        dY = check_array("dy", dy, ndim=3, dtype=self.dtype, layout="(B, T, O)")
        h = cache.head_in
        grads: dict[str, np.ndarray] = {
            "head.bias": dY.sum(axis=(0, 1)),  # (O,)
        }
        dW = np.einsum("bto,btd->od", dY, h)  # (O, D)
        W = self.params["embedding.weight"] if self.tie_weights else self.head.params["weight"]
        dh = dY @ W  # (B, T, D)
        du, g = self.encoder.backward(dh, cache.encoder)  # (B, T, D)
        grads.update({f"encoder.{k}": v for k, v in g.items()})
        dx, g = self.pos.backward(du, cache.pos)  # (B, T, D)
        grads.update({f"pos.{k}": v for k, v in g.items()})
        if self.embedding is not None:
            dx = dx * self.dtype.type(np.sqrt(self.d_model))
            _, g = self.embedding.backward(dx, cache.inputs)
            grads["embedding.weight"] = g["weight"]
        elif self.input is not None:
            _, g = self.input.backward(dx, cache.inputs)
            grads.update({f"input.{k}": v for k, v in g.items()})
        if self.tie_weights:
            grads["embedding.weight"] = grads["embedding.weight"] + dW
        else:
            grads["head.weight"] = dW
        return Backward({name: grads[name] for name in self.params})
