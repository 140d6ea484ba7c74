"""What the shared UI tests need of the Dynamic networks lesson, as data (read by
``tests/lesson_cases.py``, and of its sub-lesson LSTM and GRU (lecture_rnn))."""

# fmt: off
# lesson files: settings to train with, other settings to load into (tests/ui/test_ui_checkpoint.py)
FILES = {"dynamic": ({"preset": "elman", "system": "first order"}, {})}
ADDRESS = {  # a real state through the page address (tests/ui/test_urlstate.py)
    "dynamic": {"preset": "first order", "signal": "step", "steps": 20, "lr": 0.05, "seed": 4},
}
STATUS = {  # the status lines' classes as the views had them first
    "dynamic": "pyplay-lddn-status",
    "lecture_rnn": "pyplay-book-status",
}
# fmt: on
