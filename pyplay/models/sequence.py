"""Sequence models composed from pyplay layers: input layer -> recurrent stack -> linear head.

A :class:`SequenceModel` is what the training loop, the command line, the benchmark and the
playground train. It is plain composition: an optional ``Embedding`` (token inputs), one of
``RNN`` / ``LSTM`` / ``GRU``, and a ``Linear`` head applied at every time step,

.. math::

    e_t = E[x_t] \\;\\text{(tokens) or}\\; e_t = x_t \\;\\text{(real inputs)}, \\qquad
    h_t = \\mathrm{cell}(e_t, h_{t-1}), \\qquad
    y_t = W_{hy} h_t + b_y .

With ``feedforward_layers`` :math:`K > 0` the recurrent stack reads :math:`a^K_t` instead of
:math:`e_t`, :math:`K` tanh layers of ``hidden_size`` units applied at every step
(:class:`~pyplay.nn.feedforward.FeedForwardStack`): Wand's IDSIA lecture's typical setup, input ->
feed-forward stack -> recurrent layers -> feed-forward output.

With ``delay`` :math:`D > 0` (a one-way net only) the output for step :math:`t` is read
:math:`D` steps later, :math:`y_t = W_{hy} h_{t+D} + b_y`, the input padded with :math:`D` zero
frames at the end: Solberg's TEK5040 lecture's "time-delay for predictions", the alternative to a
bidirectional net that sees a fixed context of :math:`D` future frames.

Parameter names are those of the equivalent PyTorch module with attributes ``embedding``,
``feedforward`` (an ``nn.Sequential`` of ``Linear`` and ``Tanh``), ``rnn`` and ``head``
(``"embedding.weight"``, ``"feedforward.0.weight"``, ``"rnn.weight_ih_l0"``, ``"head.weight"``,
...),
so a ``state_dict`` exported from PyTorch as arrays loads by name. The merged ``params`` dict
holds the very arrays of the sub-layers: an optimiser updating it in place updates the layers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay._checks import (
    as_generator,
    check_choice,
    check_float,
    check_int,
)
from pyplay.models.contract import (
    Backward,
    PerStepBase,
    check_model_size,
    config_int,
    gather_params,
    recurrent,
)
from pyplay.nn.cell import check_flag
from pyplay.nn.embedding import Embedding
from pyplay.nn.feedforward import MAX_FEEDFORWARD_LAYERS, FeedForwardStack
from pyplay.nn.gru import GRU
from pyplay.nn.linear import Linear
from pyplay.nn.lstm import LSTM
from pyplay.nn.rnn import RNN

__all__ = ["CELLS", "MAX_DELAY", "ModelCache", "SequenceModel"]

CELLS = ("rnn", "lstm", "gru")
MAX_DELAY = 64  # future steps a time-delay net may wait for


@dataclass(frozen=True)
class ModelCache:
    """What :meth:`SequenceModel.backward` needs from a forward pass, plus the recordings."""

    embedding: Any  # the embedding's cache (its TokenInput when the stack read the table)
    rnn: Any
    head: Any
    feedforward: Any = None

    @property
    def record(self) -> dict[str, dict[str, np.ndarray]] | None:
        """Per-step internals of the recurrent stack (``forward(record=True)``), else None."""
        return getattr(self.rnn, "record", None)


class SequenceModel(PerStepBase):
    """Embedding (or real-valued input) -> RNN/LSTM/GRU stack -> per-step linear head.

    Parameters
    ----------
    cell : {"rnn", "lstm", "gru"}
    input_kind : {"tokens", "real"}
        Token ids (B, T) go through an ``Embedding``; real inputs (B, T, F) go straight in.
    input_size : int
        Vocabulary size for tokens, feature count for real inputs.
    output_size : int
        Classes (logits) or real output features per step.
    hidden_size, num_layers, bidirectional, dropout : as in ``torch.nn.LSTM``.
    embedding_dim : int, optional
        Size of the token embedding (default: ``hidden_size``). Ignored for real inputs.
    nonlinearity : {"tanh", "relu", "linear"}
        Only for ``cell="rnn"``.
    residual : bool
        Residual connections between the stacked layers (:class:`~pyplay.nn.recurrent.Recurrent`).
    peephole, forget_gate, forget_bias
        Only for ``cell="lstm"``: the LSTM's variants (:class:`~pyplay.nn.lstm.LSTM`), diagonal
        peepholes, no forget gate (the 1997 LSTM) and the forget gate's initial bias.
    delay : int
        The time delay :math:`D` (one-way nets only; see above).
    feedforward_layers : int
        :math:`K` tanh layers of ``hidden_size`` units before the recurrent stack (0: none).
    dtype : numpy.float32 or numpy.float64
    rng : numpy.random.Generator or int seed
    """

    tbptt = True  # its recurrent state may be carried from one chunk of a stream to the next

    def __init__(
        self,
        cell: str = "lstm",
        *,
        input_kind: str,
        input_size: int,
        output_size: int,
        hidden_size: int = 64,
        num_layers: int = 1,
        bidirectional: bool = False,
        dropout: float = 0.0,
        embedding_dim: int | None = None,
        nonlinearity: str = "tanh",
        residual: bool = False,
        peephole: bool = False,
        forget_gate: bool = True,
        forget_bias: float = 0.0,
        delay: int = 0,
        feedforward_layers: int = 0,
        dtype: Any = np.float32,
        rng: np.random.Generator | int | None = 0,
    ) -> None:
        self.cell = check_choice("cell", cell, CELLS)
        self.residual = check_flag("residual", residual)
        self.peephole = check_flag("peephole", peephole)
        self.forget_gate = check_flag("forget_gate", forget_gate)
        self.forget_bias = check_float("forget_bias", forget_bias)
        lstm: dict[str, Any] = dict(
            peephole=self.peephole, forget_gate=self.forget_gate, forget_bias=self.forget_bias
        )
        if self.cell != "lstm" and (self.peephole or not self.forget_gate or self.forget_bias):
            raise ValueError(
                f"peephole, forget_gate and forget_bias are LSTM settings; cell={self.cell!r} "
                f"takes the defaults (False, True, 0.0), got {lstm}"
            )
        self._set_io(input_size, output_size, input_kind, dtype)
        self.hidden_size = check_int("hidden_size", hidden_size, min_value=1)
        self.num_layers = check_int("num_layers", num_layers, min_value=1)
        if not isinstance(bidirectional, bool | np.bool_):
            raise TypeError(f"bidirectional must be True or False, got {bidirectional!r}")
        self.bidirectional = bool(bidirectional)
        self.delay = check_int("delay", delay, min_value=0, max_value=MAX_DELAY)
        if self.delay and self.bidirectional:
            raise ValueError(
                "delay is the one-way alternative to a bidirectional net (a fixed window of "
                f"future frames): use bidirectional=False with it, got delay={self.delay}"
            )
        self.dropout = check_float(
            "dropout", dropout, min_value=0.0, max_value=1.0, max_inclusive=False
        )
        self.nonlinearity = check_choice("nonlinearity", nonlinearity, ("tanh", "relu", "linear"))
        self.feedforward_layers = check_int(
            "feedforward_layers", feedforward_layers, min_value=0, max_value=MAX_FEEDFORWARD_LAYERS
        )
        if embedding_dim is None:
            embedding_dim = self.hidden_size
        self.embedding_dim = check_int("embedding_dim", embedding_dim, min_value=1)
        check_model_size(type(self), locals())  # before anything is built
        gen = as_generator(rng)

        self.embedding: Embedding | None = None
        rnn_input = self.input_size
        if self.input_kind == "tokens":
            self.embedding = Embedding(
                self.input_size, self.embedding_dim, dtype=self.dtype, rng=gen
            )
            rnn_input = self.embedding_dim
        self.feedforward: FeedForwardStack | None = None
        if self.feedforward_layers:
            self.feedforward = FeedForwardStack(
                rnn_input, self.hidden_size, self.feedforward_layers, dtype=self.dtype, rng=gen
            )
            rnn_input = self.hidden_size
        common: dict[str, Any] = dict(
            num_layers=self.num_layers,
            bidirectional=self.bidirectional,
            dropout=self.dropout,
            dtype=self.dtype,
            rng=gen,
            residual=self.residual,
        )
        self.rnn: RNN | LSTM | GRU
        if self.cell == "lstm":
            self.rnn = LSTM(rnn_input, self.hidden_size, **common, **lstm)
        elif self.cell == "gru":
            self.rnn = GRU(rnn_input, self.hidden_size, **common)
        else:
            self.rnn = RNN(rnn_input, self.hidden_size, nonlinearity=self.nonlinearity, **common)
        directions = 2 if self.bidirectional else 1
        self.head = Linear(
            directions * self.hidden_size, self.output_size, dtype=self.dtype, rng=gen
        )

        self.params: dict[str, np.ndarray] = gather_params(self._layers())

    # ------------------------------------------------------------------ structure
    def _layers(self) -> list[tuple[str, Any]]:
        layers: list[tuple[str, Any]] = []
        if self.embedding is not None:
            layers.append(("embedding", self.embedding))
        if self.feedforward is not None:
            layers.append(("feedforward", self.feedforward))
        layers += [("rnn", self.rnn), ("head", self.head)]
        return layers

    @classmethod
    def estimate_parameters(cls, config: Mapping[str, Any]) -> int:
        """An upper estimate of the parameter count ``config`` describes (without building)."""
        H, L = config_int(config, "hidden_size", 64), config_int(config, "num_layers", 1)
        n_in, out = config_int(config, "input_size", 1), config_int(config, "output_size", 1)
        tokens = config.get("input_kind") == "tokens"
        E = config_int(config, "embedding_dim", H) if tokens else 0
        D = 2 if config.get("bidirectional") else 1
        K = config_int(config, "feedforward_layers", 0)
        ff = FeedForwardStack.count(E or n_in, H, K)
        rnn_in = H if K else E or n_in
        return n_in * E + ff + recurrent(config.get("cell"), rnn_in, H, L, D) + (D * H + 1) * out

    # ------------------------------------------------------------------ maths
    def forward(
        self,
        inputs: np.ndarray,
        state: Any = None,
        lengths: np.ndarray | None = None,
        *,
        record: bool = False,
        training: bool = True,
        input_gradient: bool = False,
    ) -> tuple[np.ndarray, Any, ModelCache]:
        """Outputs (B, T, output_size), the final recurrent state, and the cache for backward.

        Token ids go to the recurrent stack with the embedding table, unread
        (:mod:`pyplay.nn.token_input`), when nothing stands between them (no feed-forward
        layers, no delay): the same outputs and gradients, with fewer products. With
        ``input_gradient=True`` they are embedded first, so that ``self.rnn.backward`` on the
        cache gives dL/de_t, the gradient at every embedded input.
        """
        emb_cache: Any = None
        x: Any
        direct = self.feedforward is None and not self.delay and not input_gradient
        if self.embedding is not None and direct:
            x = emb_cache = self.embedding.tokens(inputs)  # ids (B, T) and the table (V, E)
        elif self.embedding is not None:
            x, emb_cache = self.embedding.forward(inputs)  # (B, T) -> (B, T, E)
        else:
            x = inputs  # (B, T, F)
        ff_cache = None
        if self.feedforward is not None:
            x, ff_cache = self.feedforward.forward(x)  # (B, T, E or F) -> (B, T, H)
        D = self.delay
        if D:
            if state is not None:
                raise ValueError(f"a time-delay net (delay={D}) reads whole sequences: no state")
            B, _, F = x.shape
            x = np.concatenate([x, np.zeros((B, D, F), x.dtype)], axis=1)  # (B, T+D, F)
            lengths = None if lengths is None else np.asarray(lengths) + D
        hs, state, rnn_cache = self.rnn.forward(
            x, state=state, lengths=lengths, record=record, training=training
        )  # (B, T+D, D*H)
        hs = hs[:, D:]  # (B, T, D*H): the output for t is read at t + D
        y, head_cache = self.head.forward(hs)  # (B, T, output_size)
        return y, state, ModelCache(emb_cache, rnn_cache, head_cache, ff_cache)

    def backward(
        self,
        dy: np.ndarray,
        cache: ModelCache,
        dstate: Any = None,
        *,
        record: bool = False,
        gradient: str = "full",
    ) -> Backward:
        """Gradients of every parameter (keys of :attr:`params`) and, with ``record=True``,
        the per-step norms of dL/dh_t as ``record`` (else ``None``). ``gradient="cec"``: an
        LSTM's truncated gradient through the cell state only (:mod:`pyplay.nn.lstm_cell`)."""
        dhs, head_grads = self.head.backward(dy, cache.head)  # (B, T, D*H)
        if self.delay:
            B, _, W = dhs.shape
            dhs = np.concatenate([np.zeros((B, self.delay, W), dhs.dtype), dhs], axis=1)
            # (B, T+D, D*H): no output was read at the first D steps
        grad_record = None
        rnn = cache.rnn
        if record:
            dx, _, rnn_grads, grad_record = self.rnn.backward(
                dhs, dstate, rnn, record=True, gradient=gradient
            )
        else:
            dx, _, rnn_grads = self.rnn.backward(dhs, dstate, rnn, gradient=gradient)
        if self.delay:
            dx = dx[:, : dx.shape[1] - self.delay]  # (B, T, E): the padding frames are no input
        grads: dict[str, np.ndarray] = {}
        if self.feedforward is not None:
            dx, ff_grads = self.feedforward.backward(dx, cache.feedforward)  # (B, T, E or F)
            grads.update({f"feedforward.{k}": v for k, v in ff_grads.items()})
        if self.embedding is not None:  # dx: (B, T, E), or (V, E) when the stack read the table
            emb_grads = self.embedding.grads_from(dx, cache.embedding)
            grads.update({f"embedding.{k}": v for k, v in emb_grads.items()})
        grads.update({f"rnn.{k}": v for k, v in rnn_grads.items()})
        grads.update({f"head.{k}": v for k, v in head_grads.items()})
        return Backward(grads, record=grad_record)
