"""Packages whose names import their modules when first asked for (:mod:`pyplay._lazy`)."""

from __future__ import annotations

import ast
import importlib
import inspect

import pytest

from scripts import modules_imported

PACKAGES = ["pyplay.models", "pyplay.nn"]


def _type_checking_imports(package: str) -> dict[str, str]:
    """name -> module of the imports under ``if TYPE_CHECKING:`` in the package's source."""
    tree = ast.parse(inspect.getsource(importlib.import_module(package)))
    block = next(
        node
        for node in tree.body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    )
    return {
        alias.name: str(node.module)
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }


@pytest.mark.parametrize("package", PACKAGES)
def test_the_table_the_type_checkers_imports_and_all_name_the_same(package: str) -> None:
    module = importlib.import_module(package)
    assert _type_checking_imports(package) == dict(module.HOMES)
    assert sorted(module.__all__) == sorted(module.HOMES)
    assert set(module.HOMES) <= set(dir(module))


@pytest.mark.parametrize("package", PACKAGES)
def test_each_name_is_its_modules_own(package: str) -> None:
    module = importlib.import_module(package)
    for name, home in module.HOMES.items():
        assert getattr(module, name) is getattr(importlib.import_module(home), name)
        assert name in vars(module)  # kept: __getattr__ is not asked again


@pytest.mark.parametrize("package", PACKAGES)
def test_a_name_the_package_does_not_have_is_an_attribute_error(package: str) -> None:
    module = importlib.import_module(package)
    with pytest.raises(AttributeError, match=rf"module '{package}' has no attribute 'Nope'"):
        _ = module.Nope
    assert not hasattr(module, "Nope")


def test_one_model_imports_its_own_modules_only() -> None:
    """In a fresh interpreter: the first lesson's model imports no other model and no
    transformer or attention layer."""
    loaded = modules_imported(
        """
        from pyplay.models import SequenceModel
        from pyplay.nn import LSTM
        SequenceModel("lstm", input_kind="real", input_size=4, output_size=2, rng=0)
        """
    )
    assert {"pyplay.models.sequence", "pyplay.nn.lstm"} <= loaded
    others = {
        "pyplay.models.glimpse",
        "pyplay.models.transformer",
        "pyplay.models.memory",
        "pyplay.models.registry",
        "pyplay.nn.multihead",
        "pyplay.nn.attention",
        "pyplay.nn.conv2d",
    }
    assert not others & loaded, sorted(others & loaded)
