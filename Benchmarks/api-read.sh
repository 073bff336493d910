#!/usr/bin/env bash
# rxvault serve against nginx: reads per second and p50/p99 latency of GET /VisionPrescription/{id}
# with a valid token, 16 connections over loopback TCP (wrk --latency), on a vault of 100,000
# prescriptions; nginx serves the same FHIR JSON from files, and a bare Hummingbird route
# (Benchmarks/BareHummingbird, the same Hummingbird version) the same bytes from memory: the
# ceiling rxvault's API can approach on Hummingbird. Prints every run, the medians, the ratios and
# a verdict against the aims (issue 28: half of nginx's reads per second, p99 under 5 ms).
# See Benchmarks/api_read.py for what is measured and the knobs (PRESCRIPTIONS, GRANTED, ROUNDS,
# RXVAULT_BENCH_CACHE to keep the imported vault between runs: the import takes about 2 minutes).
#   exit 0 aims met, 1 not met, 2 cannot run. Installs wrk and nginx-light (Debian) when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
missing=()
command -v wrk >/dev/null || missing+=(wrk)
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || missing+=(nginx-light)
if [ ${#missing[@]} -gt 0 ]; then
    echo "api-read: installing ${missing[*]}" >&2
    if [ "$(id -u)" -eq 0 ]; then sudo=(); elif command -v sudo >/dev/null; then sudo=(sudo); else
        echo "api-read: needs ${missing[*]} (apt-get install)" >&2; exit 2
    fi
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
export PATH="$PATH:/usr/sbin"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rxvault-api-read.XXXXXX")
if [ "${KEEP_TMP:-0}" = 1 ]; then trap 'echo "kept $tmp" >&2' EXIT; else trap 'rm -rf "$tmp"' EXIT; fi
echo "Building rxvault (release)..."
if ! swift build -c release >"$tmp/build.log" 2>&1; then
    tail -40 "$tmp/build.log" >&2
    echo "api-read: release build failed" >&2
    exit 2
fi
bin="$(swift build -c release --show-bin-path)/rxvault"
echo "Building the bare Hummingbird server (release)..."
if ! swift build -c release --package-path Benchmarks/BareHummingbird >"$tmp/bare-build.log" 2>&1; then
    tail -40 "$tmp/bare-build.log" >&2
    echo "api-read: building Benchmarks/BareHummingbird failed" >&2
    exit 2
fi
export BARE_HUMMINGBIRD="$(swift build -c release --package-path Benchmarks/BareHummingbird --show-bin-path)/BareHummingbird"
echo "rxvault $("$bin" --version), nginx $(nginx -v 2>&1 | sed 's/.*\///'), $(wrk --version 2>&1 | head -1 | awk '{print $1, $2}'), $(uname -sr), $(nproc) CPUs"
python3 Benchmarks/api_read.py "$bin" "$tmp"
