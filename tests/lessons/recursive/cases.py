"""What the shared UI tests need of the Recursive networks lesson, as data (read by
``tests/lesson_cases.py``)."""

# fmt: off
EXPORT = {  # "show as code" runs and reproduces the lesson (tests/ui/test_export.py)
    "recursive": {
        "recursive-expressions": {"hidden_size": 8, "seed": 3},
        "recursive-sentiment": {"task": "sentiment", "hidden_size": 6},
    }
}
# fmt: on
