"""Show, Attend and Tell (pyplay.models.captioner): the full backward pass of the soft and
no-attention models against central differences (float64, through the LSTM, the attention and
both convolutions); the hard model's score-function estimator checked as the glimpse's is (its
expectation, enumerated over every choice of cells, is the exact gradient of the expected loss,
whatever the baseline; the baseline lowers its variance); greedy decoding, attention maps and
refused arguments.

Lectures: IDSIA "Image Captioning with Visual Attention" (Xu et al., soft vs hard attention);
TEK5040 "Content-based addressing" (soft addressing v = sum_j p_j M_j, hard addressing
v = M_j with probability p_j) and "Image captioning with RNN and content-based attention"
(14 x 14 conv features as memory)."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from gradcheck import assert_grad_close, max_rel_error, numeric_grad
from pyplay.losses import cross_entropy
from pyplay.models.captioner import Captioner
from pyplay.objectives.caption import CaptionObjective, caption_loss
from pyplay.tasks.pairs import BOS, EOS
from pyplay.tasks.scenes import CaptionedScenes

TINY = {"channels": 1, "feature_size": 2, "embedding_dim": 3, "hidden_size": 4, "attn_size": 3}


def _tiny(attention: str, seed: int = 1, **kw: object) -> Captioner:
    args = {**TINY, **kw}
    return Captioner(7, image_size=8, attention=attention, dtype=np.float64, rng=seed, **args)


def _data(B: int = 2, U: int = 3, seed: int = 0) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    images = rng.random((B, 3, 8, 8))  # a 2 x 2 grid of cells
    tgt_in, tgt_out = rng.integers(1, 7, size=(B, U)), rng.integers(2, 7, size=(B, U))
    mask = np.ones((B, U), dtype=bool)
    mask[-1, -1] = False  # a padded position counts for nothing
    return images, tgt_in, tgt_out, mask


@pytest.mark.slow
@pytest.mark.parametrize("attention", ["soft", "none"])
def test_idsia_image_captioning_visual_attention_soft_backward_matches_central_differences(
    attention: str,
) -> None:
    """Every parameter, conv layers included: alpha_t = softmax(e_t), z_t = sum_i alpha_ti a_i
    (none: z_t = mean a_i), the LSTM's BPTT and h_0, c_0 from the mean annotation."""
    images, tgt_in, tgt_out, mask = _data()
    model = _tiny(attention)
    logits, alpha, cache = model.forward(images, tgt_in)
    _, dlogits = cross_entropy(logits, tgt_out, mask=mask)
    grads = model.backward(dlogits, cache).grads
    assert set(grads) == set(model.params)
    np.testing.assert_allclose(alpha.sum(axis=2), 1.0)

    def loss() -> float:
        return float(cross_entropy(model.forward(images, tgt_in)[0], tgt_out, mask=mask)[0])

    for name, value in model.params.items():
        assert_grad_close(grads[name], numeric_grad(loss, value), name)


@pytest.mark.slow
def test_tek5040_content_based_addressing_hard_read_of_given_cells_has_the_pathwise_gradient():
    """Hard addressing reads z_t = a_{s_t}: with the cells s given and L - b = 0 (no score
    term), the gradient is that of the loss at those cells, and the attention's own weights
    get none."""
    images, tgt_in, tgt_out, mask = _data(seed=2)
    model = _tiny("hard")
    index = np.array([[0, 3, 1], [2, 2, 0]])
    logits, _, cache = model.forward(images, tgt_in, index=index)
    np.testing.assert_array_equal(cache.index, index)
    _, dlogits = cross_entropy(logits, tgt_out, mask=mask)
    grads = model.backward(dlogits, cache, losses=np.zeros(2), baseline=0.0).grads

    def loss() -> float:
        out = model.forward(images, tgt_in, index=index)[0]
        return float(cross_entropy(out, tgt_out, mask=mask)[0])

    for name, value in model.params.items():
        if name.startswith("attn."):
            assert not grads[name].any(), name
        else:
            assert_grad_close(grads[name], numeric_grad(loss, value), name)


def _directional(loss: object, value: np.ndarray, R: np.ndarray, eps: float = 1e-6) -> float:
    """(loss(value + eps R) - loss(value - eps R)) / (2 eps): the derivative along R."""
    old = value.copy()
    value += eps * R
    up = loss()  # type: ignore[operator]
    value[...] = old - eps * R
    down = loss()  # type: ignore[operator]
    value[...] = old
    return float(up - down) / (2 * eps)


