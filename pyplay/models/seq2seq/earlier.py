r"""Model files of the textbook sub-lesson's earlier model, read as the library's
:class:`~pyplay.models.seq2seq.EncoderDecoder`.

Before the textbook sub-lesson computed the book's network (eq. 6.5-6.18,
:class:`pyplay.models.textbook.TextbookSeq2Seq`) it trained Luong's form of the seq2seq: a
one-layer, one-direction :class:`~pyplay.models.seq2seq.EncoderDecoder` whose score was named
the book's way. Its files name the class ``"LuongSeq2Seq"``, or (the earliest)
``"TextbookSeq2Seq"`` with a config holding ``embedding_dim`` and ``cell``; the config is

.. code-block:: text

    {"src_vocab_size", "tgt_vocab_size", "form", "embedding_dim", "hidden_size", "cell", "dtype"}

with ``form`` one of ``"context"`` (the context :math:`c = a^1(S)` a constant decoder input),
``"dot"``, ``"general"``, ``"concat"`` (Luong's global attention after each decoder step,
:math:`a^3(t) = \tanh(W_c [c(t); a^2(t)])`). The parameters were the encoder-decoder's own, under
its names, so converting a file is converting its config:

.. math::

    \text{form} = \text{context} \mapsto \text{wiring} = \text{context}, \qquad
    \text{form} \in \{\text{dot}, \text{general}, \text{concat}\} \mapsto
    \text{wiring} = \text{attention},\ \text{score} \in \{\text{dot}, \text{general},
    \text{additive}\},

every other argument the encoder-decoder's default (one layer, one direction, no shared net).
``tests/models/test_earlier_model_files.py`` holds files the removed class saved
(``tests/data/luong/``), and the outputs it computed on them, to the converted model.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["LUONG_FORMS", "LUONG_SCORE", "earlier_entry"]

LUONG_SCORE = {"dot": "dot", "general": "general", "concat": "additive"}  # book -> library
LUONG_FORMS = ("context", *LUONG_SCORE)
# the earlier class's constructor defaults (its files always held every key; kept for safety)
_DEFAULTS: dict[str, Any] = {"form": "general", "embedding_dim": 16, "hidden_size": 32}
_DEFAULTS |= {"cell": "rnn", "dtype": "float64"}
_KEYS = ("src_vocab_size", "tgt_vocab_size", *_DEFAULTS)


def _is_earlier(entry: Mapping[str, Any]) -> bool:
    """Whether ``entry`` is the earlier model's: class LuongSeq2Seq, or TextbookSeq2Seq with
    Luong's config (``embedding_dim`` or ``cell``, which the book's network does not take)."""
    config = entry.get("config")
    if entry.get("class") == "LuongSeq2Seq":
        return True
    return (
        entry.get("class") == "TextbookSeq2Seq"
        and isinstance(config, Mapping)
        and ("embedding_dim" in config or "cell" in config)
    )


def earlier_entry(entry: Any) -> Any:
    """``entry`` (``{"class": key, "config": {...}}``) as an ``EncoderDecoder`` entry when it
    is the earlier model's (module docstring); any other entry is returned unchanged.

    Raises
    ------
    ValueError
        The earlier config has keys that model did not take, misses a vocabulary size, or its
        ``form`` is not one of :data:`LUONG_FORMS` (the constructor checks the rest).
    """
    if not isinstance(entry, Mapping) or not _is_earlier(entry):
        return entry
    config = entry["config"]
    if not isinstance(config, Mapping):
        raise ValueError(f"the model config must be a mapping, got {type(config).__name__}")
    unknown = sorted(str(k) for k in set(config) - set(_KEYS))
    if unknown:
        raise ValueError(
            f"config of {entry['class']} has unknown keys {unknown}; expected a subset of "
            f"{sorted(_KEYS)}"
        )
    missing = [k for k in _KEYS[:2] if k not in config]
    if missing:
        raise ValueError(f"config of {entry['class']} is missing the keys {missing}")
    old = {**_DEFAULTS, **config}
    form = old.pop("form")
    if not isinstance(form, str) or form not in LUONG_FORMS:
        raise ValueError(
            f"form must be one of {', '.join(map(repr, LUONG_FORMS))}, got {form!r}"[:300]
        )
    wiring = {"wiring": "context", "score": None}
    if form != "context":
        wiring = {"wiring": "attention", "score": LUONG_SCORE[form]}
    return {"class": "EncoderDecoder", "config": {**old, **wiring}}
