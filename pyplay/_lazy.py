"""A package whose names import their modules when first asked for (PEP 562).

``import pyplay.models`` used to import every model (and with them every layer of
:mod:`pyplay.nn`): about 80 ms natively and three times that in the page's Pyodide, on the
path from a cold open to the first lesson's first step, which needs one model class. A package
declares where each of its names lives; :func:`lazy_names` gives it the module-level
``__getattr__`` and ``__dir__`` that import a name's module on first use and keep the name
(so ``from pyplay.models import SequenceModel`` imports :mod:`pyplay.models.sequence` only).

Type checkers do not run ``__getattr__``: each package also imports its names under
``typing.TYPE_CHECKING``, and a test checks that those imports and the table agree
(``tests/top/test_lazy_packages.py``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(
    package: str, homes: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of the package ``package``.

    Parameters
    ----------
    package : str
        The package's name (its ``__name__``), for the error of a name it does not have.
    homes : Mapping[str, str]
        Each public name -> the module that defines it (imported when the name is first
        asked for).
    namespace : dict
        The package's ``globals()``: a name once imported is kept there, so
        ``__getattr__`` is not asked for it again.

    Returns
    -------
    (getattr, dir)
        ``getattr(name)`` raises ``AttributeError`` for a name that is neither in ``homes``
        nor in the package; ``dir()`` lists the package's names and those of ``homes``.
    """

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *homes})

    return __getattr__, __dir__
