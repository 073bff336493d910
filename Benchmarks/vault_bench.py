"""Helpers the vault benchmarks share (merge_bench.py, sync_bench.py): generated prescriptions
as an rxvault export, a timed run of the binary, and the environment of one computer."""
import json, os, random, subprocess, sys, time


def generate(n, seed, start):
    rng = random.Random(seed)
    out = []
    for i in range(start, start + n):
        y, m, d = 2020 + i % 6, 1 + i % 12, 1 + i % 28
        rx = {"kind": "glasses", "patient": {"name": f"Patient {i}"}, "prescriber": {"name": "Dr Lee"},
              "issued": f"{y:04d}-{m:02d}-{d:02d}", "expires": f"{y + 2:04d}-{m:02d}-{d:02d}",
              "right": {"sphere": -0.25 * (i % 40)}, "left": {"sphere": -0.25 * ((i + 3) % 40)}}
        out.append({"id": "%032x" % rng.getrandbits(128), "version": 1, "recorded": "2026-01-01T00:00:00Z",
                    "prescription": rx})
    return out


def write_export(path, records):
    with open(path, "w") as f:
        json.dump({"schema": "rxvault/export/v1", "exported": "2026-01-01T00:00:00Z", "prescriptions": records}, f)


def run(args, env):
    """Runs the binary; returns seconds taken and its stdout (exits on failure)."""
    start = time.perf_counter()
    done = subprocess.run(args, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"failed: {' '.join(args)}\n{done.stderr.decode()}")
    return elapsed, done.stdout.decode()


def env_for(home, vault, passphrase_file):
    """One computer: its own HOME (its own replica and anchor)."""
    os.makedirs(home, exist_ok=True)
    return dict(PATH=os.environ.get("PATH", "/usr/bin:/bin"), HOME=home, LANG="C.UTF-8",
                RXVAULT_PASSPHRASE_FILE=passphrase_file, RXVAULT_PATH=vault, RXVAULT_NO_AGENT="1")
