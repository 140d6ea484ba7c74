"""What the shared UI tests need of the Pointer networks lesson, as data (read by
``tests/lesson_cases.py``)."""

# fmt: off
EXPORT = {  # "show as code" runs and reproduces the lesson (tests/ui/test_export.py)
    "pointer": {
        "pointer-sorting-gru": {"cell": "gru", "hidden_size": 8},
        "pointer-hull": {"task": "hull", "hidden_size": 6, "max_len": 8, "seed": 2,
                         "batch_size": 16},
    }
}
# lesson files: settings to train with, other settings to load into (tests/ui/test_ui_checkpoint.py)
FILES = {"pointer": ({"task": "hull", "hidden_size": 8}, {"max_len": 9})}
# look-inside columns that change while it trains (tests/browser/test_live_views.py)
LIVE = {"pointer": ["weight"]}
# fmt: on
