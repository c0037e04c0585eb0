#!/usr/bin/env bash
# One prepared run of every CUDA check (issue 34, docs/devices.md), for a short session on a
# lent GPU machine. Each step has its own time limit and writes its log under $OUT (or
# ./gpu-check); a failing step never stops the next one.
#
#   bash bench/gpu_check.sh            # python3 must hold torch with CUDA and our needs
#
# Steps: machine facts; the CUDA-only tests; bench/overhead.py --device cuda on the four GPU
# cases; conv-large's fixed and per-step costs apart (bench/fixed_costs.py: per-call or per-batch gap); the same cases' figures on the CPU (to compare); `neuromark run --device cuda` on the
# spoken-digit, primate, closed-loop, activity and EEG short configs; then (unless QUICK=1) the
# CPU figures of the same cases and the whole test suite with CUDA visible.
set -u
OUT=${OUT:-gpu-check}
mkdir -p "$OUT"
export PYTHONPATH="src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
export NEUROMARK_CACHE_DIR=${NEUROMARK_CACHE_DIR:-/tmp/neuromark-gpu-cache}
PY=${PY:-python3}

step() {  # step NAME SECONDS COMMAND...
  local name=$1 limit=$2; shift 2
  local t0=$SECONDS
  echo "=== $name (limit ${limit}s)"
  timeout "$limit" "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  echo "=== $name: rc $rc, $((SECONDS - t0)) s"
  tail -n "${TAIL:-25}" "$OUT/$name.log"
}

step facts 30 bash -c "nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; nproc;
  $PY -c 'import torch, numpy, numba; print(torch.__version__, torch.version.cuda,
  torch.cuda.is_available(), torch.cuda.get_device_name(0), numpy.__version__, numba.__version__)'"
step cuda_tests 90 "$PY" -m pytest -q -p no:cacheprovider tests/test_devices.py \
  tests/test_counting_path.py tests/test_coverage.py tests/test_instrument.py -rs
step overhead_cuda 150 "$PY" bench/overhead.py --device cuda --rounds 3
step split_cuda 100 "$PY" bench/fixed_costs.py --device cuda --case conv-large --rounds 5 --long 40
step run_cuda 150 "$PY" -m neuromark run configs/shd/spoken_digits_rsnn_suite.yaml \
  configs/primate_reaching/ann2d_suite.yaml configs/closed_loop/ops_ann_suite.yaml \
  configs/activity/wisdm_ffsnn_short.yaml configs/eeg_mi/thor_eeg_snn_short.yaml --device cuda --out /tmp/run_cuda --quiet
tar -czf "$OUT/run_cuda.tgz" -C /tmp run_cuda 2>/dev/null
[ "${QUICK:-0}" = 1 ] && exit 0  # QUICK=1: the GPU steps only
step overhead_cpu_figures 50 "$PY" bench/overhead.py --device cpu --rounds 1 --case wide \
  --case conv-large --case reference-large
TAIL=40 step all_tests 100 "$PY" -m pytest -q -p no:cacheprovider -n 8 --timeout 60 tests
exit 0
