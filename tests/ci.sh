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
# Every test (without -m, pytest runs the fast tier only: addopts in pyproject.toml), in two
# runs side by side, both on two workers (pytest-xdist). The browser tests run in the
# foreground, each module's on one worker (--dist loadgroup: a module's tests may share its
# loaded page), each worker driving its own Chromium with Pyodide. The tests that need no
# browser run beside them at the lowest CPU priority (nice 19; one BLAS thread each): they
# take the cores the browsers leave idle and give them back as soon as Chromium wants them.
# Their report is printed once both runs have ended; the script fails if either failed.
# -p no:benchmark: a pytest-benchmark installed on the machine refuses to run under xdist.
python3 -m mypy &  # beside the site's build (one core each), checked below
mypy=$!
python3 build.py  # the site, once, before both runs (tests that need it find it fresh)
wait "$mypy"
others_log="$(mktemp)"
OPENBLAS_NUM_THREADS=1 nice -n 19 python3 -m pytest -q -p no:cacheprovider -p no:benchmark \
  -n 2 --dist worksteal -m "not browser" "$@" >"$others_log" 2>&1 &
others=$!
# --durations: the slowest browser tests, so a CI log shows where the tier's time went
browser_status=0
python3 -m pytest -q -p no:cacheprovider -p no:benchmark -n 2 --dist loadgroup -m "browser" \
  --durations=15 "$@" \
  || browser_status=$?
others_status=0
wait "$others" || others_status=$?
echo "== the tests that need no browser (run beside the browser tests, nice 19) =="
cat "$others_log"
rm -f "$others_log"
if [ "$browser_status" -ne 0 ] || [ "$others_status" -ne 0 ]; then
  echo "failed: browser tests exit $browser_status, the others exit $others_status" >&2
  exit 1
fi
