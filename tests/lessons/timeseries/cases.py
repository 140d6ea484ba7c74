"""What the shared UI tests need of the Time series lesson, as data (read by
``tests/lesson_cases.py``)."""

# fmt: off
# lesson files: settings to train with, other settings to load into (tests/ui/test_ui_checkpoint.py)
FILES = {"timeseries": ({"hidden_size": 4}, {"feedback_delays": 3})}
ADDRESS = {  # a real state through the page address (tests/ui/test_urlstate.py)
    "timeseries": {"hidden_size": 6, "input_delays": 3, "feedback_delays": 1, "lr": 0.02,
                   "seed": 2},
}
STATUS = {"timeseries": "pyplay-narx-status"}  # the status line's class as the view had it first
# fmt: on
