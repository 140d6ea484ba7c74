"""The sequence-to-sequence cases of the benchmarks (developer-only, see :mod:`pyplay.bench`).

- One training step (forward, backward, Adam) of an attention encoder-decoder: LSTM encoder
  and decoder (H=64, E=32), Luong "general" attention, vocabularies of 32, B=32, source and
  target length 16 (the target's last position is EOS), masked cross-entropy, float32. Its
  PyTorch twin (same wiring: ``nn.LSTM`` encoder and decoder, ``s^T W_a h`` scores,
  ``tanh(W_c [c; s])``, one thread) gives the ratio.
- A beam-search decode of one source with the same (untrained) model: width 5, at most 20
  steps (it stops earlier only when no live hypothesis can beat the finished ones).
  PyTorch has no beam search, so this case has no baseline.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from pyplay.decode.beam import BeamSearch
from pyplay.losses import cross_entropy
from pyplay.models.seq2seq import EncoderDecoder
from pyplay.optim import Adam
from pyplay.tasks.pairs import BOS, EOS, PairBatch

__all__ = ["beam_decode", "seq2seq_step", "torch_seq2seq_step"]

B, S, V, E, H = 32, 16, 32, 32, 64


def _batch(seed: int = 0) -> PairBatch:
    rng = np.random.default_rng(seed)
    pairs = [(rng.integers(3, V, S).tolist(), rng.integers(3, V, S - 1).tolist()) for _ in range(B)]
    return PairBatch.of(pairs)


def _model() -> EncoderDecoder:
    return EncoderDecoder(V, V, E, H, cell="lstm", wiring="attention", score="general", rng=0)


def seq2seq_step() -> Callable[[], float]:
    """A closure running one pyplay training step; returns the loss."""
    model = _model()
    opt = Adam(model.params, lr=1e-3)
    b = _batch()
    lengths = b.tgt_mask.sum(axis=1)

    def step() -> float:
        logits, _, cache = model.forward(b.src, b.src_lengths, b.tgt_in, lengths)
        loss, dlogits = cross_entropy(logits, b.tgt_out, mask=b.tgt_mask)
        opt.step(model.backward(dlogits, cache).grads)
        return float(loss)

    return step


def torch_seq2seq_step() -> Callable[[], float] | None:
    """The same step in PyTorch (one thread), or None without torch."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    torch.manual_seed(0)
    nn = torch.nn

    class Model(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.src_emb, self.tgt_emb = nn.Embedding(V, E), nn.Embedding(V, E)
            self.enc = nn.LSTM(E, H, batch_first=True)
            self.dec = nn.LSTM(E, H, batch_first=True)
            self.W_a = nn.Linear(H, H, bias=False)
            self.W_c = nn.Linear(2 * H, H, bias=False)
            self.head = nn.Linear(H, V)

        def forward(self, src: torch.Tensor, tgt_in: torch.Tensor) -> torch.Tensor:
            h_enc, state = self.enc(self.src_emb(src))  # (B, S, H)
            s, _ = self.dec(self.tgt_emb(tgt_in), state)  # (B, U, H)
            a = torch.softmax(s @ self.W_a(h_enc).transpose(1, 2), dim=2)  # (B, U, S)
            out = torch.tanh(self.W_c(torch.cat([a @ h_enc, s], dim=2)))  # (B, U, H)
            return self.head(out)

    model = Model()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    b = _batch()
    src, tgt_in = torch.from_numpy(b.src), torch.from_numpy(b.tgt_in)
    tgt_out = torch.from_numpy(b.tgt_out).reshape(-1)
    mask = torch.from_numpy(b.tgt_mask).reshape(-1)

    def step() -> float:
        opt.zero_grad()
        logits = model(src, tgt_in).reshape(-1, V)
        loss = torch.nn.functional.cross_entropy(logits[mask], tgt_out[mask])
        loss.backward()
        opt.step()
        return float(loss.detach())

    return step


def beam_decode(width: int = 5, max_length: int = 20) -> Callable[[], float]:
    """A closure decoding one source with beam search; returns the best score."""
    model = _model()
    b = _batch()

    def decode() -> float:
        state = model.start(b.src[:1], b.src_lengths[:1])
        search = BeamSearch(
            model.step, state, BOS, EOS, beam_width=width, max_length=max_length,
            reorder=model.reorder, vocab_size=V,
        )  # fmt: skip
        return float(search.run()[0].score)

    return decode
