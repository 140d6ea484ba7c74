"""Figures of the built playground in headless Chromium: ``python web/measure.py``.

Start-up (bare Pyodide + NumPy, the playground cold and on a second visit, bytes transferred)
and the time of a training step in the page against the same step natively. The tool itself
is ``web/tools/pagemeasure.py``; it builds the site first when it is stale.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "tools"))

from pagemeasure import main

if __name__ == "__main__":
    sys.exit(main())
