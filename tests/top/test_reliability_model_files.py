"""Issue 34, model files: every member's ``.npy`` header is read and checked before anything
is allocated, every way a file can be wrong is one ``ValueError`` that says what the file is
(never NumPy's hint to allow pickle, never another exception), and saving refuses arrays that
only pickle could write.

Each test is named after the case of the issue it reproduces."""

from __future__ import annotations

import gzip
import io
import json
import re
import tracemalloc
import zipfile
from collections.abc import Callable

import numpy as np
import pytest

from pyplay.io import load, load_model, save, save_model
from pyplay.limits import MAX_ELEMENTS
from pyplay.models import SequenceModel


def _model_file() -> bytes:
    model = SequenceModel(
        input_size=2, output_size=1, hidden_size=4, cell="lstm", input_kind="real", rng=0
    )
    buffer = io.BytesIO()
    save_model(buffer, model)
    return buffer.getvalue()


def _npy_header(shape: tuple[int, ...], descr: str = "<f4") -> bytes:
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": descr, "fortran_order": False, "shape": shape}
    )
    return header.getvalue()


def _rewrite(member: str, data: bytes) -> bytes:
    """The model file with ``member`` replaced by the raw bytes ``data``."""
    source = zipfile.ZipFile(io.BytesIO(_model_file()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for info in source.infolist():
            body = data if info.filename == member else source.read(info.filename)
            archive.writestr(info.filename, body)
    return out.getvalue()


def _declaring(shape: tuple[int, ...], descr: str = "<f4") -> bytes:
    """A valid model whose ``rnn.weight_ih_l0.npy`` header declares ``shape``, followed by 16
    bytes of data (the issue's 1.4 KB file asked for 1.5 GiB)."""
    return _rewrite("rnn.weight_ih_l0.npy", _npy_header(shape, descr) + bytes(16))


def _peak_bytes(call: Callable[[], object]) -> tuple[int, BaseException | None]:
    """The peak of memory traced while ``call`` runs (NumPy reports its arrays' data to
    tracemalloc), and what it raised."""
    tracemalloc.start()
    raised: BaseException | None = None
    try:
        call()
    except BaseException as err:  # the caller judges what was raised
        raised = err
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return peak, raised


def test_header_of_402653184_numbers_is_refused_before_allocation():
    data = _declaring((402653184,))
    assert len(data) < 4000
    peak, raised = _peak_bytes(lambda: load_model(data))
    assert type(raised) is ValueError
    message = str(raised)
    assert "'rnn.weight_ih_l0.npy'" in message and "(402653184,)" in message
    assert f"{MAX_ELEMENTS:,}" in message
    assert peak < 8 * 2**20, f"loading took {peak / 2**20:.0f} MiB"


def test_header_of_10_to_the_12_numbers_is_a_value_error_not_a_memory_error():
    with pytest.raises(ValueError, match=r"'rnn\.weight_ih_l0\.npy' declares shape \(1000000,"):
        load_model(_declaring((1_000_000, 1_000_000), "<f8"))


def test_header_larger_than_its_data_is_refused_before_allocation():
    """Under the element limit (60,000,000 float64: 458 MiB), but the member holds 16 bytes."""
    peak, raised = _peak_bytes(lambda: load(_declaring((60_000_000,), "<f8")))
    assert type(raised) is ValueError
    assert "declares shape (60000000,) of float64, 480,000,000 bytes, but holds 16" in str(raised)
    assert peak < 8 * 2**20, f"loading took {peak / 2**20:.0f} MiB"


def _encrypted_zip() -> bytes:
    """A zip whose one member is flagged encrypted (bit 0 of the general-purpose flags, in the
    local header and the central directory), as a password-protected zip is."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("w.npy", _npy_header((2,), "<f8") + bytes(16))
    data = bytearray(out.getvalue())
    local, central = data.find(b"PK\x03\x04"), data.find(b"PK\x01\x02")
    data[local + 6] |= 1
    data[central + 8] |= 1
    return bytes(data)


def _plain_npy() -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, np.zeros(3))
    return buffer.getvalue()


def _object_member() -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, w=np.array([{"a": 1}, None], dtype=object))  # written with pickle
    return buffer.getvalue()


def _settings(text: str) -> bytes:
    meta = np.frombuffer(text.encode(), dtype=np.uint8)
    buffer = io.BytesIO()
    np.save(buffer, meta)
    return _rewrite("__meta__.npy", buffer.getvalue())


def _long_header() -> bytes:
    header = {"descr": "<f8", "fortran_order": False, "shape": (2,), "x": "y" * 20_000}
    return _rewrite("head.bias.npy", _npy_header_raw(header) + bytes(16))


def _npy_header_raw(header: dict[str, object]) -> bytes:
    text = repr(header).encode("latin1")
    text += b" " * (-(len(text) + 13) % 64) + b"\n"
    return b"\x93NUMPY\x02\x00" + len(text).to_bytes(4, "little") + text


BAD_FILES = {
    "text": (lambda: b"step,loss\n1,0.5\n" * 20, "it is text"),
    "png": (lambda: b"\x89PNG\r\n\x1a\n" + bytes(200), "it is a PNG image"),
    "gzip": (lambda: gzip.compress(_model_file()), "it is gzip-compressed data"),
    "random": (
        lambda: np.random.default_rng(5).bytes(2000),
        "it is not a kind of file pyplay knows",
    ),
    "npy": (_plain_npy, r"it is a single NumPy array \(\.npy\), not a named archive"),
    "encrypted": (_encrypted_zip, "member 'w.npy' is encrypted"),
    "object-dtype": (_object_member, "member 'w.npy' holds Python objects"),
    "5000-digits": (
        lambda: _settings(json.dumps({"step": 1}).replace("1", "9" * 5000)),
        r"bad settings \(a number that is not read: Exceeds the limit",
    ),
    "nan-in-settings": (lambda: _settings('{"step": NaN}'), "bad settings"),
    "long-header": (_long_header, "'head.bias.npy' has a .npy header that cannot be read"),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_every_bad_file_is_one_value_error_saying_what_it_is(case):
    make, words = BAD_FILES[case]
    data = make()
    peak, raised = _peak_bytes(lambda: load_model(data))
    assert type(raised) is ValueError, f"{type(raised).__name__}: {raised}"
    message = str(raised)
    assert message.startswith("the file is not a pyplay checkpoint")
    assert "pickle=" not in message and "set_int_max_str_digits" not in message
    assert re.search(words, message), message
    assert peak < 8 * 2**20


def test_a_bad_file_on_disk_is_named_and_says_what_was_expected(tmp_path):
    path = tmp_path / "notes.npz"
    path.write_text("these are my notes, not a model\n")
    with pytest.raises(ValueError) as info:
        load(path)
    assert str(info.value) == (
        f"{str(path)!r} is not a pyplay checkpoint (.npz): it is text; expected a NumPy .npz "
        "archive (a zip of .npy arrays, as pyplay.io.save writes)"
    )


@pytest.mark.parametrize("where", ["params", "optimizer_state"])
def test_save_refuses_object_arrays_instead_of_pickling_them(where):
    arrays = {"w": np.array([1.0, None], dtype=object)}
    buffer = io.BytesIO()
    kwargs = {"params": arrays} if where == "params" else {"params": {}, "optimizer_state": arrays}
    with pytest.raises(ValueError, match=rf"{where}\['w'\] must be an array of numbers, got dtype"):
        save(buffer, **kwargs)
    assert buffer.getvalue() == b""  # nothing written
