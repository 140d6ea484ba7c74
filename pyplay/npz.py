"""Reading a ``.npz`` archive without trusting it: the arrays :func:`pyplay.io.load` returns.

``np.load`` decides what a file is from its first bytes and, for anything it does not know,
tries pickle (refused with ``allow_pickle=False``, in words that invite the caller to allow it);
it allocates the shape an array's ``.npy`` header declares before reading a byte of the data,
so a file of a kilobyte can ask for gigabytes. This reader does the same job in three passes,
each refusing with a ``ValueError`` that says what the file is and what was expected:

1. **What the file is**, from its first bytes: a zip archive goes on; anything else is named
   (text, a PNG image, gzip data, a single ``.npy`` array, a pickle, unknown bytes).
2. **Every member's header**, before any array is read: the zip directory's sizes
   (:data:`~pyplay.limits.MAX_MEMBERS`, :data:`~pyplay.limits.MAX_UNPACKED_BYTES`), then for
   each member its encryption and compression, its ``.npy`` header (``read_magic`` and
   ``read_array_header_1_0`` / ``_2_0`` on the member's stream), a dtype of plain numbers
   (never Python objects, which only pickle reads), a shape of at most
   :data:`~pyplay.limits.MAX_ELEMENTS` numbers, and data bytes that the member can hold.
3. **The arrays**, each into an array of the checked size, from a stream of the member.

Nothing of a declared size is allocated before that size is checked, and pickle is never used.
"""

from __future__ import annotations

import math
import zipfile
import zlib
from dataclasses import dataclass
from typing import BinaryIO

import numpy as np

from pyplay.limits import MAX_ELEMENTS, MAX_MEMBERS, MAX_UNPACKED_BYTES

__all__ = ["EXPECTED", "identify", "read_npz"]

EXPECTED = "a NumPy .npz archive (a zip of .npy arrays, as pyplay.io.save writes)"
MAX_HEADER_BYTES = 10_000  # NumPy's own default for a .npy header
_CHUNK = 1 << 20  # bytes read at a time from a member
_SIGNATURES = (
    (b"\x93NUMPY", "a single NumPy array (.npy), not a named archive (.npz)"),
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"%PDF", "a PDF document"),
    (b"\x1f\x8b", "gzip-compressed data"),
    (b"BZh", "bzip2-compressed data"),
    (b"\xfd7zXZ\x00", "xz-compressed data"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
    (b"\x80", "a Python pickle (never read by pyplay)"),
)
_ZIP = (b"PK\x03\x04", b"PK\x05\x06")  # a zip's first member, or an empty zip
# everything a damaged zip or member stream raises (zlib: bad deflate data;
# NotImplementedError: a compression method Python lacks; RuntimeError: a password)
ZIP_ERRORS = (
    zipfile.BadZipFile,
    zlib.error,
    EOFError,
    OSError,
    KeyError,
    NotImplementedError,
    RuntimeError,
    OverflowError,
    ValueError,
)


class _Refused(ValueError):
    """A refusal worded here, passed on as it is (not as a damaged zip)."""


def identify(head: bytes) -> str:
    """What a file that starts with ``head`` is, in a few words ("a PNG image", "text")."""
    if not head:
        return "empty"
    for signature, kind in _SIGNATURES:
        if head.startswith(signature):
            return kind
    if head.startswith(_ZIP):
        return "a zip archive"
    for cut in range(4):  # the last character may be cut in the middle
        try:
            text = head[: len(head) - cut].decode("utf-8")
        except UnicodeDecodeError:
            continue
        if text and all(ch.isprintable() or ch in "\t\r\n\f" for ch in text):
            return "text"
        break
    return f"not a kind of file pyplay knows (it starts with bytes {head[:8].hex(' ')})"


@dataclass(frozen=True)
class _Header:
    """What one member's ``.npy`` header declares, once checked."""

    shape: tuple[int, ...]
    fortran_order: bool
    dtype: np.dtype
    offset: int  # bytes of the header in the member

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * self.dtype.itemsize


def _check_directory(members: list[zipfile.ZipInfo]) -> None:
    """Refuse an archive whose members unpack to more than the limits, before reading any."""
    unpacked = sum(member.file_size for member in members)  # as the zip directory declares
    if len(members) > MAX_MEMBERS or unpacked > MAX_UNPACKED_BYTES:
        raise _Refused(
            f"it unpacks to {unpacked:,} bytes in {len(members):,} arrays; at most "
            f"{MAX_UNPACKED_BYTES:,} bytes in {MAX_MEMBERS:,} arrays are read "
            "(pyplay.limits)"
        )


