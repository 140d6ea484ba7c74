"""Attention without a value function (Solberg's TEK5040 lecture, "Single-head attention":
:math:`z^i = \\sum_j p_{i,j} x^j`): ``value_function="identity"`` in multi-head attention, the
transformer layers and models. float64 central-difference gradient checks, the value rows
absent from the parameters (the state_dict), incremental decoding equal to the full pass, and
the default left exactly as torch's (its parity tests are in test_multihead.py and
test_transformer_layers.py)."""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck import assert_grad_close, numeric_grad
from pyplay.models.transformer.lm import TransformerModel
from pyplay.models.transformer.seq2seq import TransformerSeq2Seq
from pyplay.nn.multihead import MultiheadAttention
from pyplay.nn.transformer import TransformerEncoder, TransformerEncoderLayer
from pyplay.nn.transformer_decoder import TransformerDecoderLayer

B, T, E, H = 2, 4, 6, 2
KPM = np.array([[False, False, False, True], [False, False, False, False]])  # True = pad


def _randomise(params: dict[str, np.ndarray], seed: int) -> None:
    """Non-zero biases and norms, so that every gradient means something."""
    rng = np.random.default_rng(seed)
    for p in params.values():
        p[...] = 0.5 * rng.standard_normal(p.shape)


def _mha(bias: bool = True, kdim: int | None = None) -> MultiheadAttention:
    m = MultiheadAttention(
        E, H, bias, kdim=kdim, dtype=np.float64, rng=1, value_function="identity"
    )
    _randomise(m.params, 2)
    return m


def test_no_value_rows_in_the_parameters() -> None:
    m = MultiheadAttention(E, H, dtype=np.float64, value_function="identity")
    assert {k: v.shape for k, v in m.params.items()} == {
        "in_proj_weight": (2 * E, E), "in_proj_bias": (2 * E,),
        "out_proj.weight": (E, E), "out_proj.bias": (E,),
    }  # fmt: skip
    other = MultiheadAttention(E, H, kdim=3, dtype=np.float64, value_function="identity")
    assert "v_proj_weight" not in other.params and "q_proj_weight" in other.params
    layer = TransformerEncoderLayer(E, H, 8, dtype=np.float64, value_function="identity")
    assert layer.params["self_attn.in_proj_weight"].shape == (2 * E, E)
    default = TransformerEncoderLayer(E, H, 8, dtype=np.float64)
    assert default.params["self_attn.in_proj_weight"].shape == (3 * E, E)
    assert default.value_function == "linear" and layer.value_function == "identity"


def test_bad_value_function() -> None:
    with pytest.raises(ValueError, match="value_function"):
        MultiheadAttention(E, H, value_function="none")
    with pytest.raises(ValueError, match="needs vdim equal to embed_dim"):
        MultiheadAttention(E, H, vdim=3, value_function="identity")


