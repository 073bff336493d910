#!/usr/bin/env bash
# Import, export and query at 100,000 prescriptions against SQLCipher on the same rows (scale.py):
# import (json, fhir) against sqlcipher's .import, export (json, csv, fhir) against sqlcipher writing
# CSV, query against sqlcipher with an index on the expiry date, show / a client's list / grants at
# 100 and at N, and import linearity (SMALL and 8 x SMALL). Prints every figure (wall and CPU
# seconds, peak memory), the ratios and a verdict per goal; exit 0 when every goal is met.
#   N=10000 SMALL=1000 Benchmarks/scale.sh     a quick run (minutes); RUNS, FHIR_BIG=0: see scale.py
# Installs Debian's sqlcipher and GNU time when missing; builds the release binary.
set -euo pipefail
cd "$(dirname "$0")/.."
missing=()
command -v sqlcipher >/dev/null || missing+=(sqlcipher)
[ -x /usr/bin/time ] || missing+=(time)
if [ ${#missing[@]} -gt 0 ]; then
    echo "scale: installing ${missing[*]}" >&2
    if [ "$(id -u)" -eq 0 ]; then sudo=(); elif command -v sudo >/dev/null; then sudo=(sudo); else
        echo "scale: needs ${missing[*]} (apt-get install)" >&2; exit 2
    fi
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/rxvault-scale.XXXXXX")
if [ "${KEEP_TMP:-0}" = 1 ]; then trap 'echo "kept $work" >&2' EXIT; else trap 'rm -rf "$work"' EXIT; fi
echo "Building rxvault (release)..."
if ! swift build -c release --product rxvault >"$work/build.log" 2>&1; then
    tail -40 "$work/build.log" >&2
    echo "scale: release build failed" >&2
    exit 2
fi
bin="$(swift build -c release --show-bin-path)/rxvault"
echo "rxvault $("$bin" --version) (release), $(sqlcipher -version 2>/dev/null | head -1 | cut -c1-60), $(uname -sr), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
python3 Benchmarks/scale.py "$bin" "$work"
