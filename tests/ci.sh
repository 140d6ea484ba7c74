#!/usr/bin/env bash
# Installs everything the test suite needs on a fresh Debian machine (root), then runs every
# check: ruff format, ruff lint, mypy, and pytest (core, parity with PyTorch, UI logic, the core
# inside Pyodide, end-to-end browser tests against the built site).
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
command -v node >/dev/null 2>&1 || need_apt+=(nodejs)
command -v npm >/dev/null 2>&1 || need_apt+=(npm)
if [ ${#need_apt[@]} -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}"
fi

python3 -m pip install -q --disable-pip-version-check -e '.[ui,dev]'

python3 -m ruff format --check .
python3 -m ruff check .
python3 -m mypy
# Every test (without -m, pytest runs the fast tier only: addopts in pyproject.toml), in two
# runs: the tests that need no browser on two workers (pytest-xdist; one BLAS thread each, so
# the two share the machine's cores instead of fighting for them), then the browser tests one
# at a time (each drives a whole Chromium with Pyodide, which already uses two threads; on two
# workers, --dist loadgroup keeps a module's tests together, they ran only about 10% faster
# and timed out under the load). -p no:benchmark: a pytest-benchmark installed on the machine
# refuses to run under xdist.
python3 build.py  # the site, once, before the workers (tests that need it find it fresh)
OPENBLAS_NUM_THREADS=1 python3 -m pytest -q -p no:cacheprovider -p no:benchmark \
  -n 2 --dist worksteal -m "not browser" "$@"
# --durations: the slowest browser tests, so a CI log shows where the tier's time went
python3 -m pytest -q -p no:cacheprovider -p no:benchmark -m "browser" --durations=15 "$@"