def test_the_output_is_a_weighted_sum_of_the_values_themselves() -> None:
    """Per head n: head_n = softmax(Q_n K_n^T / sqrt d) X_v[:, :, block n], no W_v."""
    m = _mha()
    rng = np.random.default_rng(3)
    xq, xk, xv = (rng.standard_normal((B, T, E)) for _ in range(3))
    out, w, _ = m.forward(xq, xk, xv, average_attn_weights=False)
    assert w is not None
    d = E // H
    heads = np.concatenate(
        [w[:, n] @ xv[:, :, n * d : (n + 1) * d] for n in range(H)], axis=2
    )  # (B, T, E)
    p = m.params
    expected = heads @ p["out_proj.weight"].T + p["out_proj.bias"]
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize(("bias", "kdim"), [(True, None), (False, None), (True, 3)])
def test_cross_attention_gradients(bias: bool, kdim: int | None) -> None:
    m = _mha(bias, kdim)
    rng = np.random.default_rng(4)
    xq, xk, xv = (rng.standard_normal((B, T, f)) for f in (E, m.kdim, E))
    R = rng.standard_normal((B, T, E))

    def loss() -> float:
        return float((m.forward(xq, xk, xv, key_padding_mask=KPM)[0] * R).sum())

    _, _, cache = m.forward(xq, xk, xv, key_padding_mask=KPM)
    dq, dk, dv, grads = m.backward(R, cache)
    assert list(grads) == list(m.params)
    for what, x, dx in (("dquery", xq, dq), ("dkey", xk, dk), ("dvalue", xv, dv)):
        assert_grad_close(dx, numeric_grad(loss, x), what)
    for name, p in m.params.items():
        assert_grad_close(grads[name], numeric_grad(loss, p), name)
    assert np.all(dv[KPM] == 0.0)  # an ignored value gets no gradient


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_self_attention_gradients_packed(causal: bool) -> None:
    """One array as query, key and value: the packed (2E, E) product and dV added to dX."""
    m = _mha()
    rng = np.random.default_rng(5)
    x, R = rng.standard_normal((B, T, E)), rng.standard_normal((B, T, E))

    def loss() -> float:
        return float((m.forward(x, x, x, is_causal=causal)[0] * R).sum())

    _, _, cache = m.forward(x, x, x, is_causal=causal)
    assert cache.packed
    dx, grads = m.backward_self(R, cache)
    assert_grad_close(dx, numeric_grad(loss, x), "dx")
    for name, p in m.params.items():
        assert_grad_close(grads[name], numeric_grad(loss, p), name)
    dq, dk, dv, unpacked = m.backward(R, cache)  # the three paths, summed, agree
    np.testing.assert_allclose(dq + dk + dv, dx, rtol=1e-12, atol=1e-13)
    for name in grads:
        np.testing.assert_allclose(unpacked[name], grads[name], rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
@pytest.mark.parametrize("kind", ["encoder", "decoder"])
def test_layer_gradients(norm_first: bool, kind: str) -> None:
    cls = TransformerEncoderLayer if kind == "encoder" else TransformerDecoderLayer
    layer = cls(E, H, 5, norm_first=norm_first, dtype=np.float64, rng=6,
                value_function="identity")  # fmt: skip
    _randomise(layer.params, 7)
    rng = np.random.default_rng(8)
    x, mem, R = (rng.standard_normal((B, T, E)) for _ in range(3))
    args = (x,) if kind == "encoder" else (x, mem)
    kw = {"is_causal": True} if kind == "encoder" else {"tgt_is_causal": True}

    def loss() -> float:
        return float((layer.forward(*args, **kw)[0] * R).sum())

    _, cache = layer.forward(*args, **kw)
    back = layer.backward(R, cache)
    dx, grads = back[0], back[-1]
    assert_grad_close(dx, numeric_grad(loss, x), "dx")
    assert list(grads) == list(layer.params)
    for name, p in layer.params.items():
        assert_grad_close(grads[name], numeric_grad(loss, p), name)
    if kind == "decoder":  # the cross-attention keeps its value function
        assert layer.params["multihead_attn.in_proj_weight"].shape == (3 * E, E)


def test_incremental_decoding_equals_the_full_pass() -> None:
    enc = TransformerEncoder(E, H, 2, 5, norm_first=True, norm=True, dtype=np.float64, rng=9,
                             value_function="identity")  # fmt: skip
    x = np.random.default_rng(10).standard_normal((B, T, E))
    full, _ = enc.forward(x, is_causal=True)
    state, rows = enc.init_state(), []
    for t in range(T):
        y, state, _ = enc.step(x[:, t : t + 1], state)
        rows.append(y)
    np.testing.assert_allclose(np.concatenate(rows, axis=1), full, rtol=1e-11, atol=1e-12)


def test_models_carry_it_in_their_config() -> None:
    lm = TransformerModel(5, 5, d_model=8, nhead=2, num_layers=1, value_function="identity")
    assert lm.config["value_function"] == "identity"
    assert "encoder.layers.0.self_attn.in_proj_weight" in lm.params
    assert lm.params["encoder.layers.0.self_attn.in_proj_weight"].shape == (16, 8)
    again = TransformerModel.from_config(lm.config)
    assert again.value_function == "identity"
    old = {k: v for k, v in lm.config.items() if k != "value_function"}  # an older file
    assert TransformerModel.from_config(old).value_function == "linear"
    s2s = TransformerSeq2Seq(6, 6, d_model=8, nhead=2, num_encoder_layers=1,
                             num_decoder_layers=1, value_function="identity")  # fmt: skip
    assert s2s.config["value_function"] == "identity"
    assert s2s.params["decoder.layers.0.self_attn.in_proj_weight"].shape == (16, 8)
    assert s2s.params["decoder.layers.0.multihead_attn.in_proj_weight"].shape == (24, 8)


def test_lm_gradients() -> None:
    """The whole model without value functions: every parameter's gradient (float64)."""
    m = TransformerModel(5, 3, d_model=4, nhead=2, num_layers=1, dim_feedforward=6,
                         dtype=np.float64, rng=11, value_function="identity")  # fmt: skip
    _randomise(m.params, 12)
    ids = np.array([[1, 4, 0], [2, 2, 3]])
    R = np.random.default_rng(13).standard_normal((2, 3, 3))

    def loss() -> float:
        return float((m.forward(ids)[0] * R).sum())

    _, _, cache = m.forward(ids)
    grads = m.backward(R, cache).grads
    for name, p in m.params.items():
        assert_grad_close(grads[name], numeric_grad(loss, p), name)