def _enumerated(model: Captioner, data: tuple[np.ndarray, ...]) -> tuple[list, np.ndarray]:
    """Every sequence of cells s (L^U of them) with its probability prod_t alpha_{t, s_t} and
    the caption's loss L(s), for one image."""
    images, tgt_in, tgt_out, mask = data
    L, U = int(np.prod(model.grid)), tgt_in.shape[1]
    paths, probs = [], []
    for s in itertools.product(range(L), repeat=U):
        index = np.array([s])
        logits, alpha, _ = model.forward(images, tgt_in, index=index)
        loss = float(cross_entropy(logits, tgt_out, mask=mask)[0])
        paths.append((index, loss))
        probs.append(np.prod(alpha[0, np.arange(U), list(s)]))
    return paths, np.array(probs)


@pytest.mark.slow
def test_tek5040_content_based_addressing_hard_estimators_expectation_is_the_exact_gradient():
    """sum_s p(s) g(s), the estimator's expectation enumerated over all 4^2 choices of cells
    (the choice at step 2 depends on step 1's through h_1), equals the gradient of
    E_s[L(s)] = sum_s p(s) L(s), whatever the baseline b: the score term reaches h_{t-1}, the
    LSTM and the convolutions. Central differences along a random direction of every
    parameter (all its entries at once; 16 forward passes per loss)."""
    data = _data(B=1, U=2, seed=3)
    model = _tiny("hard", seed=4, hidden_size=3, attn_size=2)
    paths, probs = _enumerated(model, data)
    assert len(paths) == 16 and abs(probs.sum() - 1) < 1e-12
    images, tgt_in, tgt_out, mask = data
    expectation = {
        b: {name: np.zeros_like(v) for name, v in model.params.items()} for b in (0.0, 1.5)
    }
    for (index, loss), p in zip(paths, probs, strict=True):
        logits, _, cache = model.forward(images, tgt_in, index=index)
        _, dlogits = cross_entropy(logits, tgt_out, mask=mask)
        for b, total in expectation.items():
            g = model.backward(dlogits, cache, losses=np.array([loss]), baseline=b).grads
            for name in total:
                total[name] += p * g[name]

    def expected_loss() -> float:
        paths_now, p_now = _enumerated(model, data)
        return float(sum(p * loss for (_, loss), p in zip(paths_now, p_now, strict=True)))

    rng = np.random.default_rng(9)
    for name, value in model.params.items():
        R = rng.normal(size=value.shape)
        numeric = _directional(expected_loss, value, R)
        for b, total in expectation.items():
            analytic = float((total[name] * R).sum())
            assert abs(analytic - numeric) <= 1e-8 + 1e-6 * abs(numeric), (name, b)
        if name.startswith("attn."):  # reached through alpha alone: the score term carries it
            assert abs(numeric) > 1e-6, name


def test_tek5040_content_based_addressing_a_baseline_near_the_mean_loss_lowers_the_variance():
    """Many draws of the same caption: the score term's spread with b = 0 against b = E[L]."""
    n = 1000
    images, tgt_in, tgt_out, mask = _data(B=1, U=2, seed=5)
    model = _tiny("hard", seed=6)
    rep = [np.repeat(v, n, axis=0) for v in (images, tgt_in, tgt_out, mask)]
    logits, _, cache = model.forward(rep[0], rep[1])  # n draws of the cells
    per, _ = cross_entropy(logits, rep[2], mask=rep[3], reduction="none")
    losses = per.sum(axis=1) * (n / rep[3].sum())  # (n,) each caption's loss
    _, dlogits = cross_entropy(logits, rep[2], mask=rep[3])
    spread = {}
    for b in (0.0, float(losses.mean())):
        de = model.backward(dlogits, cache, losses=losses, baseline=b).record["de"] * n
        spread[b] = float(de.var(axis=0).sum())
    without, with_mean = spread.values()
    assert with_mean < 0.5 * without, spread


