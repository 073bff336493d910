#!/usr/bin/env bash
# The vault in PostgreSQL beside the same work on a file, in one run (issue 25): import of
# 100,000 prescriptions, `query --expiring-within 60d`, API reads/s and p99 with 16 connections
# for one `serve` on each, and two `serve` on the database behind nginx against one, with the
# CPU each side used. Prints every goal with its ratio and a verdict; see
# Benchmarks/postgres_bench.py for what is measured and the knobs (PRESCRIPTIONS, GRANTED,
# CONNECTIONS, SECONDS, ROUNDS, RUNS).
#   exit 0 every goal met, 1 not met, 2 cannot run. Installs postgresql, wrk, nginx-light and age
#   (Debian) when missing; starts and removes a PostgreSQL cluster of its own (as the postgres
#   user when run as root). RXVAULT_BIN=/path/to/rxvault measures that binary instead of building.
set -euo pipefail
cd "$(dirname "$0")/.."
missing=()
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
command -v wrk >/dev/null || missing+=(wrk)
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || missing+=(nginx-light)
command -v age >/dev/null || missing+=(age)
if [ ${#missing[@]} -gt 0 ]; then
    echo "postgres: installing ${missing[*]}" >&2
    if [ "$(id -u)" -eq 0 ]; then sudo=(); elif command -v sudo >/dev/null; then sudo=(sudo); else
        echo "postgres: needs ${missing[*]} (apt-get install)" >&2; exit 2
    fi
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
export PATH="$PATH:/usr/sbin"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rxvault-postgres.XXXXXX")
if [ "${KEEP_TMP:-0}" = 1 ]; then trap 'echo "kept $tmp" >&2' EXIT; else trap 'rm -rf "$tmp"' EXIT; fi
if [ -n "${RXVAULT_BIN:-}" ]; then
    bin=$RXVAULT_BIN
else
    echo "Building rxvault (release)..."
    if ! swift build -c release --product rxvault >"$tmp/build.log" 2>&1; then
        tail -40 "$tmp/build.log" >&2
        echo "postgres: release build failed" >&2
        exit 2
    fi
    bin="$(swift build -c release --show-bin-path)/rxvault"
fi
python3 Benchmarks/postgres_bench.py "$bin" "$tmp"
