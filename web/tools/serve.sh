#!/usr/bin/env bash
# Builds the offline playground (if its sources changed) and serves it on localhost.
# Installs what it needs on a fresh Debian machine: Node.js/npm (to fetch Pyodide from npm)
# and the ui extra (Panel, Bokeh: their JS/CSS are copied into the site).
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v npm >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm
fi
python3 -m pip install -q --disable-pip-version-check -e '.[ui]'
exec python3 build.py serve "$@"