def test_idsia_image_captioning_greedy_captions_and_attention_maps_agree_with_teacher_forcing():
    """Greedy decoding fed back as teacher forcing gives the same words and the same alpha;
    each word's map is (g_h, g_w) and sums to 1; no attention is the uniform 1/L."""
    task = CaptionedScenes(rng=0)
    images = task.batch(3).images
    for attention in ("soft", "hard", "none"):
        model = Captioner(task.vocab_size, attention=attention, rng=2)
        ids, alphas = model.greedy(images, max_len=6)
        tgt_in = np.concatenate([np.full((3, 1), BOS), ids[:, :-1]], axis=1)  # (3, 6)
        logits, alpha, _ = model.forward(images, tgt_in, training=False)
        running = np.cumsum(ids == EOS, axis=1) - (ids == EOS) == 0  # steps up to the EOS
        np.testing.assert_array_equal(logits.argmax(-1)[running], ids[running])
        np.testing.assert_allclose(alpha[running], alphas[running], rtol=1e-5, atol=1e-7)
        for words, maps in model.attention_maps(images, max_len=6):
            assert maps.shape == (len(words), 6, 6)
            np.testing.assert_allclose(maps.sum(axis=(1, 2)), 1.0, rtol=1e-5)
            if attention == "none":
                np.testing.assert_allclose(maps, 1 / 36)


def test_a_hard_model_draws_its_cells_when_training_and_takes_the_likeliest_otherwise():
    images, tgt_in, _, _ = _data(B=2, U=3, seed=7)
    model = _tiny("hard", seed=8)
    _, alpha, cache = model.forward(images, tgt_in, training=False)
    np.testing.assert_array_equal(cache.index, alpha.argmax(axis=2))
    _, _, drawn = model.forward(np.repeat(images, 50, axis=0), np.repeat(tgt_in, 50, axis=0))
    assert drawn.index.shape == (100, 3) and 0 <= drawn.index.min() <= drawn.index.max() < 4
    assert len(np.unique(drawn.index)) > 1  # draws, not the argmax


def test_the_captioner_is_plain_data_and_float32_by_default() -> None:
    model = Captioner(18, rng=0)
    config = model.config
    assert json.loads(json.dumps(config)) == config
    clone = Captioner.from_config(config, rng=5)
    assert clone.config == config and set(clone.params) == set(model.params)
    assert Captioner.estimate_parameters(config) >= model.num_parameters()
    assert all(v.dtype == np.float32 for v in model.params.values())
    assert model.grid == (6, 6)
    task = CaptionedScenes(rng=1)
    batch = task.batch(4)
    objective = CaptionObjective(model, task)
    loss, grads, metrics = objective.step(batch)
    assert all(g.dtype == np.float32 for g in grads.values()) and 0 <= metrics["accuracy"] <= 1
    assert abs(loss - np.log(18)) < 0.5  # about uniform while untrained
    assert set(Captioner(18, attention="none").params) == {
        n for n in model.params if not n.startswith("attn.")
    }


def test_bad_arguments_are_refused_by_name() -> None:
    with pytest.raises(ValueError, match="attention must be one of 'soft', 'hard', 'none'"):
        Captioner(10, attention="glance")
    with pytest.raises(ValueError, match="vocab_size must be >= 4, got 3"):
        Captioner(3)
    with pytest.raises(ValueError, match="image_size must be >= 8, got 4"):
        Captioner(10, image_size=4)
    model = _tiny("hard")
    images, tgt_in, tgt_out, mask = _data()
    with pytest.raises(ValueError, match=r"images must have shape \(B, 3, 8, 8\), got"):
        model.forward(np.zeros((2, 3, 9, 9)), tgt_in)
    with pytest.raises(ValueError, match=r"tgt_in must have shape \(B=2, U >= 1\)"):
        model.forward(images, tgt_in[:1])
    with pytest.raises(ValueError, match=r"index must hold \(B, U\) = \(2, 3\) cells in 0\.\.3"):
        model.forward(images, tgt_in, index=np.full((2, 3), 4))
    with pytest.raises(ValueError, match=r"index .* is for attention='hard' only"):
        _tiny("soft").forward(images, tgt_in, index=np.zeros((2, 3), dtype=int))
    logits, _, cache = model.forward(images, tgt_in)
    _, dlogits = cross_entropy(logits, tgt_out, mask=mask)
    with pytest.raises(ValueError, match=r"losses \(B,\) are needed"):
        model.backward(dlogits, cache)
    with pytest.raises(ValueError, match=r"dlogits must have shape \(2, 3, 7\)"):
        model.backward(dlogits[:, :2], cache, losses=np.zeros(2))
    task = CaptionedScenes(rng=0)
    with pytest.raises(ValueError, match="model does not fit task: task has 18 words and 24-pix"):
        CaptionObjective(model, task)
    with pytest.raises(TypeError, match="task must be a captioning task"):
        CaptionObjective(model, object())


