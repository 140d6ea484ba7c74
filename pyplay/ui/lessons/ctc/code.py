"""The "show as code" script of the "CTC" lesson: the noisy frames, a ``SequenceModel`` and
its ``Trainer`` with the CTC loss, the training loop, then a fresh example decoded three ways
(best path, prefix beam search, lexicon beam search with the lesson's beam width and words),
the model saved as ``.npz`` and compared with its PyTorch twin
(:func:`pyplay.ui.export.trainer_script`)."""

from __future__ import annotations

from typing import Any

from pyplay.ui.code_values import literal
from pyplay.ui.export import recurrent_parts, trainer_code
from pyplay.ui.lessons.ctc.decoding import parse_lexicon
from pyplay.ui.lessons.ctc.state import SYMBOLS

__all__ = ["as_code"]


def decoding_lines(state: Any) -> list[str]:
    """The lines that decode one fresh example as the lesson's decoding panel does."""
    symbols = SYMBOLS[: state.task_obj.n_symbols]
    try:
        words = parse_lexicon(state.lexicon, symbols)
    except (ValueError, TypeError) as err:
        raise ValueError(f"the lexicon is not usable: {err}") from None
    return [
        "",
        "# one fresh example decoded three ways (the lesson's decoding panel)",
        "from pyplay.decode import ctc_best_path, ctc_lexicon_beam_search, "
        "ctc_prefix_beam_search  # noqa: E402",
        "from pyplay.losses import log_softmax  # noqa: E402",
        "",
        f"BEAM_WIDTH = {literal(int(state.beam_width), 'beam_width')}",
        f"SYMBOLS = {literal('_' + symbols, 'symbols')}  # label k is SYMBOLS[k], 0 the blank",
        f"# the lexicon {literal(state.lexicon, 'lexicon')} as label ids",
        f"WORDS = {literal([list(w) for w in words], 'lexicon')}",
        "example = task.batch(1)",
        "logits, _, _ = model.forward(example.inputs.astype(model.dtype), training=False)",
        "log_probs = log_softmax(logits[0].astype(np.float64))  # (T, C)",
        'print("target:", "".join(SYMBOLS[k] for k in example.targets[0]))',
        'print("best path:", "".join(SYMBOLS[k] for k in ctc_best_path(log_probs[None])[1][0]))',
        "for name, found in (",
        '    ("prefix beam search", ctc_prefix_beam_search(log_probs, beam_width=BEAM_WIDTH)),',
        '    ("lexicon beam search",',
        "     ctc_lexicon_beam_search(log_probs, WORDS, beam_width=BEAM_WIDTH)),",
        "):",
        '    top = [("".join(SYMBOLS[k] for k in labels), round(lp, 3)) for labels, lp in found]',
        "    print(name, top[:5])",
    ]


as_code = trainer_code(recurrent_parts, recurrent=True, after=decoding_lines)
