"""``python -m pyplay.bench``: the benchmarks (developer-only; see :mod:`pyplay.bench`)."""

from __future__ import annotations

import os
import sys

# before NumPy loads its BLAS: one thread, like the torch baseline
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

from pyplay.bench.report import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
