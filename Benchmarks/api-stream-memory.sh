#!/usr/bin/env bash
# rxvault serve's memory while it streams a ~32 MiB attachment to slow readers (one, then eight
# at once, each reading 8 KiB/s for a while, then the rest at full speed): the server's own
# VmHWM and sampled VmRSS (/proc/PID/status) against its level before, in 64 KiB chunks.
# A benchmark, not a test: it builds rxvault in release mode, measures, prints a table and a verdict.
#
#   Benchmarks/api-stream-memory.sh [--slow-seconds N] [--readers N] [--threshold-chunks N]
#   exit 0 PASS, 1 FAIL, 2 cannot run.  KEEP_TMP=1 keeps the vault and the server's log.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v python3 >/dev/null || { echo "api-stream-memory: needs python3" >&2; exit 2; }
command -v age >/dev/null || { echo "api-stream-memory: needs age (the reference client opens its challenge with it)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rxvault-stream.XXXXXX")
if [ "${KEEP_TMP:-0}" = 1 ]; then trap 'echo "kept $tmp" >&2' EXIT; else trap 'rm -rf "$tmp"' EXIT; fi
echo "Building rxvault (release)..."
if ! swift build -c release >"$tmp/build.log" 2>&1; then
    tail -40 "$tmp/build.log" >&2
    echo "api-stream-memory: release build failed" >&2
    exit 2
fi
bin="$(swift build -c release --show-bin-path)/rxvault"
echo "rxvault $("$bin" --version), $(uname -sr), $(nproc) CPUs"
python3 Benchmarks/api_stream_memory.py "$bin" "$tmp" "$@"
