#!/usr/bin/env bash
# The chips' SDKs the `akida` and `xylo` SUTs drive (docs/chips.md), installed into .venv so that
# their tests run (CI: .ci/run). akida comes with `neuromark[akida]` (in `all`); this script adds
# what pip cannot resolve from the extras:
#   - rockpool 3.1.0 with --no-deps (its torch extra pulls torchvision, which does not import next
#     to CPU torch; its real needs numpy/scipy are in `neuromark[xylo]`);
#   - xylosim 0.1.3, built from its sdist with pybind11 and the system C++ compiler
#     (--no-build-isolation: the build sees .venv's pybind11/setuptools; ~2.5 min on 2 busy cores).
# Only the package registry is reached. Re-runs pip only when the pins change.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || bash scripts/bootstrap.sh
want="akida==2.19.3 rockpool==3.1.0 xylosim==0.1.3 pybind11==3.1.0"
stamp=.venv/.neuromark-chip-sdks
if [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then exit 0; fi
.venv/bin/python -m pip install -q -c constraints-cpu.txt akida==2.19.3 pybind11==3.1.0 'setuptools>=77' numpy scipy
.venv/bin/python -m pip install -q --no-deps rockpool==3.1.0
if command -v c++ >/dev/null 2>&1 || command -v g++ >/dev/null 2>&1; then
  .venv/bin/python -m pip install -q --no-deps --no-build-isolation xylosim==0.1.3
else
  echo "chip_sdks: no C++ compiler; xylosim not built, the Xylo SUT's tests skip (install one: sudo apt-get install -y g++)" >&2
  exit 0
fi
echo "$want" > "$stamp"
