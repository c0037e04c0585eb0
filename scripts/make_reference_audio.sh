#!/usr/bin/env bash
# The cochlea's reference recording: the word "seven" from espeak-ng, as 48 kHz mono 16-bit
# FLAC, silence trimmed, 50 ms of silence either side, peak at -1 dBFS; no dither (-D), so
# the file is the same on every run with the same espeak-ng and sox versions.
# Usage: bash scripts/make_reference_audio.sh [OUT.flac]
#   (default tests/data/reference/spoken_seven_espeak_48k.flac; provenance in that folder's README)
set -euo pipefail
out=${1:-tests/data/reference/spoken_seven_espeak_48k.flac}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
espeak-ng -v en-us -s 160 -w "$tmp/seven.wav" "seven"
sox -D "$tmp/seven.wav" -r 48000 -c 1 -b 16 "$out" \
  silence 1 0.005 0.5% reverse silence 1 0.005 0.5% reverse norm -1 pad 0.05 0.05
echo "$out: $(soxi -D "$out") s, sha256 $(sha256sum "$out" | cut -d' ' -f1)"