def _read_header(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> _Header:
    """The checked header of member ``info``; the member's data is not read."""
    name = info.filename
    if info.flag_bits & 0x1:
        raise _Refused(f"member {name!r} is encrypted; pyplay files are not")
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise _Refused(
            f"member {name!r} is compressed with zip method {info.compress_type}; "
            "pyplay reads stored or deflated members (as np.savez writes)"
        )
    with archive.open(info) as stream:
        try:
            version = np.lib.format.read_magic(stream)
        except ValueError:
            raise _Refused(f"member {name!r} is not a .npy array") from None
        if version == (1, 0):
            read = np.lib.format.read_array_header_1_0
        elif version == (2, 0):
            read = np.lib.format.read_array_header_2_0
        else:
            raise _Refused(
                f"member {name!r} is a .npy array of format {version}; pyplay reads 1.0 and 2.0"
            )
        try:
            shape, fortran_order, dtype = read(stream, max_header_size=MAX_HEADER_BYTES)
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError) as err:
            raise _Refused(
                f"member {name!r} has a .npy header that cannot be read (malformed, or longer "
                f"than {MAX_HEADER_BYTES:,} bytes: {type(err).__name__})"
            ) from None
        offset = stream.tell()
    if dtype.hasobject:
        raise _Refused(
            f"member {name!r} holds Python objects (dtype {dtype}), which only pickle reads; "
            "pyplay files hold numbers and never use pickle"
        )
    if dtype.kind not in "biuf" or dtype.fields is not None or dtype.subdtype is not None:
        raise _Refused(f"member {name!r} holds {dtype} values; pyplay files hold numbers")
    if any(d < 0 for d in shape):
        raise _Refused(f"member {name!r} declares the impossible shape {shape}")
    n = math.prod(shape)  # Python ints: exact whatever the header says
    if n > MAX_ELEMENTS:
        raise _Refused(
            f"member {name!r} declares shape {shape}, {n:,} numbers; at most "
            f"{MAX_ELEMENTS:,} are read in one array (pyplay.limits.MAX_ELEMENTS)"
        )
    header = _Header(tuple(shape), bool(fortran_order), dtype, offset)
    held = info.file_size - offset
    if header.nbytes > held:
        raise _Refused(
            f"member {name!r} declares shape {shape} of {dtype}, {header.nbytes:,} bytes, but "
            f"holds {max(held, 0):,} bytes of data"
        )
    return header


def _read_data(archive: zipfile.ZipFile, info: zipfile.ZipInfo, header: _Header) -> np.ndarray:
    """The array of member ``info``, read into an array of the size its header declared."""
    flat = np.empty(math.prod(header.shape), dtype=header.dtype)  # checked: at most the limit
    raw = flat.view(np.uint8)  # (nbytes,)
    with archive.open(info) as stream:
        stream.read(header.offset)
        done = 0
        while done < raw.size:
            chunk = stream.read(min(_CHUNK, raw.size - done))
            if not chunk:
                raise _Refused(
                    f"member {info.filename!r} ends after {done:,} of its {raw.size:,} bytes"
                )
            raw[done : done + len(chunk)] = np.frombuffer(chunk, dtype=np.uint8)
            done += len(chunk)
    if header.fortran_order:
        return flat.reshape(header.shape[::-1]).transpose()
    return flat.reshape(header.shape)


def read_npz(source: BinaryIO) -> dict[str, np.ndarray]:
    """Every array of the ``.npz`` archive ``source`` (a seekable binary stream), by name
    (the member's name without ``.npy``), after every member's header is checked.

    Raises
    ------
    ValueError
        Saying what the file is and what was wrong with it: not an archive (and what it is
        instead), a damaged or encrypted zip, a member that is not a ``.npy`` array of numbers,
        one whose declared shape exceeds :data:`~pyplay.limits.MAX_ELEMENTS` or the bytes it
        holds, or an archive that unpacks to more than the limits.
    """
    start = source.tell()
    head = source.read(512)
    source.seek(start)
    if not isinstance(head, bytes | bytearray):
        raise TypeError(
            "file must be a path, bytes or a file opened in binary mode ('rb'), got a stream "
            f"that reads {type(head).__name__}"
        )
    if not head.startswith(_ZIP):
        raise _Refused(f"it is {identify(head)}; expected {EXPECTED}")
    try:
        with zipfile.ZipFile(source) as archive:
            members = archive.infolist()
            _check_directory(members)
            headers: dict[str, tuple[zipfile.ZipInfo, _Header]] = {}
            for info in members:
                name = info.filename.removesuffix(".npy")
                if not info.filename.endswith(".npy"):
                    raise _Refused(f"member {info.filename!r} is not a .npy array")
                if name in headers:
                    raise _Refused(f"it holds two arrays named {name!r}")
                headers[name] = (info, _read_header(archive, info))
            return {name: _read_data(archive, *held) for name, held in headers.items()}
    except _Refused:
        raise
    except ZIP_ERRORS as err:
        raise ValueError(f"it is a damaged zip archive ({err}); expected {EXPECTED}") from err
