"""Model files natively: ``save_model`` / ``load_model`` for every model class a lesson trains,
config validation, refusal of corrupt files, and continuing training with ``resume``."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pyplay.dynamic import narxnet
from pyplay.io import Checkpoint, load, load_model, resume, save, save_model
from pyplay.models import GlimpseNet, PointerNetwork, RecursiveNet, SequenceModel
from pyplay.models.captioner import Captioner
from pyplay.models.memory import AttendRNN, MemoryNet
from pyplay.models.ram import RecurrentAttention
from pyplay.models.registry import MODEL_CLASSES, describe_model, estimate_parameters
from pyplay.models.seq2seq import WIRINGS, EncoderDecoder
from pyplay.models.textbook import TextbookSeq2Seq, textbook_seq2seq, textbook_trace
from pyplay.models.transformer.lm import TransformerModel
from pyplay.models.transformer.seq2seq import TransformerSeq2Seq
from pyplay.tasks import make_task
from pyplay.train import Trainer

MODELS = {
    "lstm tokens": lambda: SequenceModel(
        "lstm", input_kind="tokens", input_size=12, output_size=12, hidden_size=8, num_layers=2
    ),
    "gru real bidirectional": lambda: SequenceModel(
        "gru", input_kind="real", input_size=3, output_size=2, hidden_size=6, bidirectional=True
    ),
    **{
        f"seq2seq {w}": (lambda w=w: EncoderDecoder(10, 11, 8, 12, cell="gru", wiring=w))
        for w in WIRINGS
    },
    "seq2seq location bidirectional": lambda: EncoderDecoder(
        10, 11, 8, 12, wiring="attention", score="location", bidirectional_encoder=True
    ),
    "seq2seq shared rnn": lambda: EncoderDecoder(
        10, 11, 8, 12, num_layers=2, wiring="bahdanau", share_rnn=True
    ),
    "seq2seq gnmt": lambda: EncoderDecoder(
        10, 11, 8, 12, num_layers=3, wiring="bahdanau", encoder="gnmt"
    ),
    "transformer": lambda: TransformerModel(12, 12, d_model=8, nhead=2, positional="learned"),
    "transformer real": lambda: TransformerModel(3, 1, "real", d_model=8, nhead=2, causal=False),
    "transformer seq2seq": lambda: TransformerSeq2Seq(10, 11, d_model=8, nhead=2, max_len=20),
    "memory net": lambda: MemoryNet(9, 9, hidden_size=8, memory_size=5, memory_width=4),
    "attend rnn": lambda: AttendRNN(9, 9, hidden_size=8),
    "narx": lambda: narxnet(range(1, 3), range(1, 3), (5,), rng=1),
    "seq2seq context rnn float64": lambda: EncoderDecoder(
        9, 9, 16, 16, cell="rnn", wiring="context", dtype=np.float64
    ),
    "seq2seq additive lstm float64": lambda: EncoderDecoder(
        9, 10, 16, 8, wiring="attention", score="additive", dtype=np.float64
    ),
    "textbook general": lambda: TextbookSeq2Seq(9, 10, "general", hidden_size=6, D=3),
    "textbook concat": lambda: textbook_seq2seq(9, 9, "concat", hidden_size=5, D=9),
    "recursive": lambda: RecursiveNet(12, 3, hidden_size=6, dtype=np.float64, rng=2),
    "pointer real": lambda: PointerNetwork(None, input_size=3, hidden_size=6, cell="gru", rng=4),
    "glimpse hard": lambda: GlimpseNet(9, 8, "hard", attn_size=4, hidden_size=5, rng=3),
    "captioner hard": lambda: Captioner(8, 12, "hard", 2, 3, 4, 6, 3, rng=3),
    "recurrent attention": lambda: RecurrentAttention(glimpse_size=3, scales=2, rng=3),
}


def _same(a: Any, b: Any) -> None:
    assert type(a) is type(b) and a.config == b.config
    assert set(a.params) == set(b.params)
    for name in a.params:
        np.testing.assert_array_equal(a.params[name], b.params[name])


@pytest.mark.parametrize("name", list(MODELS))
def test_load_model_rebuilds_every_class(name: str, tmp_path: Path):
    model = MODELS[name]()
    for p in model.params.values():
        p += 0.01  # not the initial values: they must come from the file
    path = tmp_path / "m.npz"
    save_model(path, model, step=3)
    loaded = load_model(path)
    _same(loaded, model)
    assert load(path).meta["step"] == 3
    entry = describe_model(model)
    assert json.loads(json.dumps(entry)) == entry  # plain JSON
    n = sum(p.size for p in model.params.values())
    assert n / 2 <= estimate_parameters(entry["class"], entry["config"]) <= 4 * n


def test_every_registered_class_has_config_and_from_config():
    from pyplay.models.registry import model_class

    for key in MODEL_CLASSES:
        cls = model_class(key)
        assert callable(cls.from_config) and isinstance(cls.config, property)


def test_an_old_recurrent_lesson_file_loads():
    model = MODELS["lstm tokens"]()
    buf = io.BytesIO()
    save(buf, model.params, meta={"model": model.config, "task": "copy", "step": 2})
    _same(load_model(buf.getvalue()), model)


@pytest.mark.parametrize(
    "meta, match",
    [
        ({}, "names no model"),
        ({"class": "os.system", "config": {}}, "must be one of SequenceModel"),
        ({"class": "SequenceModel", "config": "lstm"}, "config must be a mapping"),
        ({"class": "SequenceModel", "config": {"cell": "lstm"}}, "missing the keys"),
        ({"class": "EncoderDecoder", "config": {"colour": 1}}, "unknown keys \\['colour'\\]"),
        (
            {"class": "EncoderDecoder", "config": {"src_vocab_size": 10, "tgt_vocab_size": 10**6}},
            "describes about .* parameters but the file holds only",
        ),
        ({"class": "TransformerModel", "config": {"input_size": [1]}}, "non-negative integer"),
    ],
)
def test_bad_model_entries_are_clear_value_errors(meta: dict[str, Any], match: str):
    buf = io.BytesIO()
    save(buf, {"w": np.zeros(3)}, meta=meta)
    with pytest.raises(ValueError, match=match):
        load_model(buf.getvalue())


def test_arrays_that_do_not_fit_are_refused():
    model = MODELS["attend rnn"]()
    params = dict(model.params)
    params["head.bias"] = np.zeros(4, dtype=np.float32)
    buf = io.BytesIO()
    save(buf, params, meta=describe_model(model))
    with pytest.raises(ValueError, match=r"'head\.bias' must have shape"):
        load_model(buf.getvalue())
    del params["head.bias"]
    buf = io.BytesIO()
    save(buf, params, meta=describe_model(model))
    with pytest.raises(ValueError, match=r"missing \['head\.bias'\]"):
        load_model(buf.getvalue())


def test_random_bytes_are_not_a_model():
    with pytest.raises(ValueError, match="not a pyplay checkpoint"):
        load_model(np.random.default_rng(0).bytes(500))


def test_save_model_refuses_what_it_cannot_write():
    with pytest.raises(TypeError, match="one of pyplay's model classes"):
        save_model(io.BytesIO(), object())
    with pytest.raises(ValueError, match="reserved keys \\['class'\\]"):
        save_model(io.BytesIO(), MODELS["attend rnn"](), meta={"class": "x"})


def test_training_continues_natively_with_the_same_api(tmp_path: Path):
    task = make_task("copy", seq_len=6, rng=0)
    model = SequenceModel.for_task(task, "gru", hidden_size=8)
    trainer = Trainer(model, task, lr=0.01)
    list(trainer.run(5))
    path = tmp_path / "m.npz"
    save_model(path, model, optimizer=trainer.optimizer, step=trainer.step_count)

    again = load_model(path)
    trainer2 = Trainer(again, task, lr=0.01)
    resume(trainer2, load(path))
    assert trainer2.step_count == 5
    for key, value in trainer.optimizer.state_dict().items():
        np.testing.assert_array_equal(trainer2.optimizer.state_dict()[key], value)
    records = list(trainer2.run(3))
    assert [r.step for r in records] == [6, 7, 8] and all(r.status == "ok" for r in records)


@pytest.mark.parametrize("step", [-1, True, "3", 2.0, 10**13])
def test_a_step_count_that_is_not_whole_is_refused_and_nothing_changes(step: object):
    task = make_task("copy", seq_len=6, rng=0)
    model = SequenceModel.for_task(task, "gru", hidden_size=8)
    trainer = Trainer(model, task, lr=0.01)
    list(trainer.run(2))
    with pytest.raises(ValueError, match=r"^step must be a whole number from 0 to"):
        save_model(io.BytesIO(), model, optimizer=trainer.optimizer, step=step)  # type: ignore[arg-type]
    buf = io.BytesIO()
    save_model(buf, model, optimizer=trainer.optimizer, step=2)
    ckpt = load(buf.getvalue())
    bad = Checkpoint(ckpt.params, ckpt.optimizer_state, {**ckpt.meta, "step": step})
    fresh = Trainer(load_model(buf.getvalue()), task, lr=0.01)
    moments = fresh.optimizer.state_dict()
    with pytest.raises(ValueError, match="the checkpoint's step must be a whole number"):
        resume(fresh, bad)
    assert fresh.step_count == 0  # all or nothing: the optimiser state stays fresh too
    for key, value in moments.items():
        np.testing.assert_array_equal(fresh.optimizer.state_dict()[key], value)


@pytest.mark.parametrize("form", ["context", "dot", "general", "concat"])
def test_the_books_model_loads_as_itself_and_traces_the_same(form: str, tmp_path: Path):
    model = textbook_seq2seq(9, 9, form, hidden_size=6, D=2, rng=2)
    for p in model.params.values():
        p += 0.05
    path = tmp_path / f"{form}.npz"
    save_model(path, model)
    entry = load(path).meta
    assert entry["class"] == "TextbookSeq2Seq" and entry["config"]["form"] == form
    assert entry["config"]["D"] == 2
    loaded = load_model(path)
    assert type(loaded) is TextbookSeq2Seq and loaded.form == form and loaded.D == 2
    first = textbook_trace(model, [3, 4, 5], [6, 7])
    second = textbook_trace(loaded, [3, 4, 5], [6, 7])
    np.testing.assert_array_equal(first.logits, second.logits)
    assert [s.text for s in first.steps] == [s.text for s in second.steps]


@pytest.mark.parametrize(
    "config, match",
    [
        ({"form": "bahdanau"}, "form must be one of 'context', 'dot', 'general', 'concat', got"),
        ({"score": "dot"}, "unknown keys \\['score'\\]"),
        ({"wiring": "init"}, "unknown keys \\['wiring'\\]"),
        ({"hidden_size": "8"}, "config\\['hidden_size'\\] must be a non-negative integer"),
        ({"hidden_size": 7}, "must have shape"),
        ({"D": 0}, "D must be >= 1, got 0"),
    ],
)
def test_bad_textbook_configs_are_refused_naming_the_key(config: dict[str, Any], match: str):
    good = textbook_seq2seq(9, 9, "dot", hidden_size=6)
    buf = io.BytesIO()
    save(buf, good.params, meta={"class": "TextbookSeq2Seq", "config": {**good.config, **config}})
    with pytest.raises(ValueError, match=match):
        load_model(buf.getvalue())
