"""The model classes a checkpoint may name, and how one is rebuilt from a file.

A model file (see :func:`pyplay.io.save_model`) records its model as
``{"class": key, "config": {...}}``: ``key`` is one of :data:`MODEL_CLASSES`, a fixed table
written here, and ``config`` the constructor arguments (each class's ``config`` property).
Loading never imports a name read from a file: the key only selects a row of the table.

Before a model is built its size is estimated from the config (:func:`estimate_parameters`):
a config describing far more parameters than the file holds is refused, so a small corrupt
file cannot make the loader allocate gigabytes.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = [
    "MODEL_CLASSES",
    "build_model",
    "config_kwargs",
    "copy_params",
    "describe_model",
    "estimate_parameters",
    "model_class",
]

# key -> (module, class): a fixed table, never extended from a file
MODEL_CLASSES: dict[str, tuple[str, str]] = {
    "SequenceModel": ("pyplay.models.sequence", "SequenceModel"),
    "EncoderDecoder": ("pyplay.models.seq2seq.encoder_decoder", "EncoderDecoder"),
    "TransformerModel": ("pyplay.models.transformer.lm", "TransformerModel"),
    "TransformerSeq2Seq": ("pyplay.models.transformer.seq2seq", "TransformerSeq2Seq"),
    "MemoryNet": ("pyplay.models.memory.memnet", "MemoryNet"),
    "AttendRNN": ("pyplay.models.memory.attend_rnn", "AttendRNN"),
    "LDDN": ("pyplay.dynamic.lddn", "LDDN"),
    "TextbookSeq2Seq": ("pyplay.dynamic.textbook_seq2seq", "TextbookSeq2Seq"),
}
_PLAIN = (str, int, float, bool, type(None))
_SLACK, _FLOOR = 4, 1_000_000  # a config may describe at most max(4 x the file, 1e6) numbers


def model_class(key: Any) -> type:
    """The class registered under ``key`` (ValueError naming the allowed keys otherwise)."""
    if not isinstance(key, str) or key not in MODEL_CLASSES:
        raise ValueError(
            f"the model class must be one of {', '.join(MODEL_CLASSES)}, got {key!r}"[:300]
        )
    module, name = MODEL_CLASSES[key]
    cls = getattr(importlib.import_module(module), name)
    assert isinstance(cls, type)
    return cls


def describe_model(model: Any) -> dict[str, Any]:
    """``{"class": key, "config": model.config}`` for a model of a registered class."""
    for key, (module, name) in MODEL_CLASSES.items():
        if type(model).__name__ == name and type(model).__module__ == module:
            return {"class": key, "config": model.config}
    raise TypeError(
        f"model must be one of pyplay's model classes ({', '.join(MODEL_CLASSES)}), "
        f"got {type(model).__name__}"
    )


def _check_plain(where: str, value: Any, depth: int = 0) -> None:
    if depth > 6:
        raise ValueError(f"{where} is nested too deeply")
    if isinstance(value, _PLAIN):
        return
    if isinstance(value, list):
        if len(value) > 10_000:
            raise ValueError(f"{where} must have at most 10,000 entries, got {len(value):,}")
        for i, item in enumerate(value):
            _check_plain(f"{where}[{i}]", item, depth + 1)
        return
    if isinstance(value, dict):
        for k, item in value.items():
            if not isinstance(k, str):
                raise ValueError(f"{where} must have text keys, got {k!r}")
            _check_plain(f"{where}[{k!r}]", item, depth + 1)
        return
    raise ValueError(f"{where} must be plain data (numbers, text, lists), got {type(value)}")


def config_kwargs(cls: type, config: Any) -> dict[str, Any]:
    """Constructor keyword arguments of ``cls`` from a saved ``config``.

    Refuses (ValueError naming them) keys the constructor does not take, required keys that
    are missing and values that are not plain data; the constructor then checks each value.
    ``rng`` and ``params`` are never read from a config.
    """
    if not isinstance(config, dict):
        raise TypeError(f"config must be a dict, got {type(config).__name__}")
    signature = inspect.signature(cls.__init__)  # type: ignore[misc]
    taken = {
        name: p
        for name, p in signature.parameters.items()
        if name not in ("self", "rng", "params") and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    }
    unknown = sorted(str(k) for k in set(config) - set(taken))
    if unknown:
        raise ValueError(
            f"config of {cls.__name__} has unknown keys {unknown}; expected a subset of "
            f"{sorted(taken)}"
        )
    missing = sorted(n for n, p in taken.items() if p.default is p.empty and n not in config)
    if missing:
        raise ValueError(f"config of {cls.__name__} is missing the keys {missing}")
    for key, value in config.items():
        _check_plain(f"config[{key!r}]", value)
    return dict(config)


def copy_params(model: Any, params: Mapping[str, np.ndarray]) -> None:
    """Copy ``params`` into ``model.params`` in place: the same names, the same shapes, finite
    numbers (ValueError naming the first that is not)."""
    missing = sorted(set(model.params) - set(params))
    extra = sorted(set(params) - set(model.params))
    if missing or extra:
        raise ValueError(
            f"the arrays do not fit the model: missing {missing[:8] or 'none'}, "
            f"unexpected {extra[:8] or 'none'}"
        )
    for name, target in model.params.items():
        value = np.asarray(params[name])
        if value.shape != target.shape:
            raise ValueError(f"array {name!r} must have shape {target.shape}, got {value.shape}")
        if value.dtype.kind not in "fiu" or not np.isfinite(value).all():
            raise ValueError(f"array {name!r} must hold finite numbers")
    for name, target in model.params.items():
        target[...] = params[name]  # in place: layers and optimisers keep their arrays


# ------------------------------------------------------------------ size estimates
def _int(config: Mapping[str, Any], key: str, default: int) -> int:
    value = config.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"config[{key!r}] must be a non-negative integer, got {value!r}"[:200])
    return value


def _recurrent(cell: Any, size_in: int, hidden: int, layers: int, directions: int) -> int:
    gates = {"lstm": 4, "gru": 3}.get(cell, 1)
    per = gates * hidden * (max(size_in, directions * hidden) + hidden + 2)
    return directions * layers * per


def _sequence(c: Mapping[str, Any]) -> int:
    H, L, n_in = _int(c, "hidden_size", 64), _int(c, "num_layers", 1), _int(c, "input_size", 1)
    E = _int(c, "embedding_dim", H) if c.get("input_kind") == "tokens" else 0
    D = 2 if c.get("bidirectional") else 1
    out = _int(c, "output_size", 1)
    return n_in * E + _recurrent(c.get("cell"), E or n_in, H, L, D) + (D * H + 1) * out


def _encoder_decoder(c: Mapping[str, Any]) -> int:
    E, H, L = _int(c, "embedding_dim", 32), _int(c, "hidden_size", 64), _int(c, "num_layers", 1)
    Vs, Vt = _int(c, "src_vocab_size", 4), _int(c, "tgt_vocab_size", 4)
    D = 2 if c.get("bidirectional_encoder") else 1
    K = D * H
    cell = c.get("cell", "lstm")
    n = (Vs + Vt) * E + _recurrent(cell, E, H, L, D) + _recurrent(cell, E + K, H, L, 1)
    return n + 4 * (K + 1) * H + (H + K + 64) * (H + K + 2) + (H + 1) * Vt


def _textbook(c: Mapping[str, Any]) -> int:
    E, H = _int(c, "embedding_dim", 16), _int(c, "hidden_size", 32)
    Vs, Vt, cell = _int(c, "src_vocab_size", 4), _int(c, "tgt_vocab_size", 4), c.get("cell")
    context = c.get("form") == "context"  # the context enters the decoder; else attention
    n = (Vs + Vt) * E + _recurrent(cell, E, H, 1, 1) + (H + 1) * Vt
    n += _recurrent(cell, E + H, H, 1, 1) if context else _recurrent(cell, E, H, 1, 1)
    return n if context else n + (2 * H + 1) * (2 * H + 1)  # score and LW^3


def _blocks(D: int, F: int, layers: int, attentions: int) -> int:
    return layers * (attentions * (4 * D * D + 6 * D) + 2 * D * F + F + 3 * D)


def _transformer(c: Mapping[str, Any]) -> int:
    D, n_in, out = _int(c, "d_model", 32), _int(c, "input_size", 1), _int(c, "output_size", 1)
    F, L = _int(c, "dim_feedforward", 4 * D), _int(c, "num_layers", 2)
    pos = _int(c, "max_len", 256) * D if c.get("positional") == "learned" else 0
    return (n_in + 1) * D + pos + _blocks(D, F, L, 1) + 2 * D + (D + 1) * out


def _transformer_seq2seq(c: Mapping[str, Any]) -> int:
    D, F = _int(c, "d_model", 32), _int(c, "dim_feedforward", 4 * _int(c, "d_model", 32))
    V = _int(c, "src_vocab_size", 4) + _int(c, "tgt_vocab_size", 4)
    pos = _int(c, "max_len", 128) * D if c.get("positional") == "learned" else 0
    enc, dec = _int(c, "num_encoder_layers", 2), _int(c, "num_decoder_layers", 2)
    return (V + 1) * D + pos + _blocks(D, F, enc, 1) + _blocks(D, F, dec, 2) + 4 * D


def _memory(c: Mapping[str, Any]) -> int:
    H, N, W = _int(c, "hidden_size", 32), _int(c, "memory_size", 16), _int(c, "memory_width", 16)
    R, Ew = _int(c, "read_heads", 1), _int(c, "write_heads", 1)
    n_in, out = _int(c, "input_size", 1), _int(c, "output_size", 1)
    controller = 4 * H * (n_in + R * W + H + 1)
    return controller + (Ew * (2 * W + 1) + R * (W + 1)) * (H + 1) + out * (H + R * W + 1) + N * W


def _attend(c: Mapping[str, Any]) -> int:
    H, n_in, out = _int(c, "hidden_size", 32), _int(c, "input_size", 1), _int(c, "output_size", 1)
    return 4 * H * (n_in + 2 * H + 1) + H * (H + 1) + out * (2 * H + 1)


def _lddn(c: Mapping[str, Any]) -> int:
    from pyplay.dynamic.spec import parse_spec

    spec = parse_spec(c.get("description"))  # plain data, checked field by field
    sizes = [layer.size for layer in spec.layers]
    n = sum(sizes)
    n += sum(
        len(w.delays) * sizes[w.to - 1] * spec.inputs[w.source - 1] for w in spec.input_weights
    )
    n += sum(len(w.delays) * sizes[w.to - 1] * sizes[w.source - 1] for w in spec.layer_weights)
    return n


_ESTIMATES = {
    "SequenceModel": _sequence,
    "EncoderDecoder": _encoder_decoder,
    "TransformerModel": _transformer,
    "TransformerSeq2Seq": _transformer_seq2seq,
    "MemoryNet": _memory,
    "AttendRNN": _attend,
    "LDDN": _lddn,
    "TextbookSeq2Seq": _textbook,
}


def estimate_parameters(key: str, config: Mapping[str, Any]) -> int:
    """An upper estimate of the number of parameters ``config`` describes, computed without
    building the model (within a small factor of the true count)."""
    model_class(key)  # a known key
    return int(_ESTIMATES[key](config))


def build_model(entry: Any, params: Mapping[str, np.ndarray]) -> Any:
    """The model ``entry`` (``{"class": key, "config": {...}}``) describes, with ``params``
    copied in. ValueError/TypeError saying what is wrong: an unknown class, a bad config, a
    config much larger than the arrays, arrays that do not fit."""
    if not isinstance(entry, dict) or set(entry) != {"class", "config"}:
        raise ValueError('the model entry must be {"class": ..., "config": {...}}')
    cls = model_class(entry["class"])
    config = entry["config"]
    if not isinstance(config, dict):
        raise ValueError(f"the model config must be a mapping, got {type(config).__name__}")
    held = int(sum(np.asarray(v).size for v in params.values()))
    described = estimate_parameters(entry["class"], config)
    if described > max(_SLACK * held, _FLOOR):
        raise ValueError(
            f"the model config describes about {described:,} parameters but the file holds "
            f"only {held:,} numbers"
        )
    model = cls.from_config(config)  # type: ignore[attr-defined]
    copy_params(model, params)
    return model
