"""The Sequence to sequence lesson's GNMT encoder without a browser (Solberg's lecture, slide
"Google's Neural Machine Translation system (2016)"; details from Wu et al. 2016): a choice of
the encoder setting, the structure in the built message, the settings that do not fit it as
messages, the address, script and lesson file, the states by layer and the help."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("panel")

from pyplay.io import load, save
from pyplay.ui.export import as_code
from pyplay.ui.lesson_page import page_text
from pyplay.ui.lessons import SPECS
from pyplay.ui.lessons.seq2seq.state import ENCODER_LABELS, Seq2SeqState
from pyplay.ui.lessons.seq2seq.states_view import StatesSection, direction_options
from pyplay.ui.urlstate import parse_query, to_query
from scripts import printed_losses, run_script


def gnmt_state(**settings: Any) -> Seq2SeqState:
    options = {"encoder": "gnmt", "num_layers": 3, "wiring": "bahdanau", "hidden_size": 8}
    return Seq2SeqState(**{**options, **settings})


def test_gnmt_is_a_choice_of_the_encoder_and_the_message_names_its_structure() -> None:
    """Solberg's slide: bidirectional bottom encoder layer, the others one way, residual
    connections (from layer 3, Wu et al.); the decoder attends from its bottom layer."""
    assert ENCODER_LABELS == {"Stacked": "stack", "GNMT": "gnmt"}
    assert "encoder" in SPECS["seq2seq"].params
    state = gnmt_state(score="additive")
    model = state.model
    assert model is not None and model.encoder == "gnmt" and model.num_layers == 3
    assert not model.bidirectional_encoder  # the bottom layer only reads both ways
    assert "encoder.bottom.weight_ih_l0_reverse" in model.params
    message = state.message
    assert "bidirectional bottom layer, 2 unidirectional layers, residual from layer 3" in message
    assert "attention (additive) asked by the previous bottom output" in message
    state.wiring = "attention"
    assert state.model.dec.query == "current" and "asked by the new bottom output" in state.message
    state.num_layers = 2
    assert "1 unidirectional layer, no residual yet (it starts at layer 3)" in state.message


def test_a_ticked_bidirectional_box_does_not_reach_gnmt() -> None:
    state = gnmt_state(bidirectional=True)
    assert state.model is not None and state.model.encoder == "gnmt"
    assert not state.model.bidirectional_encoder
    state.encoder = "stack"  # back: the box's choice counts again
    assert state.model.encoder == "stack" and state.model.bidirectional_encoder


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"num_layers": 1}, "set Layers to 2 or more"),
        ({"wiring": "init"}, "choose the Bahdanau wiring"),
        ({"share_rnn": True}, "choose the Stacked encoder or untick Share one RNN"),
    ],
)
def test_settings_gnmt_cannot_take_are_messages_and_the_model_stays(
    change: dict[str, Any], words: str
) -> None:
    state = gnmt_state()
    state.train(steps=2)
    model = state.model
    state.param.update(**change)
    assert state.message_kind == "danger" and words in state.message
    assert state.model is model and state.trainer is not None and state.trainer.step_count == 2


def test_gnmt_travels_in_the_address_script_and_lesson_file() -> None:
    state = gnmt_state()
    query = to_query("seq2seq", state)
    assert "encoder=gnmt" in query
    assert parse_query(query).settings["encoder"] == "gnmt"
    code = as_code("seq2seq", state, steps=2, log_every=1)
    assert "encoder='gnmt'" in code or 'encoder="gnmt"' in code
    plain = as_code("seq2seq", Seq2SeqState(hidden_size=8), steps=2, log_every=1)
    assert re.search(r"\bencoder=", plain) is None  # the default goes unsaid
    state.train(steps=3)
    other = Seq2SeqState(hidden_size=8)
    assert other.load_bytes(state.save_bytes().getvalue()), other.message
    assert other.encoder == "gnmt" and other.model is not None and other.model.encoder == "gnmt"
    for name, value in state.model.params.items():
        np.testing.assert_array_equal(other.model.params[name], value)


def test_a_lesson_file_from_before_gnmt_loads_with_the_stacked_encoder() -> None:
    ckpt = load(Seq2SeqState(hidden_size=8).save_bytes().getvalue())
    meta: dict[str, Any] = dict(ckpt.meta)
    meta["settings"] = {k: v for k, v in meta["settings"].items() if k != "encoder"}
    if isinstance(meta.get("model"), dict) and isinstance(meta["model"].get("config"), dict):
        config = meta["model"]["config"]
        meta["model"] = {**meta["model"], "config": {k: v for k, v in config.items()
                                                    if k != "encoder"}}  # fmt: skip
    old = io.BytesIO()
    save(old, ckpt.params, meta=meta, optimizer_state=ckpt.optimizer_state)
    state = gnmt_state()
    assert state.load_bytes(old.getvalue()), state.message
    assert state.encoder == "stack" and state.model is not None and state.model.encoder == "stack"


def test_gnmt_decodes_and_its_states_are_named_by_layer() -> None:
    """Layer 1 has a forward and a backward direction, the layers above one each; the decoder
    shows every layer's state after each output step; beam search runs."""
    assert list(direction_options(3, False, gnmt=True)) == [
        "layer 1, forward", "layer 1, backward", "layer 2", "layer 3",
    ]  # fmt: skip
    state = gnmt_state(cell="lstm")
    state.train(steps=3)
    result = state.translate("abcd")
    assert result is not None and result.weights is not None and result.decoder is not None
    assert set(result.encoder) == {"l0", "l0_reverse", "l1", "l2"}
    assert result.decoder.shape == (result.weights.shape[0], 3, 8)
    np.testing.assert_allclose(result.weights.sum(axis=1), 1.0, rtol=1e-5)
    section = StatesSection()
    section.follow_model(state.model)
    assert list(section.enc_part.options.values()) == ["l0", "l0_reverse", "l1", "l2"]
    beam = state.start_beam("abcd", beam_width=3)
    assert beam is not None
    beam.run()
    assert beam.listing()


def test_the_help_cites_solbergs_lecture_for_gnmt() -> None:
    text = page_text("pyplay.ui.lessons.seq2seq.view").help
    start = text.index("The **GNMT**")
    paragraph = text[start : start + 1200]
    assert "Solberg's lecture" in paragraph and "Wu et al. 2016" in paragraph
    assert "from layer 3" in paragraph and "{{" not in text


@pytest.mark.slow
def test_the_gnmt_script_reproduces_the_lesson(tmp_path: Path) -> None:
    state = gnmt_state(seed=2)
    out = run_script(as_code("seq2seq", state, steps=3, log_every=1), tmp_path)
    state.train(steps=3)
    assert printed_losses(out) == pytest.approx(state.history["loss"], abs=2e-6)
