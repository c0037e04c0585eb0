#!/usr/bin/env bash
# The main job: set up (once) and run the default benchmark suite. Extra args go to `neuromark run`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
exec .venv/bin/neuromark run "$@"
