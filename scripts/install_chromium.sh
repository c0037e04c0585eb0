#!/usr/bin/env bash
# Headless Chromium for the leaderboard's browser test (tests/test_leaderboard.py), from
# Debian's package `chromium` (~290 MB installed). Already there: nothing to do. Never fails:
# without apt-get, root or the network the test skips and says why.
set -uo pipefail
if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install_chromium: no apt-get here; the leaderboard browser test will skip" >&2
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo -n"
if $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium; then
  echo "install_chromium: $(chromium --version 2>/dev/null)"
else
  echo "install_chromium: apt-get could not install chromium; the leaderboard browser test will skip" >&2
fi
exit 0
