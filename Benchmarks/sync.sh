#!/usr/bin/env bash
# rxvault sync through a folder remote: a pull and merge of 100 changes each side of a 10,000-
# prescription vault, and a sync with nothing to move, against a plain import; bytes moved by one write.
# Release build; see sync_bench.py. PRESCRIPTIONS, CHANGES and RUNS set the sizes.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release 2>&1 | grep -E "error|warning: [^']" >&2 || true
bin="$(swift build -c release --show-bin-path)/rxvault"
work="$(mktemp -d /tmp/rxsync.XXXXXX)"
trap 'rm -rf "$work"' EXIT
python3 Benchmarks/sync_bench.py "$bin" "$work"
