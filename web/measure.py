"""Figures of the built playground in headless Chromium: ``python web/measure.py``.

Start-up (bare Pyodide + NumPy, the playground cold and on a second visit, bytes transferred)
and the time of a training step in the page against the same step natively. The tool itself
is ``web/tools/pagemeasure.py``; it builds the site first when it is stale.
"""

from __future__ import annotations

import sys
from pathlib import Path

# this checkout's tools and its package (not whichever pyplay an editable install points at)
sys.path[:0] = [
    str(Path(__file__).resolve().parent / "tools"),
    str(Path(__file__).resolve().parents[1]),
]

from pagemeasure import main  # noqa: E402  (after the path above)

if __name__ == "__main__":
    sys.exit(main())
