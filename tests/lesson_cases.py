"""What the shared UI tests need to know of each lesson, declared beside the lesson's own tests.

Each folder ``tests/lessons/<key>/`` may hold a ``cases.py`` of plain data (settings, no
imports of the page), read here, so that a new lesson adds its cases in its own folder and
edits no shared test file. A ``cases.py`` defines any of the names of :data:`NAMES`, each a
dict keyed by lesson key: the folder's own lesson, or one of its sub-lessons (a lesson whose
``parent`` it is: ``tests/lessons/dynamic/`` speaks for ``lecture_rnn``). Unknown names, lesson
keys and folders, and a lesson declared twice, are errors at collection.
"""

from __future__ import annotations

import importlib.util
from functools import cache
from types import ModuleType
from typing import Any

from paths import TESTS
from pyplay.ui.lessons import LESSONS, SPECS

FOLDER = TESTS / "lessons"
NAMES = {  # name in cases.py: what it holds for each lesson (the test that reads it)
    "EXPORT": "case id -> the settings of a state whose 'show as code' script is run and must "
    "reproduce it (tests/ui/test_export.py)",
    "FILES": "(settings to train with, other settings to load the file into) for the lesson "
    "file round trips (tests/ui/test_ui_checkpoint.py)",
    "ADDRESS": "settings a real state carries through the page address and back "
    "(tests/ui/test_urlstate.py)",
    "STATUS": "the status line's CSS class, where it is not pyplay-<key>-status "
    "(tests/ui/test_ui_lesson_page.py)",
    "LIVE": "the columns of the look-inside data that change while the lesson trains, for a "
    "lesson with such a view (tests/browser/test_live_views.py)",
}


@cache
def _modules() -> dict[str, ModuleType]:
    """Every ``tests/lessons/<folder>/cases.py`` by folder, imported from its file (the module
    name is the folder's: every folder's file is called ``cases.py``)."""
    found = {}
    for path in sorted(FOLDER.glob("*/cases.py")):
        folder = path.parent.name
        if folder not in SPECS:
            raise ValueError(
                f"{path}: folder {folder!r} is no lesson key; expected one of {', '.join(SPECS)}"
            )
        spec = importlib.util.spec_from_file_location(f"lesson_cases_{folder}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        unknown = sorted(n for n in vars(module) if n.isupper() and n not in NAMES)
        if unknown:
            raise ValueError(f"{path}: unknown names {unknown}; expected some of {sorted(NAMES)}")
        found[folder] = module
    return found


def gather(name: str) -> dict[str, Any]:
    """``name`` (one of :data:`NAMES`) of every lesson that declares it, in the order of
    :data:`pyplay.ui.lessons.LESSONS`."""
    if name not in NAMES:
        raise ValueError(f"name must be one of {sorted(NAMES)}, got {name!r}")
    found: dict[str, Any] = {}
    for folder, module in _modules().items():
        for key, value in getattr(module, name, {}).items():
            if key not in SPECS or (key != folder and SPECS[key].parent != folder):
                raise ValueError(
                    f"tests/lessons/{folder}/cases.py: {name} declares {key!r}, "
                    f"which is neither {folder!r} nor one of its sub-lessons"
                )
            if key in found:
                raise ValueError(f"{name} of lesson {key!r} is declared twice")
            found[key] = value
    return {spec.key: found[spec.key] for spec in LESSONS if spec.key in found}
