"""What the shared UI tests need of the Image attention lesson, as data (read by
``tests/lesson_cases.py``)."""

# fmt: off
# look-inside columns that change while it trains (tests/browser/test_live_views.py)
LIVE = {"images": ["image"]}
# fmt: on
