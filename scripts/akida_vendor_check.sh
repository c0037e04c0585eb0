#!/usr/bin/env bash
# Re-derive configs/system/spoken_digits_8/user_models/keras_convnet.fbz through BrainChip's own
# path in a scratch environment (issue 57.3; docs/chips.md "Your own model on a chip") and compare
# it with the shipped one. Not run by .ci/run: it downloads MetaTF (~600 MB: tensorflow 2.19.1)
# into a scratch venv, which CI's network-less, numpy-2.4 environment cannot hold.
#   bash scripts/akida_vendor_check.sh [SCRATCH_VENV]     (default /tmp/akvenv)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="${1:-/tmp/akvenv}"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "akida==2.19.3" "cnn2snn==2.19.3" "quantizeml==1.2.5" "numpy<2.2"
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$root"
PYTHONPATH="$root/src" "$root/.venv/bin/python" scripts/akida_vendor_model.py export --out "$work/sd8.npz"
OMP_NUM_THREADS=1 TF_CPP_MIN_LOG_LEVEL=3 "$venv/bin/python" scripts/akida_vendor_model.py build \
  --features "$work/sd8.npz" --out "$work/keras_convnet.fbz" 2>/dev/null | tail -1
shipped="configs/system/spoken_digits_8/user_models/keras_convnet"
if cmp -s "$work/keras_convnet.fbz" "$shipped.fbz" && cmp -s "$work/keras_convnet.json" "$shipped.json"; then
  echo "re-derived $shipped.fbz and .json: identical bytes"
else
  echo "re-derived $shipped.fbz: the bytes differ (sha256 $(sha256sum < "$work/keras_convnet.fbz" | cut -c1-16) vs $(sha256sum < "$shipped.fbz" | cut -c1-16))" >&2
  exit 1
fi
