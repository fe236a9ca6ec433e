#!/usr/bin/env bash
# Sets up (scripts/setup.sh) and opens the trainer window; arguments go to visual-trainer.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/visual-trainer "$@"
