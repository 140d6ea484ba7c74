"""What the shared UI tests need of the Textbook seq2seq lesson, as data (read by
``tests/lesson_cases.py``)."""

# fmt: off
EXPORT = {  # "show as code" runs and reproduces the lesson (tests/ui/test_export.py)
    "textbook": {
        "textbook-concat": {"form": "concat", "hidden_size": 8},
        "textbook-context": {"form": "context", "hidden_size": 12, "seed": 4},
    }
}
# lesson files: settings to train with, other settings to load into (tests/ui/test_ui_checkpoint.py)
FILES = {"textbook": ({"form": "dot", "hidden_size": 8}, {"form": "context"})}
ADDRESS = {  # a real state through the page address (tests/ui/test_urlstate.py)
    "textbook": {"form": "concat", "hidden_size": 8, "D": 5, "lr": 0.02, "seed": 6},
}
# fmt: on
