r"""System identification on a bundled series: the Narendra-Parthasarathy nonlinear plant.

The plant (Narendra & Parthasarathy 1990) is

.. math::

    y(t + 1) = \frac{y(t)}{1 + y(t)^2} + u(t)^3, \qquad y(1) = 0,

driven by an *amplitude-modulated pseudo-random* input, the usual identification signal: a
level drawn uniformly from :math:`[-1, 1]` held for a random 1 to 10 steps, then a new level.
The output reacts to each step of the input with a short transient, so the present input alone
does not determine the present output: a static network can only learn the average map from
:math:`u(t)` to :math:`y(t)`, a dynamic one (e.g. NARX with delays 1, 2 on both) can learn the
plant exactly.

Data file ``pyplay/tasks/data/narendra.csv``
    3000 rows ``u,y`` (header line, six decimals), made once by :func:`narendra_series` with
    its defaults and written with::

        import numpy as np
        from pyplay.tasks.sysid import narendra_series

        u, y = narendra_series(n=3000, seed=2024)
        np.savetxt("pyplay/tasks/data/narendra.csv", np.c_[u, y], fmt="%.6f",
                   delimiter=",", header="u,y", comments="")

    (the tests check that the file still matches this recipe).

The Time series lesson (:mod:`pyplay.ui.lessons.timeseries`) loads it with :func:`load_narendra`,
holds out its last 500 samples and trains on windows of the rest; a series of your own is read
by :func:`parse_columns`.
"""

from __future__ import annotations

from importlib import resources
from io import StringIO

import numpy as np

from pyplay._checks import check_int

__all__ = [
    "DATA_FILE",
    "MAX_ROWS",
    "load_narendra",
    "narendra_series",
    "parse_columns",
]

DATA_FILE = "data/narendra.csv"


def narendra_series(n: int = 3000, seed: int = 2024) -> tuple[np.ndarray, np.ndarray]:
    """The input ``u`` (n,) and output ``y`` (n,) of the plant (see the module docstring)."""
    n = check_int("n", n, min_value=2)
    rng = np.random.default_rng(check_int("seed", seed, min_value=0))
    levels: list[float] = []
    while len(levels) < n:
        levels += [float(rng.uniform(-1.0, 1.0))] * int(rng.integers(1, 11))
    u = np.asarray(levels[:n])  # (n,)
    y = np.zeros(n)  # (n,)
    for t in range(n - 1):
        y[t + 1] = y[t] / (1.0 + y[t] ** 2) + u[t] ** 3
    return u, y


def load_narendra() -> tuple[np.ndarray, np.ndarray]:
    """The bundled series: ``u`` (3000,) and ``y`` (3000,), float64."""
    text = resources.files("pyplay.tasks").joinpath(DATA_FILE).read_text("utf-8")
    data = np.loadtxt(StringIO(text), delimiter=",", skiprows=1)  # (3000, 2)
    return data[:, 0].copy(), data[:, 1].copy()  # (3000,), (3000,)


MAX_ROWS = 20_000


def parse_columns(text: str) -> tuple[np.ndarray | None, np.ndarray]:
    """A series from CSV text: one column ``y``, or two columns ``u, y`` (input, output).

    Values are separated by commas, semicolons, tabs or spaces; a non-numeric first line is a
    header. Every row must have the same number of values (1 or 2), at least 20 and at most
    :data:`MAX_ROWS` rows, all finite. Returns ``(u, y)``, ``u`` None for one column.
    Raises ValueError naming the bad line.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    rows: list[list[float]] = []
    for k, line in enumerate(text.splitlines(), start=1):
        tokens = line.replace(",", " ").replace(";", " ").split()
        if not tokens:
            continue
        try:
            row = [float(tok) for tok in tokens]
        except ValueError:
            if not rows and k == 1:
                continue  # a header line
            raise ValueError(
                f"line {k}: {line.strip()[:40]!r} holds a value that is not a number"
            ) from None
        if len(row) not in (1, 2) or (rows and len(row) != len(rows[0])):
            want = "1 or 2" if not rows else str(len(rows[0]))
            raise ValueError(f"line {k} must hold {want} value(s), got {len(row)}")
        if not all(np.isfinite(row)):
            raise ValueError(f"line {k} must hold finite numbers, got {line.strip()[:40]!r}")
        rows.append(row)
        if len(rows) > MAX_ROWS:
            raise ValueError(f"the series must have at most {MAX_ROWS:,} rows, got more")
    if len(rows) < 20:
        raise ValueError(f"the series must have at least 20 rows, got {len(rows)}")
    data = np.asarray(rows, dtype=np.float64)  # (N, C)
    if data.shape[1] == 1:
        return None, data[:, 0].copy()
    return data[:, 0].copy(), data[:, 1].copy()
