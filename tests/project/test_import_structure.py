"""The import structure of ``pyplay`` (issue 37), read from the source with :mod:`ast`: no module
imports itself back through a chain of imports (imports inside functions count: a cycle there is
one in the design, even when it does not fail at import time), and the core (all but the page,
``pyplay/ui``, and the benchmarks, ``pyplay/bench``) imports neither the page nor its
libraries, so it runs without Panel, Bokeh or param."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

from paths import ROOT

PACKAGE = ROOT / "pyplay"
NOT_CORE = ("pyplay.ui", "pyplay.bench")
PAGE_ONLY = ("panel", "bokeh", "param", "pyplay.ui")


def _modules() -> dict[str, tuple[Path, bool]]:
    """Every module of the package by dotted name, with its file and whether it is a package."""
    found: dict[str, tuple[Path, bool]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


MODULES = _modules()


@functools.cache
def _imported(module: str) -> tuple[tuple[str, int], ...]:
    """What ``module`` imports, anywhere in its file: ``(absolute name, line)``; a name
    imported from a package is the submodule when there is one of that name. Read once for
    the module's tests (each of four parsed every file of the package: 1-2 s each)."""
    path, is_package = MODULES[module]
    names: list[tuple[str, int]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the module's own package upwards
                package = module.split(".")[: None if is_package else -1]
                package = package[: len(package) - node.level + 1]
                base = ".".join([*package, *([node.module] if node.module else [])])
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                names.append((sub if sub in MODULES else base, node.lineno))
    return tuple(names)


def _within(name: str) -> str | None:
    """The module of this package that ``name`` is, or lies in (None outside the package)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for module in MODULES:
        targets = {_within(name) for name, _ in _imported(module)}
        graph[module] = {t for t in targets if t is not None and t != module}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected parts of more than one module (Tarjan's algorithm, iterative),
    each as a closed path through its modules."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    parts: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                part: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    part.append(member)
                    if member == node:
                        break
                if len(part) > 1:
                    parts.append(_closed_path(graph, set(part)))
    return sorted(parts)


def _closed_path(graph: dict[str, set[str]], part: set[str]) -> list[str]:
    """A shortest cycle through the part's first module, for the message."""
    first = min(part)
    paths = {first: [first]}
    frontier = [first]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(graph[node] & part):
                if child == first:
                    return [*paths[node], first]
                if child not in paths:
                    paths[child] = [*paths[node], child]
                    following.append(child)
        frontier = following
    raise AssertionError(f"{sorted(part)} is not strongly connected")


def test_the_reader_finds_modules_imports_and_cycles() -> None:
    assert {"pyplay", "pyplay.train", "pyplay.models", "pyplay.ui.app"} <= set(MODULES)
    graph = _graph()
    assert {"pyplay._checks", "pyplay.tasks.pairs"} <= graph["pyplay.tasks.hull"]
    assert "pyplay.tasks.pairs" in graph["pyplay.models.seq2seq.encoder_decoder"]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b"}, "b": set(), "c": set()}) == []
    assert cycles({"a": {"b", "d"}, "b": {"a"}, "c": {"d"}, "d": {"c"}}) == [
        ["a", "b", "a"],
        ["c", "d", "c"],
    ]
    # one import of a model from a task's module would close a circle through the two packages
    model, task = "pyplay.models.seq2seq.encoder_decoder", "pyplay.tasks.pairs"
    graph[task] = graph[task] | {model}
    assert cycles(graph) == [[model, task, model]]


def test_no_module_of_pyplay_imports_itself_back() -> None:
    found = cycles(_graph())
    assert not found, "import cycles: " + "; ".join(" -> ".join(c) for c in found)


def test_the_core_imports_neither_the_page_nor_its_libraries() -> None:
    upward = [
        f"{MODULES[module][0].relative_to(ROOT)}:{line} imports {name}"
        for module in MODULES
        if not any(module == p or module.startswith(f"{p}.") for p in NOT_CORE)
        for name, line in _imported(module)
        if any(name == p or name.startswith(f"{p}.") for p in PAGE_ONLY)
    ]
    assert not upward, "\n".join(upward)


def test_the_data_sits_below_the_decoders_and_the_models() -> None:
    """The arrows of issue 37 that ran back up: a task imported a decoder (the CTC task's loss
    and best path, while a decoder module scored pair tasks) and a model (the tree tasks' trees).
    Decoders import no task, tasks no model."""
    graph = _graph()
    below = {"pyplay.decode": ("pyplay.tasks",), "pyplay.tasks": ("pyplay.models",)}
    upward = [
        f"{module} imports {target}"
        for part, above in below.items()
        for module in MODULES
        if module == part or module.startswith(f"{part}.")
        for target in sorted(graph[module])
        if target.startswith(above)
    ]
    assert not upward, "\n".join(upward)
