"""What the shared UI tests need of the Soft and hard attention lesson, as data (read by
``tests/lesson_cases.py``)."""

# fmt: off
EXPORT = {  # "show as code" runs and reproduces the lesson (tests/ui/test_export.py)
    "glimpse": {
        "glimpse-hard-without-baseline": {"seq_len": 6, "hidden_size": 8, "baseline": False,
                                          "seed": 2},
    }
}
# look-inside columns that change while it trains (tests/browser/test_live_views.py)
LIVE = {"glimpse": ["weight"]}
# fmt: on
