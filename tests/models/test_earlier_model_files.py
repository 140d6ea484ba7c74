"""Files of the textbook sub-lesson's earlier model (Luong's form, ``LuongSeq2Seq`` and the
earliest ``TextbookSeq2Seq``) load as the library's EncoderDecoder and compute what they did.

``tests/data/luong/`` holds files the removed ``pyplay.dynamic.luong_seq2seq`` saved (vocabularies
of 9, E = 5, H = 6, every weight shifted by 0.05; ``general_rnn`` trained two steps with its
optimiser's moments in the file) and ``expected.npz``: the logits and attention weights the
removed class computed on them for the source ``SRC`` and target ``TGT`` (its ``forward``) and
the logits of its trace through a delay line of encoder states (``trace_logits``, the same
numbers computed another way).
"""

from __future__ import annotations

import io

import numpy as np
import pytest

import paths
from pyplay.io import load, load_model, resume, save
from pyplay.models.registry import build_model
from pyplay.models.seq2seq import EncoderDecoder
from pyplay.models.seq2seq.earlier import earlier_entry
from pyplay.tasks.seq2seq import Reversal
from pyplay.train import Trainer

DATA = paths.DATA / "luong"
SRC, TGT = [3, 5, 7, 4], [6, 4, 7]
CASES = {  # file: (wiring, score, cell)
    "context_rnn": ("context", None, "rnn"),
    "dot_rnn": ("attention", "dot", "rnn"),
    "general_rnn": ("attention", "general", "rnn"),
    "concat_rnn": ("attention", "additive", "rnn"),
    "concat_lstm": ("attention", "additive", "lstm"),
    "general_gru": ("attention", "general", "gru"),
    "textbook_general_rnn": ("attention", "general", "rnn"),
}


@pytest.fixture(scope="module")
def expected() -> dict[str, np.ndarray]:
    with np.load(DATA / "expected.npz", allow_pickle=False) as f:
        return {k: f[k] for k in f.files}


@pytest.mark.parametrize("name", list(CASES))
def test_an_earlier_file_loads_as_the_encoder_decoder_with_the_same_outputs(
    name: str, expected: dict[str, np.ndarray]
) -> None:
    path = DATA / f"{name}.npz"
    meta = load(path).meta
    assert meta["class"] == ("TextbookSeq2Seq" if name.startswith("textbook") else "LuongSeq2Seq")
    model = load_model(path)
    wiring, score, cell = CASES[name]
    assert type(model) is EncoderDecoder
    assert (model.wiring, model.cell, model.num_layers) == (wiring, cell, 1)
    assert model.attn is None if score is None else model.attn.score == score
    assert model.dtype == np.float64 and not model.bidirectional_encoder
    assert (model.embedding_dim, model.hidden_size, model.src_vocab_size) == (5, 6, 9)
    logits, weights, _ = model.forward(np.array([SRC]), np.array([len(SRC)]), [[1, *TGT]])
    # the same outputs up to rounding: BLAS sums in an order of its own on each CPU (1 ulp
    # apart on an AMD EPYC, bit for bit where the file was made)
    np.testing.assert_allclose(logits[0], expected[f"{name}/logits"], rtol=1e-12, atol=0)
    np.testing.assert_allclose(logits[0], expected[f"{name}/trace_logits"], rtol=0, atol=1e-12)
    if score is None:
        assert weights is None and f"{name}/weights" not in expected
    else:
        np.testing.assert_allclose(weights[0], expected[f"{name}/weights"], rtol=1e-12, atol=0)


def test_an_earlier_file_resumes_training_with_its_optimiser_state() -> None:
    path = DATA / "general_rnn.npz"
    ckpt = load(path)
    assert ckpt.meta["step"] == 2 and ckpt.optimizer_state
    trainer = Trainer(load_model(path), Reversal(n_symbols=6, min_len=2, max_len=4, rng=0), lr=0.01)
    resume(trainer, ckpt)
    assert trainer.step_count == 2
    state = trainer.optimizer.state_dict()
    for key, value in ckpt.optimizer_state.items():
        np.testing.assert_array_equal(state[key], value)
    records = list(trainer.run(2))
    assert [r.step for r in records] == [3, 4] and all(r.status == "ok" for r in records)


def test_the_saved_again_model_is_an_encoder_decoder_file() -> None:
    from pyplay.io import save_model

    model = load_model(DATA / "dot_rnn.npz")
    buf = io.BytesIO()
    save_model(buf, model)
    assert load(buf.getvalue()).meta["class"] == "EncoderDecoder"
    again = load_model(buf.getvalue())
    assert again.config == model.config
    for k, v in model.params.items():
        np.testing.assert_array_equal(again.params[k], v)


def test_other_entries_pass_unchanged() -> None:
    for entry in (
        {"class": "TextbookSeq2Seq", "config": {"form": "dot", "hidden_size": 6, "D": 2}},
        {"class": "EncoderDecoder", "config": {"src_vocab_size": 9}},
        {"class": "LDDN", "config": {}},
        "not an entry",
    ):
        assert earlier_entry(entry) is entry


@pytest.mark.parametrize(
    "config, match",
    [
        ({"form": "bahdanau"}, "form must be one of 'context', 'dot', 'general', 'concat', got"),
        ({"wiring": "init"}, r"config of LuongSeq2Seq has unknown keys \['wiring'\]"),
        ({"src_vocab_size": None}, r"config of LuongSeq2Seq is missing the keys"),
        ({"hidden_size": 7}, "must have shape"),
        ({"cell": "tcn"}, "cell must be one of"),
    ],
)
def test_a_bad_earlier_config_is_refused_naming_the_key(config: dict, match: str) -> None:
    ckpt = load(DATA / "dot_rnn.npz")
    bad = {**ckpt.meta["config"], **config}
    bad = {k: v for k, v in bad.items() if v is not None}
    buf = io.BytesIO()
    save(buf, ckpt.params, meta={"class": "LuongSeq2Seq", "config": bad})
    with pytest.raises(ValueError, match=match):
        load_model(buf.getvalue())
    with pytest.raises(ValueError, match=match):
        build_model({"class": "LuongSeq2Seq", "config": bad}, ckpt.params)
