#!/usr/bin/env bash
# Cross-checks against reference packages (neurobench 2.3.0) in a scratch venv, so that they
# never become dependencies. neurobench declares torchaudio, which does not import against the
# CPU torch here and is not needed by its metrics: it is installed with --no-deps.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${REFERENCE_VENV:-.cache/reference-venv}
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import neurobench" 2>/dev/null; then
  python3 -m venv "$venv"
  if ! { "$venv/bin/pip" install -q torch==2.13.0 &&
         "$venv/bin/pip" install -q -c constraints-cpu.txt snntorch numpy tqdm numba llvmlite \
           pydantic pyyaml pytest h5py scipy matplotlib &&
         "$venv/bin/pip" install -q --no-deps neurobench==2.3.0 tonic==1.7.0; }; then
    echo "reference checks: could not build the scratch venv; neurobench cross-checks NOT run" >&2
    exit 1
  fi
fi
"$venv/bin/pip" install -q --no-deps -e . >/dev/null
# tonic 1.7.0 (installed --no-deps) imports importRosbag and requests (bench/e2e_shd.py's route)
if ! "$venv/bin/python" -c "import tonic" 2>/dev/null; then
  "$venv/bin/pip" install -q --no-deps importRosbag==1.0.4 &&
    "$venv/bin/pip" install -q -c constraints-cpu.txt requests || {
    echo "reference checks: could not install tonic's imports; e2e comparison NOT possible" >&2; exit 1; }
fi
# lauscher 1.0.1 (the Heidelberg cochlea) for the cochlea cross-check: it runs lauscher on
# our generated recording (tests/data/reference/spoken_seven_espeak_48k.flac), ~5 min, ~5.6 GB
if ! "$venv/bin/python" -c "import lauscher" 2>/dev/null; then
  "$venv/bin/pip" install -q -c constraints-cpu.txt lauscher==1.0.1 soundfile || {
    echo "reference checks: could not install lauscher; cochlea cross-check NOT run" >&2; exit 1; }
fi
# torchaudio for neurobench's own audio pre-processing (S2SPreProcessor, the M5 example's
# Resample): no wheel matches torch 2.13, so 2.11.1 goes in --no-deps and its compiled
# extension is removed; MelSpectrogram and Resample are plain torch code that does not need it
if ! "$venv/bin/python" -c "import torchaudio.transforms" 2>/dev/null; then
  "$venv/bin/pip" install -q --no-deps torchaudio==2.11.1 || {
    echo "reference checks: could not install torchaudio; GSC pre-processing check NOT run" >&2; exit 1; }
  rm -f "$("$venv/bin/python" -c 'import importlib.util as u; print(u.find_spec("torchaudio").submodule_search_locations[0])')"/lib/*.so
fi
# in this venv neurobench must import: a failed import is an error, not a skip
NEUROMARK_REQUIRE_REFERENCE=1 exec "$venv/bin/python" -m pytest -p no:cacheprovider -m reference \
  tests/test_neurobench_reference.py tests/test_neurobench_v1_reference.py \
  tests/test_neurobench_gsc_reference.py tests/test_cochlea.py tests/test_nmnist_reference.py
