"""The objectives' table (:mod:`pyplay.objectives.table`): every kind a model class declares has
an entry, each entry builds the objective of its kind and refuses the options that do not fit,
and the package imports nothing above it."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pyplay.dynamic
import pyplay.models
import pyplay.objectives
from pyplay.dynamic import narxnet, preparets
from pyplay.models import EncoderDecoder, GlimpseNet, PointerNetwork, RecursiveNet, SequenceModel
from pyplay.models.captioner import Captioner
from pyplay.models.contract import OBJECTIVES
from pyplay.models.ram import RecurrentAttention
from pyplay.models.registry import REGISTERED
from pyplay.objectives import (
    FACTORIES,
    CaptionObjective,
    CTCObjective,
    GlimpseObjective,
    LDDNObjective,
    PointerObjective,
    RamObjective,
    Seq2SeqObjective,
    SequenceObjective,
    TreeObjective,
    Windows,
    make_objective,
)
from pyplay.tasks import make_task
from pyplay.tasks.cluttered import ClutteredGlyphs
from pyplay.tasks.ctc_frames import CTCFrames
from pyplay.tasks.glimpse import MarkedSymbol
from pyplay.tasks.scenes import CaptionedScenes
from pyplay.tasks.seq2seq import Reversal, Sorting
from pyplay.tasks.trees import ExpressionTrees

NOT_A_MODEL = "model must be a pyplay SequenceModel, TransformerModel, MemoryNet, AttendRNN or Enc"


def _declared() -> dict[type, str]:
    """Every class of :mod:`pyplay.models` and :mod:`pyplay.dynamic` that declares an
    ``objective`` (itself, or through the base it derives from), with that kind."""
    found: dict[type, str] = {}
    for package in (pyplay.models, pyplay.dynamic):
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            module = importlib.import_module(info.name)
            for _, cls in inspect.getmembers(module, inspect.isclass):
                kind = getattr(cls, "objective", None)
                if cls.__module__ == module.__name__ and isinstance(kind, str):
                    found[cls] = kind
    return found


def test_the_table_has_an_entry_for_every_declared_objective() -> None:
    declared = _declared()
    assert {Captioner, RecurrentAttention, SequenceModel, PointerNetwork} <= set(declared)
    missing = {cls.__name__: kind for cls, kind in declared.items() if kind not in FACTORIES}
    assert not missing, f"model classes whose objective has no entry in FACTORIES: {missing}"
    assert all(cls.objective in FACTORIES for cls in REGISTERED)
    assert set(FACTORIES) == set(OBJECTIVES)  # the contract names exactly the table's kinds


def _windows_and_net() -> tuple[Any, Any]:
    rng = np.random.default_rng(0)
    u = rng.standard_normal((4, 8, 1))
    y = np.tanh(u.cumsum(axis=1))  # (4, 8, 1)
    net = narxnet((0, 1), (1, 2), (4,), rng=1)
    pr = preparets(net, u, y)
    return net, Windows(pr.p, pr.targets, p0=pr.p0, dtype=net.dtype, rng=0)


def _per_step() -> tuple[Any, Any]:
    task = make_task("adding", seq_len=5, rng=0)
    return SequenceModel.for_task(task, "gru", hidden_size=4, rng=0), task


def _ctc() -> tuple[Any, Any]:
    task = CTCFrames(rng=0)
    return SequenceModel.for_task(task, "gru", hidden_size=4, rng=0), task


def _seq2seq() -> tuple[Any, Any]:
    task = Reversal(rng=0)
    V_s, V_t = len(task.src_vocab), len(task.tgt_vocab)
    return EncoderDecoder(V_s, V_t, embedding_dim=4, hidden_size=5, rng=0), task


def _pointer() -> tuple[Any, Any]:
    task = Sorting(rng=0)
    return PointerNetwork(len(task.src_vocab), embedding_dim=4, hidden_size=5, rng=0), task


def _tree() -> tuple[Any, Any]:
    task = ExpressionTrees(rng=0)
    return RecursiveNet(len(task.vocab), task.num_classes, hidden_size=5, rng=0), task


def _glimpse() -> tuple[Any, Any]:
    task = MarkedSymbol(rng=0)
    model = GlimpseNet(task.input_size, task.num_classes, "hard", attn_size=3, hidden_size=4)
    return model, task


def _ram() -> tuple[Any, Any]:
    return RecurrentAttention(rng=0), ClutteredGlyphs(rng=0)


def _caption() -> tuple[Any, Any]:
    task = CaptionedScenes(min_shapes=1, max_shapes=1, rng=0)
    return Captioner(task.vocab_size, attention="soft", rng=0), task


CASES: dict[str, tuple[Callable[[], tuple[Any, Any]], type]] = {
    "per_step": (_per_step, SequenceObjective),
    "ctc": (_ctc, CTCObjective),
    "seq2seq": (_seq2seq, Seq2SeqObjective),
    "pointer": (_pointer, PointerObjective),
    "lddn": (_windows_and_net, LDDNObjective),
    "tree": (_tree, TreeObjective),
    "glimpse": (_glimpse, GlimpseObjective),
    "ram": (_ram, RamObjective),
    "caption": (_caption, CaptionObjective),
}


def test_every_kind_of_the_table_has_a_case_here() -> None:
    assert set(FACTORIES) <= set(CASES)


@pytest.mark.parametrize("case", list(CASES))
def test_each_entry_builds_its_objective_which_steps_and_evaluates(case: str) -> None:
    build, expected = CASES[case]
    model, task = build()
    objective = make_objective(model, task, False, 0.0, False, 0)
    assert type(objective) is expected
    assert objective.tbptt is False and objective.carry is None
    loss, grads, metrics = objective.step(task.batch(4))
    assert np.isfinite(loss) and set(grads) == set(model.params)
    assert all(grads[k].shape == v.shape for k, v in model.params.items())
    assert all(isinstance(v, float) for v in metrics.values())
    objective.accept()
    assert "loss" in objective.evaluate(task, 4)


@pytest.mark.parametrize("case", ["pointer", "tree", "glimpse", "ram", "caption"])
@pytest.mark.parametrize(
    "options", [(True, 0.0, False), (False, 0.5, False), (False, 0.0, True)], ids=str
)
def test_a_kind_that_takes_no_option_refuses_each_as_before(
    case: str, options: tuple[bool, float, bool]
) -> None:
    model, task = CASES[case][0]()
    with pytest.raises(TypeError, match=f"{NOT_A_MODEL}.* got {type(model).__name__}$"):
        make_objective(model, task, *options, 0)


def test_a_model_without_a_kind_of_the_table_is_refused() -> None:
    class Nameless:
        objective = "nonsense"

    class Unhashable:  # not a str: no entry, whatever it holds
        objective = ["per_step"]  # noqa: RUF012

    task = Reversal(rng=0)
    for model in (object(), Nameless(), Unhashable()):
        with pytest.raises(TypeError, match=f"{NOT_A_MODEL}.* got {type(model).__name__}$"):
            make_objective(model, task, False, 0.0, False, 0)


def test_the_per_step_and_lddn_entries_refuse_options_with_the_same_errors() -> None:
    net, windows = _windows_and_net()
    with pytest.raises(ValueError, match=r"tbptt=True carries a recurrent state.*not for a LDDN"):
        make_objective(net, windows, True, 0.0, False, 0)
    with pytest.raises(ValueError, match="sampling and reverse_source are for an EncoderDecoder"):
        make_objective(net, windows, False, 0.0, True, 0)
    model, task = _ctc()
    assert model.tbptt  # a recurrent model may carry its state, but not with CTC
    with pytest.raises(ValueError, match="tbptt=True is for character models, not for CTC"):
        make_objective(model, task, True, 0.0, False, 0)
    model, task = _seq2seq()
    with pytest.raises(ValueError, match="tbptt=True is for character models, not for an Enc"):
        make_objective(model, task, True, 0.0, False, 0)


def _imports(path: Path) -> tuple[list[str], list[int]]:
    """The modules ``path`` imports at its top level, and the lines of any import elsewhere."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = {id(node) for node in tree.body}
    names: list[str] = []
    nested: list[int] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            if id(node) not in top:
                nested.append(node.lineno)
            if isinstance(node, ast.ImportFrom):
                names.append(node.module or "")
            else:
                names.extend(alias.name for alias in node.names)
    return names, nested


def test_the_package_imports_at_the_top_and_nothing_above_it() -> None:
    above = ("pyplay.dynamic", "pyplay.train", "pyplay.ui", "pyplay.io", "pyplay.models.registry")
    folder = Path(pyplay.objectives.__file__).parent
    modules = sorted(folder.glob("*.py"))
    assert len(modules) >= 10
    for path in modules:
        names, nested = _imports(path)
        assert not nested, f"{path.name} imports inside a function (lines {nested})"
        upward = [n for n in names if n.startswith(above)]
        assert not upward, f"{path.name} imports {upward}, above the objectives"
