"""What the shared UI tests need of the Memory lesson, as data (read by
``tests/lesson_cases.py``)."""

# fmt: off
EXPORT = {  # "show as code" runs and reproduces the lesson (tests/ui/test_export.py)
    "memory": {
        "memory-memnet-residual-2-heads": {"update": "residual", "read_heads": 2,
                                           "write_heads": 2, "memory_size": 8, "n_pairs": 4,
                                           "seed": 1},
        "memory-attend": {"model": "attend", "lr": 0.01},
        "memory-memnet-hard-feedback": {"hard": "both", "feedback": "output", "n_pairs": 3,
                                        "seed": 2},
        "memory-attend-lecture": {"model": "attend", "attend_form": "state", "seed": 1},
        "memory-lstm": {"model": "lstm", "seed": 2},
    }
}
# lesson files: settings to train with, other settings to load into (tests/ui/test_ui_checkpoint.py)
FILES = {"memory": ({"model": "attend"}, {"memory_size": 8})}
ADDRESS = {  # a real state through the page address (tests/ui/test_urlstate.py)
    "memory": {"model": "attend", "read_heads": 2, "memory_size": 8, "n_pairs": 4, "lr": 0.01,
               "seed": 1},
}
# look-inside columns that change while it trains (tests/browser/test_live_views.py)
LIVE = {"memory": ["image"]}
# fmt: on
