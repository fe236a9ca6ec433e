#!/usr/bin/env bash
# Sets up (scripts/setup.sh) and runs the test suite; arguments go to pytest.
# Window tests start their own Xvfb when there is no display.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python -m pytest "$@"
