"""The whole encoder-decoder transformer against its PyTorch twin (issue 19): ``nn.Embedding``
tables scaled by sqrt(D), the same position code added (or concatenated), torch's
``nn.TransformerEncoder`` / ``nn.TransformerDecoder`` (final layer norms with pre-norm blocks),
the source padding mask and the causal target mask the model uses, and the ``nn.Linear`` head.
Teacher-forced logits and every parameter's gradient of ``sum(logits * R)`` agree to 1e-6
relative in float64.

Run with ``-s`` to see the largest relative error met in this module.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from gradcheck import max_rel_error
from pyplay.models.transformer.seq2seq import TransformerSeq2Seq
from pyplay.tasks.pairs import PAD, PairBatch

torch = pytest.importorskip("torch")

VS, VT, D, H, F, MAX_LEN = 7, 8, 8, 2, 12, 10
TOL = 1e-6
WORST: dict[str, float] = {}
CASES = [
    ("sinusoidal", True, "gelu"),
    ("sinusoidal", False, "relu"),
    ("learned", True, "relu"),
    ("learned", False, "gelu"),
    ("concat", True, "gelu"),
    ("concat", False, "relu"),
]
CASE_IDS = [f"{pos}-{'pre' if nf else 'post'}-{act}" for pos, nf, act in CASES]


@pytest.fixture(scope="module", autouse=True)
def _report_worst() -> Iterator[None]:
    yield
    for kind, err in sorted(WORST.items()):
        print(f"\n[parity] max relative error, {kind}: {err:.2e}")


def _batch() -> PairBatch:
    """Sources of lengths 4, 2, 1 (padded) and targets of different lengths: PAD in both."""
    return PairBatch.of([([3, 4, 5, 6], [4, 3, 7]), ([5, 3], [6, 6, 5, 4, 7]), ([6], [3])])


def _sinusoids(max_len: int, width: int) -> Any:
    """The PyTorch tutorial's table, written independently of pyplay's."""
    t = torch.arange(max_len, dtype=torch.float64)[:, None]  # (T, 1)
    div = torch.exp(torch.arange(0, width, 2, dtype=torch.float64) * (-math.log(10000.0) / width))
    P = torch.zeros(max_len, width, dtype=torch.float64)
    P[:, 0::2] = torch.sin(t * div)
    P[:, 1::2] = torch.cos(t * div)
    return P  # (T, width)


class _Learned(torch.nn.Module):
    """GPT-2's learned positions: ``pos.weight`` (max_len, D) added to the inputs."""

    def __init__(self) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(MAX_LEN, D, dtype=torch.float64))

    def forward(self, x: Any) -> Any:
        return x + self.weight[: x.shape[1]]  # (B, T, D)


class _Fixed(torch.nn.Module):
    """A fixed sinusoidal table, added or concatenated after the token embedding."""

    def __init__(self, width: int, concat: bool) -> None:
        super().__init__()
        self.concat = concat
        self.register_buffer("P", _sinusoids(MAX_LEN, width), persistent=False)

    def forward(self, x: Any) -> Any:
        P = self.P[: x.shape[1]]  # (T, width)
        if self.concat:
            return torch.cat([x, P.expand(x.shape[0], -1, -1)], dim=-1)  # (B, T, D)
        return x + P  # (B, T, D)


class TorchSeq2Seq(torch.nn.Module):
    """The twin, its ``state_dict`` names pyplay's parameter names."""

    def __init__(self, positional: str, norm_first: bool, activation: str) -> None:
        super().__init__()
        d_pos = D // 4 if positional == "concat" else 0
        f64 = torch.float64
        self.src_embedding = torch.nn.Embedding(VS, D - d_pos, padding_idx=PAD, dtype=f64)
        self.tgt_embedding = torch.nn.Embedding(VT, D - d_pos, padding_idx=PAD, dtype=f64)
        self.pos = _Learned() if positional == "learned" else _Fixed(d_pos or D, d_pos > 0)
        kw = {"dropout": 0.0, "activation": activation, "norm_first": norm_first}
        kw |= {"batch_first": True, "dtype": f64}

        def norm() -> Any:
            return torch.nn.LayerNorm(D, dtype=f64) if norm_first else None

        enc_layer = torch.nn.TransformerEncoderLayer(D, H, F, **kw)
        self.encoder = torch.nn.TransformerEncoder(
            enc_layer, 1, norm=norm(), enable_nested_tensor=False
        )
        self.decoder = torch.nn.TransformerDecoder(
            torch.nn.TransformerDecoderLayer(D, H, F, **kw), 2, norm=norm()
        )
        self.head = torch.nn.Linear(D, VT, dtype=f64)

    def forward(self, src: Any, src_lengths: Any, tgt_in: Any) -> Any:
        scale = math.sqrt(D)
        kpm = torch.arange(src.shape[1])[None, :] >= src_lengths[:, None]  # (B, S) padding
        U = tgt_in.shape[1]
        causal = torch.triu(torch.ones(U, U, dtype=torch.bool), diagonal=1)  # (U, U) future
        memory = self.encoder(self.pos(self.src_embedding(src) * scale), src_key_padding_mask=kpm)
        z = self.decoder(
            self.pos(self.tgt_embedding(tgt_in) * scale), memory, tgt_mask=causal,
            memory_key_padding_mask=kpm, tgt_is_causal=True,
        )  # fmt: skip
        return self.head(z)  # (B, U, VT)


def _close(ours: np.ndarray, theirs: Any, what: str, kind: str) -> None:
    err = max_rel_error(ours, theirs.detach().numpy())
    WORST[kind] = max(WORST.get(kind, 0.0), err)
    assert err < TOL, f"{what}: max relative error {err:.2e}"


@pytest.mark.parametrize(("positional", "norm_first", "activation"), CASES, ids=CASE_IDS)
def test_whole_model_matches_torch(positional: str, norm_first: bool, activation: str) -> None:
    model = TransformerSeq2Seq(
        VS, VT, d_model=D, nhead=H, num_encoder_layers=1, num_decoder_layers=2,
        dim_feedforward=F, positional=positional, max_len=MAX_LEN, norm_first=norm_first,
        activation=activation, dtype=np.float64, rng=30,
    )  # fmt: skip
    rng = np.random.default_rng(31)
    for name, p in model.params.items():  # away from the initial values: norms != 1, biases != 0
        base = 1.0 if "norm" in name and name.endswith("weight") else 0.0
        p[...] = base + 0.3 * rng.standard_normal(p.shape)
    twin = TorchSeq2Seq(positional, norm_first, activation)
    assert list(twin.state_dict()) == list(model.params)  # torch's names, in pyplay's order
    twin.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in model.params.items()})
    twin.train()  # dropout 0: training mode only keeps torch off its inference fast path

    batch = _batch()
    assert (batch.src == PAD).any() and (batch.tgt_in == PAD).any()
    logits, _, cache = model.forward(batch.src, batch.src_lengths, batch.tgt_in)
    R = rng.standard_normal(logits.shape)
    grads = model.backward(R, cache).grads
    theirs = twin(*(torch.from_numpy(a) for a in (batch.src, batch.src_lengths, batch.tgt_in)))
    (theirs * torch.from_numpy(R)).sum().backward()

    _close(logits, theirs, "logits", "logits")
    for name, p in twin.named_parameters():
        assert p.grad is not None and float(p.grad.abs().max()) > 0, name  # not vacuous
        _close(grads[name], p.grad, name, "gradients")
