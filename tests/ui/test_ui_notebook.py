"""The views for a notebook (pyplay.ui.gates / attention / beam) and the example notebook."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from paths import ROOT

pytest.importorskip("panel")

import panel as pn

import pyplay.ui
from pyplay.models import SequenceModel
from pyplay.models.seq2seq import EncoderDecoder
from pyplay.tasks import make_task
from pyplay.tasks.seq2seq import Reversal

NOTEBOOK = ROOT / "web" / "notebook_example.ipynb"


def figures(obj: Any) -> list[Any]:
    return [pane.object for pane in obj.select(pn.pane.Bokeh)]


def heatmap_shapes(obj: Any) -> list[tuple[str, tuple[int, ...]]]:
    out = []
    for fig in figures(obj):
        image = fig.renderers[0].data_source.data["image"][0]
        out.append((fig.title.text, image.shape))
    return out


@pytest.fixture(scope="module")
def pairs() -> Reversal:
    return Reversal(min_len=3, max_len=8, rng=0)


@pytest.fixture(scope="module")
def s2s(pairs: Reversal) -> EncoderDecoder:
    V_s, V_t = len(pairs.src_vocab), len(pairs.tgt_vocab)
    return EncoderDecoder(V_s, V_t, 8, 12, cell="gru", wiring="attention", rng=0)


# ---------------------------------------------------------------------------- gates
@pytest.mark.slow
def test_gates_of_a_two_layer_lstm_on_tokens():
    task = make_task("copy", seq_len=6, rng=0)
    model = SequenceModel.for_task(task, "lstm", hidden_size=8, num_layers=2, rng=0)
    x = task.batch(1).inputs[0]  # (T,)
    view = pyplay.ui.gates(model, x)
    assert isinstance(view, pn.Column)
    shapes = heatmap_shapes(view)
    T = len(x)
    assert [title for title, _ in shapes] == [
        f"{layer}: {name}" for layer in ("l0", "l1") for name in
        ("input gate i", "forget gate f", "candidate g", "output gate o", "cell state c",
         "hidden state h")
    ]  # fmt: skip
    assert {shape for _, shape in shapes} == {(8, T)}  # units x time
    # the data are the model's own recording
    _, _, cache = model.forward(x[None], record=True, training=False)
    hidden = figures(view)[11].renderers[0].data_source.data["image"][0]
    np.testing.assert_allclose(hidden, cache.record["l1"]["h"][0].T)
    assert pyplay.ui.gates(model, x[None]) is not None  # a batch of one is fine


@pytest.mark.slow
def test_gates_of_a_bidirectional_gru_on_real_inputs():
    task = make_task("adding", seq_len=7, rng=0)
    model = SequenceModel.for_task(task, "gru", hidden_size=5, bidirectional=True, rng=0)
    x = task.batch(1).inputs[0]  # (T, 2)
    shapes = heatmap_shapes(pyplay.ui.gates(model, x))
    assert [t for t, _ in shapes][:4] == ["l0: reset gate r", "l0: update gate z",
                                          "l0: candidate n", "l0: hidden state h"]  # fmt: skip
    assert any(t.startswith("l0_reverse") for t, _ in shapes)
    assert {s for _, s in shapes} == {(5, 7)}


@pytest.mark.parametrize(
    ("model_kind", "x", "error", "match"),
    [
        ("none", [1, 2], TypeError, "model must be a pyplay SequenceModel, got str"),
        ("tokens", np.zeros((2, 5), dtype=int), ValueError, r"one sequence of token ids.*\(2, 5\)"),
        ("tokens", [0.5, 1.0], TypeError, "integer token ids, got dtype float64"),
        ("tokens", [0, 99], ValueError, "token ids must be from 0 to 9"),
        ("tokens", [], ValueError, "one sequence of token ids"),
        ("real", np.zeros((4, 3)), ValueError, r"shape \(T, 2\) or \(1, T, 2\), got \(4, 3\)"),
        ("real", [[np.nan, 0.0]], ValueError, "finite real numbers"),
    ],
)
def test_gates_refuses_bad_arguments(model_kind: str, x: Any, error: type, match: str):
    models: dict[str, Any] = {
        "none": "lstm",
        "tokens": SequenceModel("lstm", input_kind="tokens", input_size=10, output_size=3),
        "real": SequenceModel("lstm", input_kind="real", input_size=2, output_size=1),
    }
    with pytest.raises(error, match=match):
        pyplay.ui.gates(models[model_kind], x)


# ---------------------------------------------------------------------------- attention
def test_attention_shows_a_row_per_output_step(s2s: EncoderDecoder, pairs: Reversal):
    view = pyplay.ui.attention(s2s, "abcd", task=pairs)
    (fig,) = figures(view)
    data = fig.renderers[0].data_source.data
    S = 4
    U = max(data["y"]) + 1
    assert len(data["weight"]) == U * S and max(data["x"]) == S - 1
    assert data["src"][:S] == ["a", "b", "c", "d"]
    rows = np.array(data["weight"]).reshape(U, S)
    np.testing.assert_allclose(rows.sum(axis=1), 1.0, rtol=1e-5)  # a distribution per step
    ids_view = pyplay.ui.attention(s2s, np.array(pairs.src_vocab.encode("dcba")))
    assert figures(ids_view)[0].renderers[0].data_source.data["src"][:S] == ["6", "5", "4", "3"]
    reversed_view = pyplay.ui.attention(s2s, "abcd", task=pairs, reverse_source=True)
    assert figures(reversed_view)[0].renderers[0].data_source.data["src"][:S] == list("abcd")


@pytest.mark.parametrize(
    ("src", "kwargs", "error", "match"),
    [
        ("abcd", {}, ValueError, "a text source needs task="),
        ("abz", {"task": True}, ValueError, "'z', which is not in the vocabulary"),
        ("", {"task": True}, ValueError, "src must have 1 to 200 characters"),
        ([0, 4], {}, ValueError, "ids must be from 3 to"),
        (np.zeros((2, 3), dtype=int), {}, ValueError, "one row of token ids"),
    ],
)
def test_attention_refuses_bad_sources(
    s2s: EncoderDecoder, pairs: Reversal, src: Any, kwargs: dict[str, Any], error: type, match: str
):
    if kwargs.get("task"):
        kwargs = {"task": pairs}
    with pytest.raises(error, match=match):
        pyplay.ui.attention(s2s, src, **kwargs)


def test_attention_needs_a_model_with_attention(pairs: Reversal):
    plain = EncoderDecoder(len(pairs.src_vocab), len(pairs.tgt_vocab), 4, 6, wiring="init")
    with pytest.raises(ValueError, match="no attention \\(wiring 'init'\\)"):
        pyplay.ui.attention(plain, "abc", task=pairs)
    with pytest.raises(TypeError, match="EncoderDecoder, got SequenceModel"):
        pyplay.ui.attention(SequenceModel(input_kind="real", input_size=1, output_size=1), [3])


# ---------------------------------------------------------------------------- beam search
def test_beam_draws_the_search_and_steps_through_it(s2s: EncoderDecoder, pairs: Reversal):
    view = pyplay.ui.beam(s2s, "abc", beam_size=2, task=pairs, max_length=6)
    (fig,) = figures(view)
    nodes = fig.renderers[1].data_source.data
    assert nodes["label"][0] == "<bos>" and max(nodes["x"]) == 6
    assert "finished (EOS)" in nodes["status"] or "finished (max length)" in nodes["status"]
    listing = view.select(pn.pane.Str)[0]
    assert "done" in listing.object and "greedy:" in listing.object
    back, step, run = view.select(pn.widgets.Button)
    back.clicks += 1
    assert max(fig.renderers[1].data_source.data["x"]) == 5
    assert "Step 5 of at most 6" in listing.object
    step.clicks += 1
    run.clicks += 1
    assert max(fig.renderers[1].data_source.data["x"]) == 6
    assert pyplay.ui.beam(s2s, [3, 4, 5]) is not None  # ids, tokens named by number


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"beam_size": 0}, ValueError, "beam_size must be from 1 to 16, got 0"),
        ({"beam_size": 2.5}, TypeError, "beam_size must be an integer"),
        ({"beam_size": True}, TypeError, "beam_size must be an integer"),
        ({"max_length": 0}, ValueError, "max_length must be an integer from 1 to 200"),
        ({"length_penalty": -1.0}, ValueError, "length_penalty must be from 0 to 5"),
    ],
)
def test_beam_refuses_bad_settings(
    s2s: EncoderDecoder, pairs: Reversal, kwargs: dict[str, Any], error: type, match: str
):
    with pytest.raises(error, match=match):
        pyplay.ui.beam(s2s, "abc", task=pairs, **kwargs)


# ---------------------------------------------------------------------------- packaging
@pytest.mark.slow
def test_importing_pyplay_ui_does_not_import_panel():
    code = (
        "import sys, pyplay, pyplay.ui\n"
        "assert 'panel' not in sys.modules and 'bokeh' not in sys.modules\n"
        "assert callable(pyplay.ui.gates) and 'panel' in sys.modules\n"
        "try:\n    pyplay.ui.nothing\nexcept AttributeError as err:\n    print(err)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "has no attribute 'nothing'" in done.stdout


@pytest.mark.slow
def test_the_example_notebook_is_valid_and_runs(tmp_path: Path):
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    assert nb["nbformat"] == 4 and nb["nbformat_minor"] >= 5
    assert nb["metadata"]["kernelspec"]["language"] == "python"
    ids = [cell["id"] for cell in nb["cells"]]
    assert len(set(ids)) == len(ids)
    for cell in nb["cells"]:
        assert cell["cell_type"] in ("markdown", "code")
        assert isinstance(cell["source"], list) and all(isinstance(s, str) for s in cell["source"])
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None
    code = "\n\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    for call in ("pyplay.ui.gates(", "pyplay.ui.attention(", "pyplay.ui.beam("):
        assert call in code
    script = tmp_path / "notebook.py"
    script.write_text(code, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-W", "error", str(script)],
        capture_output=True, text=True, cwd=tmp_path, timeout=300,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "step 300" in done.stdout
