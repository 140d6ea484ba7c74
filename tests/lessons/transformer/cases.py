"""What the shared UI tests need of the Transformers lesson, as data (read by
``tests/lesson_cases.py``)."""

# fmt: off
EXPORT = {  # "show as code" runs and reproduces the lesson (tests/ui/test_export.py)
    "transformer": {
        "transformer-learned": {"positional": "learned", "d_model": 16, "nhead": 2,
                                "compare_lstm": False},
        "transformer-encoder-decoder-dates": {"arch": "encoder_decoder", "pair_task": "dates",
                                              "positional": "learned", "d_model": 16, "nhead": 2,
                                              "num_layers": 1},
    }
}
# lesson files: settings to train with, other settings to load into (tests/ui/test_ui_checkpoint.py)
FILES = {"transformer": ({"d_model": 8, "nhead": 2, "num_layers": 1}, {})}
ADDRESS = {  # a real state through the page address (tests/ui/test_urlstate.py)
    "transformer": {"task": "parity", "d_model": 16, "nhead": 2, "num_layers": 1,
                    "positional": "concat", "causal": False, "seq_len": 6, "seed": 5,
                    "compare_lstm": False},
}
# look-inside columns that change while it trains (tests/browser/test_live_views.py)
LIVE = {"transformer": ["weight"]}
# fmt: on
