"""The offline site's startup archive (``web/tools/sitebuild/startup_archive.py``): the first
render's pure-Python wheels and bytecode in one gzipped tar, and the worker's configuration
for it."""

from __future__ import annotations

import gzip
import io
import tarfile
import zipfile
from pathlib import Path

import pytest

from sitebuild.profile import offline_start
from sitebuild.startup_archive import ARCHIVE, is_pure, write_startup_archive


def wheel(folder: Path, name: str, files: dict[str, str], tag: str = "py3-none-any") -> str:
    file_name = f"{name}-1.0-{tag}.whl"
    with zipfile.ZipFile(folder / file_name, "w") as z:
        for path, text in files.items():
            z.writestr(path, text)
    return file_name


def entry(file_name: str, **more: object) -> dict:
    return {"file_name": file_name, "package_type": "package", "install_dir": "site", **more}


@pytest.fixture
def site(tmp_path: Path) -> tuple[Path, dict, Path]:
    """A served folder with two pure wheels, one with compiled code, and a bytecode zip."""
    lock = {
        "packages": {
            "alpha": entry(wheel(tmp_path, "alpha", {"alpha/__init__.py": "A = 1\n",
                                                     "alpha-1.0.dist-info/METADATA": "m"})),
            "beta": entry(wheel(tmp_path, "beta", {"beta.py": "B = 2\n"})),
            "native": entry(wheel(tmp_path, "native", {"native/core.so": "\0"},
                                  "cp312-cp312-pyodide_2024_0_wasm32"), shared_library=False),
            "unused": entry(wheel(tmp_path, "unused", {"unused.py": ""})),
        }
    }  # fmt: skip
    bytecode = tmp_path / "bytecode.zip"
    with zipfile.ZipFile(bytecode, "w") as z:
        z.writestr("alpha/__pycache__/__init__.cpython-312.pyc", b"pyc")
    return tmp_path, lock, bytecode


def test_pure_wheels_and_bytecode_in_one_archive(site):
    folder, lock, bytecode = site
    held = write_startup_archive(folder, lock, ["native", "beta", "alpha"], bytecode)
    assert held == ["beta", "alpha"]  # the startup order; not the wheel with compiled code
    packed = (folder / ARCHIVE).read_bytes()
    assert packed[:2] == b"\x1f\x8b"  # gzip, which the worker's DecompressionStream reads
    raw = gzip.decompress(packed)
    with tarfile.open(fileobj=io.BytesIO(raw), mode="r:") as tar:
        members = tar.getmembers()
        assert [m.name for m in members] == [  # the wheels in startup order, then bytecode
            "beta.py",
            "alpha/__init__.py",
            "alpha-1.0.dist-info/METADATA",
            "alpha/__pycache__/__init__.cpython-312.pyc",
        ]
        assert all(m.isreg() and m.mtime == 0 for m in members)  # what the worker writes
        extracted = tar.extractfile("alpha/__init__.py")
        assert extracted is not None and extracted.read() == b"A = 1\n"
    assert raw[257:262] == b"ustar"  # plain ustar headers: a name and a prefix field only
    write_startup_archive(folder, lock, ["native", "beta", "alpha"], bytecode)
    assert (folder / ARCHIVE).read_bytes() == packed, "the same bytes every build"


def test_a_file_in_two_packages_is_refused(site):
    folder, lock, bytecode = site
    lock["packages"]["gamma"] = entry(wheel(folder, "gamma", {"beta.py": "other\n"}))
    with pytest.raises(ValueError, match=r"beta\.py is in both beta and gamma"):
        write_startup_archive(folder, lock, ["beta", "gamma"], bytecode)


def test_what_counts_as_pure():
    assert is_pure(entry("a-1.0-py3-none-any.whl"))
    assert is_pure(entry("a-1.0-py2.py3-none-any.whl"))
    assert not is_pure(entry("numpy-2.0.2-cp312-cp312-pyodide_2024_0_wasm32.whl"))
    assert not is_pure(entry("a-1.0-py3-none-any.whl", package_type="shared_library"))
    assert not is_pure(entry("a-1.0-py3-none-any.whl", install_dir="dynlib"))
    assert not is_pure(entry("a-1.0-py3-none-any.whl", shared_library=True))


def test_the_worker_loads_only_what_the_archive_does_not_hold():
    prof = {
        "startup": ["numpy", "panel", "pyplay"],
        "later": [],
        "deferred": ["requests"],
        "seconds": {"runtime": 1.0, "packages": 1.0, "modules": 1.0, "app": 1.0},
    }
    config = offline_start(prof, ["panel", "pyplay"])
    assert config["startup"] == ["numpy"] and config["unpacked"] == ["panel", "pyplay"]
    assert config["bytecode"] == f"./pyodide/{ARCHIVE}"
    assert offline_start(prof)["startup"] == ["numpy", "panel", "pyplay"]
