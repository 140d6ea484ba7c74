"""What the shared UI tests need of the CTC lesson, as data (read by
``tests/lesson_cases.py``)."""

# fmt: off
EXPORT = {  # "show as code" runs and reproduces the lesson (tests/ui/test_export.py)
    "ctc": {
        "ctc-bidirectional-lstm": {"cell": "lstm", "hidden_size": 8, "seed": 2},
        "ctc-time-delay-gru": {"hidden_size": 8, "bidirectional": False, "delay": 2,
                               "lexicon": "ab,c"},
    }
}
# lesson files: settings to train with, other settings to load into (tests/ui/test_ui_checkpoint.py)
FILES = {"ctc": ({"hidden_size": 8, "cell": "lstm", "lexicon": "AB CA"}, {"beam_width": 3})}
ADDRESS = {  # a real state through the page address (tests/ui/test_urlstate.py)
    "ctc": {"cell": "lstm", "hidden_size": 8, "bidirectional": False, "delay": 2,
            "compare": True, "noise": 0.1, "beam_width": 3, "lexicon": "AB, cd & <b>",
            "lr": 0.05, "seed": 7},
}
# look-inside columns that change while it trains (tests/browser/test_live_views.py)
LIVE = {"ctc": ["image"]}
# fmt: on
