#!/usr/bin/env bash
# Merging two copies of a 10,000-prescription vault that each added 100, against a plain import
# of the same 100, and a merge with nothing to move: prints the times and the ratios.
# Release build; see merge_bench.py. PRESCRIPTIONS, CHANGES and RUNS set the sizes.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release 2>&1 | grep -E "error|warning: [^']" >&2 || true
bin="$(swift build -c release --show-bin-path)/rxvault"
work="$(mktemp -d /tmp/rxmerge.XXXXXX)"
trap 'rm -rf "$work"' EXIT
python3 Benchmarks/merge_bench.py "$bin" "$work"
