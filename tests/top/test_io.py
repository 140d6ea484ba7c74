"""Checkpoints: exact round trips, PyTorch state_dict interchange, refusal of bad files."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest

from pyplay.io import load, save
from pyplay.models import SequenceModel
from pyplay.optim import Adam


def _model() -> SequenceModel:
    return SequenceModel(
        "lstm", input_kind="tokens", input_size=7, output_size=7, hidden_size=5, num_layers=2, rng=0
    )


@pytest.mark.parametrize("target", ["path", "buffer"])
def test_round_trip_is_exact(tmp_path, target):
    model = _model()
    opt = Adam(model.params, lr=0.01)
    opt.step({k: np.ones_like(v) for k, v in model.params.items()})
    meta = {"model": model.config, "task": "charlm", "step": 1}
    file = tmp_path / "m.npz" if target == "path" else io.BytesIO()
    save(file, model.params, optimizer_state=opt.state_dict(), meta=meta)
    if target == "buffer":
        file = io.BytesIO(file.getvalue())
    ckpt = load(file)
    assert ckpt.meta == meta
    assert set(ckpt.params) == set(model.params)
    for k, v in model.params.items():
        assert ckpt.params[k].dtype == v.dtype
        np.testing.assert_array_equal(ckpt.params[k], v)
    fresh = Adam(_model().params, lr=0.5)
    fresh.load_state_dict(ckpt.optimizer_state)
    assert fresh.lr == 0.01 and fresh.step_count == 1


def test_pytorch_state_dict_interchange(tmp_path):
    torch = pytest.importorskip("torch")
    lstm = torch.nn.LSTM(4, 6, num_layers=2, bidirectional=True, batch_first=True)
    path = tmp_path / "torch.npz"
    np.savez(path, **{k: v.detach().numpy() for k, v in lstm.state_dict().items()})
    from pyplay.nn import LSTM

    ours = LSTM(4, 6, num_layers=2, bidirectional=True, rng=1)
    ckpt = load(path)
    assert set(ckpt.params) == set(ours.params)
    for k, v in ckpt.params.items():
        ours.params[k][...] = v
    x = np.random.default_rng(0).normal(size=(2, 3, 4)).astype(np.float32)
    out, _, _ = ours.forward(x)
    ref, _ = lstm(torch.from_numpy(x))
    np.testing.assert_allclose(out, ref.detach().numpy(), rtol=1e-5, atol=1e-6)
    # and back: pyplay's arrays load into a torch module by name
    buf = io.BytesIO()
    save(buf, ours.params)
    back = load(buf.getvalue())
    twin = torch.nn.LSTM(4, 6, num_layers=2, bidirectional=True, batch_first=True)
    twin.load_state_dict({k: torch.from_numpy(v) for k, v in back.params.items()})


def _npz_with_object_array() -> bytes:
    buf = io.BytesIO()
    np.save(buf, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("evil.npy", buf.getvalue())
    return out.getvalue()


def _good_bytes() -> bytes:
    buf = io.BytesIO()
    save(buf, {"w": np.ones(3)}, meta={"x": 1})
    return buf.getvalue()


@pytest.mark.parametrize(
    "data",
    [
        b"not a zip file at all",
        _good_bytes()[:50],
        b"PK\x03\x04" + b"\0" * 40,
        _npz_with_object_array(),
    ],
    ids=["text", "truncated", "broken-zip", "object-array"],
)
def test_bad_files_are_a_clear_value_error(data):
    with pytest.raises(ValueError, match="not a pyplay checkpoint"):
        load(data)


def test_bad_meta_and_reserved_names():
    buf = io.BytesIO()
    np.savez(buf, w=np.ones(2), __meta__=np.frombuffer(b"{not json", dtype=np.uint8))
    with pytest.raises(ValueError, match="bad settings"):
        load(buf.getvalue())
    with pytest.raises(ValueError, match="reserved"):
        save(io.BytesIO(), {"__meta__": np.ones(1)})
    with pytest.raises(ValueError, match="JSON"):
        save(io.BytesIO(), {"w": np.ones(1)}, meta={"f": object()})


def test_models_beside_the_main_one_round_trip_and_load_natively():
    from pyplay.io import load_model, model_checkpoint, save_model
    from pyplay.optim import Adam as _Adam

    main, other = (
        _model(),
        SequenceModel(
            "gru", input_kind="tokens", input_size=7, output_size=7, hidden_size=3, rng=1
        ),
    )
    opt = _Adam(other.params, lr=0.02)
    opt.step({k: np.ones_like(v) for k, v in other.params.items()})
    buf = io.BytesIO()
    save_model(buf, main, step=4, beside={"lstm": model_checkpoint(other, opt, step=7)})
    data = buf.getvalue()
    ckpt = load(data)
    assert set(ckpt.params) == set(main.params) and "beside" not in ckpt.meta  # kept apart
    part = ckpt.beside["lstm"]
    assert part.meta["step"] == 7 and part.meta["class"] == "SequenceModel"
    assert part.optimizer_state is not None and part.optimizer_state["step"] == 1
    for k, v in other.params.items():
        np.testing.assert_array_equal(part.params[k], v)
    assert load_model(data).config == main.config  # the main model, as before
    twin = load_model(data, beside="lstm")
    assert twin.config == other.config
    np.testing.assert_array_equal(twin.params["rnn.weight_hh_l0"], other.params["rnn.weight_hh_l0"])
    with pytest.raises(ValueError, match=r"no model beside the main one named 'gru'.*'lstm'"):
        load_model(data, beside="gru")


def test_bad_models_beside_are_refused():
    from pyplay.io import Checkpoint

    with pytest.raises(ValueError, match="reserved"):
        save(io.BytesIO(), {"beside/x/w": np.ones(1)})
    with pytest.raises(ValueError, match="identifiers"):
        save(io.BytesIO(), {"w": np.ones(1)}, beside={"a/b": Checkpoint({"w": np.ones(1)})})
    with pytest.raises(TypeError, match="must be a Checkpoint"):
        save(io.BytesIO(), {"w": np.ones(1)}, beside={"a": {"w": np.ones(1)}})  # type: ignore[dict-item]
    for arrays, meta in (
        ({"beside/a/w": np.ones(1)}, b"{}"),  # arrays without their description
        ({"beside/b/w": np.ones(1)}, b'{"beside": {"a": {}}}'),  # arrays of an unnamed one
        ({"w": np.ones(1)}, b'{"beside": [1]}'),  # a description that is not a mapping
    ):
        buf = io.BytesIO()
        np.savez(buf, **arrays, __meta__=np.frombuffer(meta, dtype=np.uint8))
        with pytest.raises(ValueError, match="not a pyplay checkpoint"):
            load(buf.getvalue())
