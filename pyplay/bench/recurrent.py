"""The character-model cases of the benchmarks (developer-only, see :mod:`pyplay.bench`).

One training step (forward, backward, Adam update) of a character model, Embedding ->
recurrent cell -> Linear with cross-entropy over every position, for pyplay
(:func:`pyplay_step`) and for the same model in PyTorch with one thread (:func:`torch_step`,
None without torch). Both train on the same random batch of token ids, so their losses start
near log(V) and fall alike when the batch repeats.

Cases (:data:`CASES`): LSTM at B=32 (training) and B=1 (interactive stepping), GRU at B=32 and
B=1; all with T=32, H=64, V=32, float32.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from pyplay.losses import cross_entropy
from pyplay.models import SequenceModel
from pyplay.optim import Adam

__all__ = ["CASES", "Case", "pyplay_step", "torch_step"]


@dataclass(frozen=True)
class Case:
    """One benchmark configuration."""

    cell: str
    batch: int
    steps: int = 32  # T
    hidden: int = 64  # H
    vocab: int = 32  # V

    @property
    def label(self) -> str:
        return f"{self.cell.upper()} B={self.batch} T={self.steps} H={self.hidden} V={self.vocab}"


CASES = (Case("lstm", 32), Case("lstm", 1), Case("gru", 32), Case("gru", 1))


def _data(case: Case, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.integers(0, case.vocab, size=(case.batch, case.steps))  # (B, T)
    y = rng.integers(0, case.vocab, size=(case.batch, case.steps))  # (B, T)
    return x, y


def pyplay_step(case: Case, dtype: type = np.float32) -> Callable[[], float]:
    """A closure running one pyplay training step of ``case``; returns the loss."""
    model = SequenceModel(
        case.cell,
        input_kind="tokens",
        input_size=case.vocab,
        output_size=case.vocab,
        hidden_size=case.hidden,
        embedding_dim=case.vocab,
        dtype=dtype,
        rng=0,
    )
    opt = Adam(model.params, lr=1e-3)
    x, y = _data(case)

    def step() -> float:
        logits, _, cache = model.forward(x)  # (B, T, V)
        loss, dlogits = cross_entropy(logits, y)
        grads = model.backward(dlogits, cache).grads
        opt.step(grads)
        return float(loss)

    return step


def torch_step(case: Case) -> Callable[[], float] | None:
    """The same step in PyTorch (one thread, float32), or None without torch."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    torch.manual_seed(0)
    rnn_cls = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU, "rnn": torch.nn.RNN}[case.cell]

    class Model(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embedding = torch.nn.Embedding(case.vocab, case.vocab)
            self.rnn = rnn_cls(case.vocab, case.hidden, batch_first=True)
            self.head = torch.nn.Linear(case.hidden, case.vocab)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            h, _ = self.rnn(self.embedding(x))
            return self.head(h)

    model = Model()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x_np, y_np = _data(case)
    x = torch.from_numpy(x_np)
    y = torch.from_numpy(y_np).reshape(-1)

    def step() -> float:
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x).reshape(-1, case.vocab), y)
        loss.backward()
        opt.step()
        return float(loss.detach())

    return step
