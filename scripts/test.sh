#!/usr/bin/env bash
# The test command: set up (once), lint with ruff, run the offline test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
.venv/bin/ruff check src tests bench scripts
exec .venv/bin/python -m pytest "$@"
