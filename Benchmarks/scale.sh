#!/usr/bin/env bash
# Import, export and query at 100,000 prescriptions against SQLCipher on the same rows (scale.py).
# Needs Debian's sqlcipher and GNU time (installed here when missing) and builds the release binary.
# N=20000 Benchmarks/scale.sh for a quicker run.
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in sqlcipher:sqlcipher time:/usr/bin/time; do
    package=${tool%%:*} command=${tool#*:}
    command -v "$command" >/dev/null || { echo "installing $package" >&2; apt-get install -y -qq "$package" >/dev/null; }
done
swift build -c release --product rxvault 2>&1 | grep -E "error|warning: [^']" >&2 || true
bin="$(swift build -c release --show-bin-path)/rxvault"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 Benchmarks/scale.py "$bin" "$work"
