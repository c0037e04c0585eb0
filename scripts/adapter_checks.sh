#!/usr/bin/env bash
# Equivalence tests of the framework adapters (SpikingJelly, Norse, Sinabs, Rockpool), each in its own
# scratch venv under .cache/adapter-venvs/<framework> (never one environment for all).
#
# Each venv holds only its framework, installed with --no-deps plus its real needs, on top
# of the project's .venv (a .pth file adds .venv's site-packages after the venv's own), so
# torch stays the CPU build and is not installed again. Never installed: torchvision and
# torchaudio (they do not import next to CPU torch), samna (sinabs' hardware stub, which
# pip-installs from the network when imported), sinabs' nir<=1.0.4 pin (it breaks snnTorch's
# NIR export; .venv's nir 1.0.8 is seen instead).
#
# Usage: scripts/adapter_checks.sh [spikingjelly|norse|sinabs|rockpool ...]   (default: all four)
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || bash scripts/bootstrap.sh
base=$(.venv/bin/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")

# framework -> "pip requirements installed with --no-deps" and its test file
declare -A PACKAGES=(
  [spikingjelly]="spikingjelly==2.0.0 loguru==0.7.3"
  [norse]="norse==1.1.0"
  [sinabs]="sinabs==3.1.3 pbr"
  [rockpool]="rockpool==3.1.0"
)
# what a framework's sdist needs to build (--no-build-isolation builds in the scratch venv)
declare -A BUILD=(
  [norse]="setuptools-scm==8.1.0"
)
declare -A TESTS=(
  [spikingjelly]=tests/test_adapter_spikingjelly.py
  [norse]=tests/test_adapter_norse.py
  [sinabs]=tests/test_adapter_sinabs.py
  [rockpool]=tests/test_adapter_rockpool.py
)

frameworks=("$@")
[ ${#frameworks[@]} -gt 0 ] || frameworks=(spikingjelly norse sinabs rockpool)
status=0
for fw in "${frameworks[@]}"; do
  [ -n "${PACKAGES[$fw]:-}" ] || { echo "adapter checks: unknown framework $fw" >&2; exit 2; }
  venv=.cache/adapter-venvs/$fw
  stamp=$venv/.packages
  if [ ! -x "$venv/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "${PACKAGES[$fw]}" ]; then
    rm -rf "$venv"
    python3 -m venv --without-pip "$venv"
    site=$("$venv/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
    echo "import site; site.addsitedir('$base')" > "$site/zz_neuromark_base.pth"
    # shellcheck disable=SC2086
    if [ -n "${BUILD[$fw]:-}" ] && ! .venv/bin/python -m pip --python "$venv/bin/python" \
         install -q --no-deps ${BUILD[$fw]}; then
      echo "adapter checks: could not install $fw's build needs; its tests NOT run" >&2
      status=1; continue
    fi
    # shellcheck disable=SC2086
    if ! .venv/bin/python -m pip --python "$venv/bin/python" install -q --no-deps \
         --no-build-isolation ${PACKAGES[$fw]}; then
      echo "adapter checks: could not install $fw; its equivalence tests NOT run" >&2
      status=1; continue
    fi
    echo "${PACKAGES[$fw]}" > "$stamp"
  fi
  # in its own venv the framework must import: a failed import is an error, not a skip
  NEUROMARK_REQUIRE_FRAMEWORK=$fw "$venv/bin/python" -m pytest -p no:cacheprovider \
    "${TESTS[$fw]}" || status=1
done
exit $status
