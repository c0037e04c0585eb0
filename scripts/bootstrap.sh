#!/usr/bin/env bash
# Creates .venv (if needed) and installs neuromark with all extras (gymnasium for closed_loop
# included: the control extra; onnx + onnxruntime for `neuromark export onnx`: the onnx
# extra), torch pinned to CPU.
# Re-runs pip only when pyproject.toml or the constraints change. Installs the Debian
# packages the benchmarks need (espeak-ng, sox) when it can, and says how otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

if ! command -v espeak-ng >/dev/null 2>&1 || ! command -v sox >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq espeak-ng sox \
      >/dev/null) || echo "bootstrap: could not install espeak-ng/sox; run: sudo apt-get install -y espeak-ng sox" >&2
  else
    echo "bootstrap: espeak-ng/sox missing; the spoken-digit corpus needs them: sudo apt-get install -y espeak-ng sox" >&2
  fi
fi
if ! command -v cc >/dev/null 2>&1 && ! command -v gcc >/dev/null 2>&1; then
  echo "bootstrap: no C compiler found; jitcdde cannot regenerate Mackey-Glass series, the shipped data files are used (install one with: sudo apt-get install -y gcc)" >&2
fi

[ -x .venv/bin/python ] || "$PY" -m venv .venv
stamp=.venv/.neuromark-install
want=$(cat pyproject.toml constraints-cpu.txt | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -c constraints-cpu.txt torch==2.13.0
  .venv/bin/python -m pip install -q -c constraints-cpu.txt -e '.[all]'
  echo "$want" > "$stamp"
fi
