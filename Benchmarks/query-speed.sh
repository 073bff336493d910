#!/usr/bin/env bash
# Query speed against SQLCipher on 100 and 100,000 prescriptions (see query_speed.py).
# Needs Debian's sqlcipher (installed here when missing) and a release build.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v sqlcipher >/dev/null || { echo "installing sqlcipher" >&2; apt-get install -y -qq sqlcipher >/dev/null; }
swift build -c release 2>&1 | grep -E "error|warning: [^']" >&2 || true
bin="$(swift build -c release --show-bin-path)/rxvault"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 Benchmarks/query_speed.py "$bin" "$work"
