"""Issue 21, files: every size checked before it is read, every loaded value checked, and
saving that never writes what loading would refuse nor changes the path it was given.

Each test is named after the case of the issue it reproduces."""

from __future__ import annotations

import io
import time
import zipfile

import numpy as np
import pytest

from pyplay.io import load, load_model, save, save_model
from pyplay.limits import (
    MAX_ELEMENTS,
    MAX_JSON_DEPTH,
    MAX_META_BYTES,
    MAX_UNPACKED_BYTES,
    check_elements,
    json_depth,
)
from pyplay.models import SequenceModel
from pyplay.optim import SGD, Adam, RMSprop


def _model() -> SequenceModel:
    return SequenceModel(
        input_size=2, output_size=1, hidden_size=4, cell="lstm", input_kind="real", rng=0
    )


def _zip_bomb(unpacked: int) -> bytes:
    """A valid .npz whose one member, a .npy of zeros, deflates ~1000:1 to ``unpacked``
    bytes; written in chunks, so making it never holds it in memory."""
    buffer = io.BytesIO()
    header = io.BytesIO()
    n = (unpacked - 128) // 8
    np.lib.format.write_array_header_1_0(
        header, {"descr": "<f8", "fortran_order": False, "shape": (n,)}
    )
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        with archive.open("w.npy", "w", force_zip64=True) as member:
            member.write(header.getvalue())
            chunk = bytes(1 << 20)
            left = n * 8
            while left > 0:
                member.write(chunk[: min(left, len(chunk))])
                left -= len(chunk)
    return buffer.getvalue()


@pytest.mark.slow
def test_deflate_bomb_is_refused_before_unpacking():
    bomb = _zip_bomb(MAX_UNPACKED_BYTES + (8 << 20))
    assert len(bomb) < 2_000_000  # a small file...
    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"it unpacks to [\d,]+ bytes"):
        load(bomb)  # ...refused from its directory, nothing decompressed
    assert time.perf_counter() - start < 2.0


def test_meta_nested_200k_levels_is_a_clear_error_not_a_recursion_error():
    buffer = io.BytesIO()
    save(buffer, {"w": np.zeros(2)})
    text = "[" * 200_000 + "]" * 200_000
    with zipfile.ZipFile(io.BytesIO(buffer.getvalue())) as source:
        members = {name: source.read(name) for name in source.namelist()}
    meta = io.BytesIO()
    np.save(meta, np.frombuffer(text.encode(), dtype=np.uint8))
    members["__meta__.npy"] = meta.getvalue()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    with pytest.raises(ValueError, match=r"nested 200,000 levels deep; at most 64"):
        load(out.getvalue())


def test_meta_too_long_is_refused():
    buffer = io.BytesIO()
    save(buffer, {"w": np.zeros(2)}, meta={"note": "x" * (MAX_META_BYTES + 1)})
    with pytest.raises(ValueError, match="settings must be at most 1,000,000 bytes"):
        load(buffer.getvalue())


def test_json_depth_skips_strings_and_counts_nesting():
    assert json_depth('{"a": [1, {"b": "[[[{{{"}]}') == 3
    assert json_depth('"\\"[" ') == 0
    assert json_depth("[]") == 1
    assert MAX_JSON_DEPTH >= 8  # the files pyplay writes nest about 5 levels


def test_save_model_refuses_nan_weights(tmp_path):
    model = _model()
    model.params["head.weight"][0, 0] = np.nan
    with pytest.raises(ValueError, match=r"'head.weight' holds NaN or infinite values"):
        save_model(tmp_path / "m.npz", model)
    assert not (tmp_path / "m.npz").exists()


def test_save_model_writes_exactly_the_path_it_is_given(tmp_path):
    model = _model()
    save_model(str(tmp_path / "x"), model)
    assert (tmp_path / "x").is_file()
    assert not (tmp_path / "x.npz").exists()
    again = load_model(tmp_path / "x")
    for name, value in model.params.items():
        np.testing.assert_array_equal(again.params[name], value)


def test_file_larger_than_the_limit_is_not_read(tmp_path, monkeypatch):
    import pyplay.io

    monkeypatch.setattr(pyplay.io, "MAX_FILE_BYTES", 100)
    buffer = io.BytesIO()
    save(buffer, {"w": np.zeros(50)})
    with pytest.raises(ValueError, match=r"is not read: it is [\d,]+ bytes, at most 100"):
        load(buffer.getvalue())


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("lr", float("nan"), "lr must be finite"),
        ("lr", -0.5, "lr must be > 0.0"),
        ("step", -3, "step must be a whole number from 0"),
        ("step", 2.5, "step must be a whole number from 0"),
        ("exp_avg_sq.head.weight", -1.0, r"exp_avg_sq.head.weight must be >= 0"),
        ("exp_avg.head.weight", float("nan"), "exp_avg.head.weight must hold finite numbers"),
    ],
)
def test_optimizer_state_from_a_file_is_checked_all_or_nothing(key, value, message):
    model = _model()
    opt = Adam(model.params, lr=0.02)
    good = opt.state_dict()
    state = dict(good)
    if key in ("lr", "step"):
        state[key] = value
    else:
        state[key] = np.full_like(good[key], value)
    state["exp_avg.rnn.weight_hh_l0"] = np.ones_like(good["exp_avg.rnn.weight_hh_l0"])
    with pytest.raises((ValueError, TypeError), match=message):
        opt.load_state_dict(state)
    after = opt.state_dict()  # nothing was taken from the refused state
    assert after["lr"] == 0.02 and after["step"] == 0
    assert not after["exp_avg.rnn.weight_hh_l0"].any()


def test_every_optimizer_round_trips_its_checked_state():
    for cls in (SGD, Adam, RMSprop):
        model = _model()
        opt = cls(model.params, lr=0.1)
        grads = {k: np.ones_like(v) for k, v in model.params.items()}
        opt.step(grads)
        state = opt.state_dict()
        fresh = cls(_model().params, lr=0.5)
        fresh.load_state_dict(state)
        assert fresh.lr == 0.1 and fresh.step_count == 1


def test_check_elements_names_the_array_and_the_limit():
    assert check_elements("x", (3, 4)) == (3, 4)
    with pytest.raises(ValueError, match=r"LSTM weight_ih_l0 would be 120,000 x 30,000"):
        check_elements("LSTM weight_ih_l0", (120_000, 30_000))
    with pytest.raises(ValueError, match=f"at most {MAX_ELEMENTS:,} are allowed"):
        check_elements("table", (10**9, 10**9), np.float64)
