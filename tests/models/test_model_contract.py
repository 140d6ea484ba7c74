"""Every registered model class follows the contract of :mod:`pyplay.models.contract`."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from pyplay.dynamic import narxnet
from pyplay.models import (
    AttendRNN,
    EncoderDecoder,
    GlimpseNet,
    MemoryNet,
    PointerNetwork,
    RecursiveNet,
    SequenceModel,
    TransformerModel,
    TransformerSeq2Seq,
)
from pyplay.models.captioner import Captioner
from pyplay.models.contract import OBJECTIVES, Backward, Model
from pyplay.models.ram import RecurrentAttention
from pyplay.models.registry import MODEL_CLASSES, REGISTERED
from pyplay.models.textbook import TextbookSeq2Seq
from pyplay.tasks.binary_tree import batch_trees, parse

SMALL: dict[str, Callable[[], Any]] = {
    "SequenceModel": lambda: SequenceModel(
        "gru", input_kind="tokens", input_size=7, output_size=5, hidden_size=6, rng=1
    ),
    "EncoderDecoder": lambda: EncoderDecoder(9, 8, 4, 6, wiring="attention", rng=1),
    "TransformerModel": lambda: TransformerModel(7, 5, d_model=8, nhead=2, rng=1),
    "TransformerSeq2Seq": lambda: TransformerSeq2Seq(9, 8, d_model=8, nhead=2, rng=1),
    "MemoryNet": lambda: MemoryNet(7, 5, hidden_size=6, memory_size=4, memory_width=3, rng=1),
    "AttendRNN": lambda: AttendRNN(7, 5, hidden_size=6, rng=1),
    "LDDN": lambda: narxnet((0, 1), (1, 2), (4,), rng=1),
    "TextbookSeq2Seq": lambda: TextbookSeq2Seq(9, 8, "concat", hidden_size=5, D=3),
    "PointerNetwork": lambda: PointerNetwork(9, embedding_dim=4, hidden_size=5, rng=1),
    "RecursiveNet": lambda: RecursiveNet(9, 3, hidden_size=5, rng=1),
    "GlimpseNet": lambda: GlimpseNet(5, 3, "soft", attn_size=3, hidden_size=4, rng=1),
    "Captioner": lambda: Captioner(6, 12, "soft", 2, 3, 4, 5, 3, rng=1),
    "RecurrentAttention": lambda: RecurrentAttention(
        3,
        glimpse_size=2,
        scales=2,
        glimpses=2,
        rho_hidden=4,
        loc_hidden=3,
        glimpse_features=4,
        hidden_size=5,
        rng=1,
    ),
}


def test_the_registry_is_a_list_of_classes_keyed_by_their_names() -> None:
    assert list(MODEL_CLASSES) == [cls.__name__ for cls in REGISTERED]
    assert set(SMALL) == set(MODEL_CLASSES)


def test_the_dynamic_package_registers_the_lddn_from_above_the_models() -> None:
    """pyplay.models.registry imports nothing of pyplay.dynamic (which sits above the models):
    importing pyplay.dynamic registers the LDDN; before that, a file naming it says what to
    import. Registering again changes nothing; another class under a taken name is refused."""
    import subprocess
    import sys

    import pyplay.models.registry as registry
    from pyplay.dynamic import LDDN

    assert registry.PROVIDED_BY == {"LDDN": "pyplay.dynamic"}
    assert registry.MODEL_CLASSES["LDDN"] is LDDN and REGISTERED.count(LDDN) == 1
    assert registry.register(LDDN) is LDDN and REGISTERED.count(LDDN) == 1
    impostor = type("LDDN", (LDDN,), {})
    with pytest.raises(ValueError, match="another class is registered as 'LDDN'"):
        registry.register(impostor)
    with pytest.raises(TypeError, match="cls must be a model class"):
        registry.register(dict)  # type: ignore[arg-type]
    code = (
        "import sys, pyplay.io, pyplay.models.registry as r\n"
        "assert 'pyplay.dynamic' not in sys.modules\n"
        "try:\n    r.model_class('LDDN')\nexcept ValueError as e:\n    print(e)\n"
        "import pyplay.dynamic\nprint(r.model_class('LDDN').__name__)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    ).stdout.splitlines()
    assert out == [
        "the model class LDDN is registered by pyplay.dynamic: import pyplay.dynamic before "
        "loading this file",
        "LDDN",
    ]


@pytest.mark.parametrize("name", list(SMALL))
def test_every_registered_class_satisfies_the_protocol(name: str) -> None:
    model = SMALL[name]()
    cls = MODEL_CLASSES[name]
    assert type(model) is cls and isinstance(model, Model)
    assert cls.objective in OBJECTIVES
    config = model.config
    assert json.loads(json.dumps(config)) == config  # plain data
    clone = cls.from_config(config, rng=5)
    assert type(clone) is cls and clone.config == config
    assert set(clone.params) == set(model.params)
    assert all(clone.params[k].shape == v.shape for k, v in model.params.items())
    n = model.num_parameters()
    assert n == sum(p.size for p in model.params.values())
    assert cls.estimate_parameters(config) >= n


def _outputs_and_cache(model: Any) -> tuple[np.ndarray, Any]:
    if model.objective == "per_step":
        out, _, cache = model.forward(np.array([[1, 2, 3], [4, 0, 1]]))
    elif model.objective == "seq2seq":
        src, tgt = np.array([[3, 4, 5], [5, 6, 0]]), np.array([[1, 3, 4], [1, 5, 2]])
        out, _, cache = model.forward(src, np.array([3, 2]), tgt, np.array([3, 3]))
    elif model.objective == "pointer":
        src, ptr_in = np.array([[3, 4, 5], [5, 6, 0]]), np.array([[-1, 0, 2], [-1, 1, 0]])
        out, cache = model.forward(src, np.array([3, 2]), ptr_in)
    elif model.objective == "glimpse":
        out, cache = model.forward(np.ones((2, 4, model.input_size), dtype=np.float32))
    elif model.objective == "caption":
        images = np.ones((2, 3, model.image_size, model.image_size), dtype=np.float32)
        out, _, cache = model.forward(images, np.array([[1, 3], [1, 4]]))
    elif model.objective == "ram":
        out, cache = model.forward(np.ones((2, 1, 8, 8), dtype=np.float32))
    elif model.objective == "tree":
        trees = [parse("((a b) c)"), parse("(a + b)")]
        out, cache = model.forward(batch_trees(trees, {"a": 0, "b": 1, "c": 2, "+": 3}))
    else:
        out, cache = model.forward(np.ones((2, 4, model.input_size)))
    return out, cache


@pytest.mark.parametrize("name", list(SMALL))
def test_backward_takes_the_output_gradient_then_the_cache_and_returns_one_result(
    name: str,
) -> None:
    model = SMALL[name]()
    out, cache = _outputs_and_cache(model)
    result = model.backward(np.ones_like(out), cache)
    assert isinstance(result, Backward)
    assert list(result.grads) == list(model.params)
    for key, g in result.grads.items():
        assert g.shape == model.params[key].shape, key