def test_each_captions_loss_is_weighted_so_that_their_mean_is_the_batch_loss() -> None:
    task = CaptionedScenes(rng=3)
    batch = task.batch(5)  # captions of different lengths
    logits = np.random.default_rng(0).normal(size=(*batch.tgt_out.shape, task.vocab_size))
    loss, _, losses = caption_loss(logits, batch)
    assert losses.shape == (5,) and abs(losses.mean() - loss) < 1e-12


def test_the_objective_keeps_a_running_mean_baseline_and_steps_with_b_zero_without_it() -> None:
    task = CaptionedScenes(image_size=12, rng=0)
    model = Captioner(task.vocab_size, image_size=12, attention="hard", rng=1, **TINY)
    for use in (True, False):
        objective = CaptionObjective(model, task)
        objective.use_baseline = use
        batch = task.batch(6)
        loss, _, _ = objective.step(batch)
        objective.accept()
        assert objective.baseline == pytest.approx(0.1 * loss)  # 0.9 * 0 + 0.1 * loss
        state = model.generator.bit_generator.state
        _, grads, _ = objective.step(batch)
        model.generator.bit_generator.state = state  # the same draws again
        logits, _, cache = model.forward(batch.images, batch.tgt_in)
        _, dlogits, losses = caption_loss(logits, batch)
        b = objective.baseline if use else 0.0
        expected = model.backward(dlogits, cache, losses=losses, baseline=b).grads
        for name in grads:
            np.testing.assert_array_equal(grads[name], expected[name])


def test_idsia_image_captioning_the_soft_captioner_matches_its_pytorch_twin() -> None:
    """The same weights in torch (F.conv2d, nn.LSTMCell, F.embedding, F.linear and the
    additive attention written out): word scores, alpha and every gradient to 1e-6."""
    torch = pytest.importorskip("torch")
    from torch.nn import functional as F

    images, tgt_in, _, _ = _data(B=2, U=3, seed=11)
    model = _tiny("soft", seed=12)
    logits, alpha, cache = model.forward(images, tgt_in)
    R = np.random.default_rng(13).normal(size=logits.shape)
    grads = model.backward(R, cache).grads
    P = {k: torch.tensor(v, requires_grad=True) for k, v in model.params.items()}
    H = model.hidden_size
    cell = torch.nn.LSTMCell(model.embedding_dim + model.encoder.annotation_size, H).double()
    cell.load_state_dict({k[5:]: P[k].detach() for k in P if k.startswith("lstm.")})
    y = torch.from_numpy(images)
    for k, conv in enumerate((model.encoder.conv1, model.encoder.conv2), start=1):
        W, bias = P[f"conv{k}.weight"], P[f"conv{k}.bias"]
        y = F.conv2d(y, W, bias, stride=conv.stride, padding=conv.padding).relu()
    coords = torch.from_numpy(model.encoder.coords).expand(2, -1, -1)  # (B, L, 2)
    a = torch.cat([y.flatten(2).transpose(1, 2), coords], dim=2)  # (B, L, D)
    h = torch.tanh(F.linear(a.mean(1), P["init_h.weight"], P["init_h.bias"]))
    c = torch.tanh(F.linear(a.mean(1), P["init_c.weight"], P["init_c.bias"]))
    emb = F.embedding(torch.from_numpy(tgt_in), P["embed.weight"])  # (B, U, E)
    outs, alphas = [], []
    for t in range(tgt_in.shape[1]):
        q = F.linear(h, P["attn.weight_query"], P["attn.bias"])  # (B, A)
        e = torch.tanh(a @ P["attn.weight_key"].T + q[:, None]) @ P["attn.v"]  # (B, L)
        al = torch.softmax(e, dim=1)
        z = (al[:, :, None] * a).sum(1)  # (B, D)
        h, c = cell(torch.cat([emb[:, t], z], dim=1), (h, c))
        outs.append(F.linear(torch.cat([h, z], dim=1), P["out.weight"], P["out.bias"]))
        alphas.append(al)
    out = torch.stack(outs, dim=1)  # (B, U, V)
    (out * torch.from_numpy(R)).sum().backward()
    assert max_rel_error(logits, out.detach().numpy()) < 1e-6
    assert max_rel_error(alpha, torch.stack(alphas, 1).detach().numpy()) < 1e-6
    for name, p in P.items():
        twin = getattr(cell, name[5:]).grad if name.startswith("lstm.") else p.grad
        assert max_rel_error(grads[name], twin.numpy()) < 1e-6, name
