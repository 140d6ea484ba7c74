"""What the shared UI tests need of the Sequence to sequence lesson, as data (read by
``tests/lesson_cases.py``)."""

# fmt: off
EXPORT = {  # "show as code" runs and reproduces the lesson (tests/ui/test_export.py)
    "seq2seq": {
        "seq2seq-bahdanau-reversed": {"wiring": "bahdanau", "score": "additive",
                                      "reverse_source": True, "sampling": 0.5, "hidden_size": 16,
                                      "seed": 1},
        "seq2seq-copy-lengths": {"task": "copy_var", "min_len": 5, "max_len": 12,
                                 "hidden_size": 12, "seed": 2},
        "seq2seq-2-layers-bidirectional": {"num_layers": 2, "bidirectional": True,
                                           "hidden_size": 8, "seed": 3},
        "seq2seq-shared-rnn-context": {"share_rnn": True, "wiring": "context", "cell": "lstm",
                                       "num_layers": 2, "hidden_size": 8},
    }
}
# lesson files: settings to train with, other settings to load into (tests/ui/test_ui_checkpoint.py)
FILES = {"seq2seq": ({"hidden_size": 8, "wiring": "bahdanau"}, {"wiring": "init"})}
ADDRESS = {  # a real state through the page address (tests/ui/test_urlstate.py)
    "seq2seq": {"task": "copy_var", "cell": "lstm", "wiring": "bahdanau", "score": "dot",
                "hidden_size": 8, "sampling": 0.25, "reverse_source": True, "seed": 2,
                "min_len": 4, "max_len": 12, "num_layers": 2, "share_rnn": True},
}
# fmt: on
