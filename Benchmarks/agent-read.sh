#!/usr/bin/env bash
# An owner's list and show through the agent (rxvault unlock) against a client's --identity reads
# of the same vault: prints both times and the ratio; exit 0 PASS (within 1.5x), 1 FAIL.
# Release build; see agent_read.py. RUNS (default 9) sets the runs per measurement.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release 2>&1 | grep -E "error|warning: [^']" >&2 || true
bin="$(swift build -c release --show-bin-path)/rxvault"
# Short: the agent's socket path must fit in 107 bytes.
work="$(mktemp -d /tmp/rxbench.XXXXXX)"
trap 'RXVAULT_NO_AGENT=1 XDG_RUNTIME_DIR="$work/run100" "$bin" lock --all >/dev/null 2>&1 || true; XDG_RUNTIME_DIR="$work/run1000" "$bin" lock --all >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
python3 Benchmarks/agent_read.py "$bin" "$work"
