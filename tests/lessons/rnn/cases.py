"""What the shared UI tests need of the Recurrent networks lesson, as data (read by
``tests/lesson_cases.py``)."""

# fmt: off
EXPORT = {  # "show as code" runs and reproduces the lesson (tests/ui/test_export.py)
    "rnn": {
        "rnn-lstm-adding": {},
        "rnn-gru-charlm-2-layers": {"task": "charlm", "cell": "gru", "num_layers": 2,
                                    "hidden_size": 16},
        "rnn-relu-parity-sgd": {"task": "parity", "cell": "rnn", "nonlinearity": "relu",
                                "optimizer": "sgd", "clip": 0.0, "seed": 3, "hidden_size": 8},
        "rnn-linear-copy": {"task": "copy", "cell": "rnn", "nonlinearity": "linear"},
        "rnn-gru-bidirectional-residual-3-layers": {"task": "copy", "cell": "gru", "num_layers": 3,
                                                    "bidirectional": True, "residual": True,
                                                    "hidden_size": 8},
        "rnn-feedforward-2-lstm": {"task": "adding", "feedforward_layers": 2, "hidden_size": 8,
                                   "seed": 4},
    }
}
# lesson files: settings to train with, other settings to load into (tests/ui/test_ui_checkpoint.py)
FILES = {"rnn": ({"cell": "gru", "hidden_size": 8}, {"task": "parity"})}
ADDRESS = {  # a real state through the page address (tests/ui/test_urlstate.py)
    "rnn": {"task": "parity", "cell": "gru", "hidden_size": 12, "lr": 0.005, "seed": 3,
            "optimizer": "sgd", "clip": 0.0, "batch_size": 8, "seq_len": 6},
}
STATUS = {"rnn": "pyplay-status"}  # the status line's class as the view had it first
# look-inside columns that change while it trains (tests/browser/test_live_views.py)
LIVE = {"rnn": ["image", "norm"]}
# fmt: on
