#!/usr/bin/env python3
"""Owner reads through the agent against a client's --identity reads of the same vault.

The goal is that an owner `list` or `show` through the agent (after `rxvault unlock`) cost at
most 1.5x a client's `--identity` read of the same vault. The client is granted every
prescription, so both sides list the same records. Whole processes are timed (median of RUNS
runs after one warm-up), on vaults of 100 and 1,000 prescriptions. For scale, the owner's read
with the passphrase (Argon2id "interactive": what the agent saves) is shown too.
Run it through Benchmarks/agent-read.sh.
"""
import json, os, random, statistics, subprocess, sys, time

RXVAULT, WORK, RUNS = sys.argv[1], sys.argv[2], int(os.environ.get("RUNS", "9"))
TODAY = "2026-04-20"
PASS = "benchmark passphrase"
LIMIT = 1.5


def generate(n, seed=11):
    rng = random.Random(seed)
    out = []
    for i in range(n):
        kind = "glasses" if i % 3 else "contacts"
        y, m, d = 2020 + i % 6, 1 + i % 12, 1 + i % 28
        rx = {"kind": kind, "patient": {"name": f"Patient {i}"}, "prescriber": {"name": "Dr Lee"},
              "issued": f"{y:04d}-{m:02d}-{d:02d}", "expires": f"{y + 2:04d}-{m:02d}-{d:02d}",
              "right": {"sphere": -0.25 * (i % 40)}, "left": {"sphere": -0.25 * ((i + 3) % 40)}}
        if kind == "contacts":
            for eye in ("right", "left"):
                rx[eye].update({"baseCurve": 8.6, "diameter": 14.2, "brand": "Acuvue"})
        out.append({"id": "%032x" % rng.getrandbits(128), "version": 1, "recorded": "2026-01-01T00:00:00Z", "prescription": rx})
    return out


def run(args, env):
    start = time.perf_counter()
    done = subprocess.run(args, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"failed: {' '.join(args)}\n{done.stderr.decode()}")
    return elapsed, done.stdout


def median(args, env):
    run(args, env)
    return statistics.median(run(args, env)[0] for _ in range(RUNS))


def measure(n):
    folder = os.path.join(WORK, str(n))
    runtime = os.path.join(WORK, f"run{n}")
    os.makedirs(folder)
    os.makedirs(runtime, mode=0o700)
    records = generate(n)
    export = os.path.join(folder, "export.json")
    with open(export, "w") as f:
        json.dump({"schema": "rxvault/export/v1", "exported": "2026-01-01T00:00:00Z", "prescriptions": records}, f)
    pw = os.path.join(folder, "pw")
    with open(pw, "w") as f:
        f.write(PASS + "\n")
    os.chmod(pw, 0o600)
    base = dict(PATH=os.environ.get("PATH", "/usr/bin:/bin"), HOME=folder, LANG="C.UTF-8", RXVAULT_TODAY=TODAY,
                RXVAULT_PATH=os.path.join(folder, "v.rxv"), XDG_RUNTIME_DIR=runtime)
    with_passphrase = dict(base, RXVAULT_PASSPHRASE_FILE=pw)
    run([RXVAULT, "init", "--kdf", "interactive"], with_passphrase)
    run([RXVAULT, "import", export], with_passphrase)
    key = os.path.join(folder, "shop.key")
    run([RXVAULT, "client", "add", "shop", "--generate", "--identity-out", key], with_passphrase)
    ids = [r["id"] for r in records]
    for i in range(0, n, 200):
        run([RXVAULT, "grant", "shop", *ids[i:i + 200], "--no-expiry"], with_passphrase)
    shown = ids[n // 2][:12]
    client = ["--identity", key]
    result = {}
    result["client list"] = median([RXVAULT, *client, "list"], base)
    result["client show"] = median([RXVAULT, *client, "show", shown], base)
    result["owner list, passphrase"] = median([RXVAULT, "list", "--no-agent"], with_passphrase)
    run([RXVAULT, "unlock", "--timeout", "10m"], with_passphrase)
    try:
        # No passphrase anywhere: these can only open through the agent.
        result["owner list, agent"] = median([RXVAULT, "list", "--no-input"], base)
        result["owner show, agent"] = median([RXVAULT, "show", shown, "--no-input"], base)
        listed = len(json.loads(run([RXVAULT, "list", "--format", "json"], base)[1])["prescriptions"])
        granted = len(json.loads(run([RXVAULT, *client, "list", "--format", "json"], base)[1])["prescriptions"])
    finally:
        run([RXVAULT, "lock"], base)
    if listed != n or granted != n:
        sys.exit(f"the two sides list different sets: owner {listed}, client {granted}, vault {n}")
    return result


sizes = (100, 1000)
results = {n: measure(n) for n in sizes}
rows = ["owner list, agent", "client list", "owner show, agent", "client show", "owner list, passphrase"]
print(f"owner reads through the agent vs a client's --identity reads; median of {RUNS} runs, whole processes, seconds")
print(f"{'':28}" + "".join(f"{f'{n:,} prescriptions':>22}" for n in sizes))
for row in rows:
    print(f"{row:28}" + "".join(f"{results[n][row]:>22.4f}" for n in sizes))
print()
ok = True
for n in sizes:
    for what in ("list", "show"):
        ratio = results[n][f"owner {what}, agent"] / results[n][f"client {what}"]
        ok = ok and ratio <= LIMIT
        print(f"owner {what} via agent / client {what}, {n:,} prescriptions: {ratio:.2f}x")
print()
print("note: a client's read also appends an entry to the audit log (a write); the owner's does not.")
print("VERDICT:", "PASS" if ok else "FAIL", f"(an owner's list and show through the agent within {LIMIT}x of a client's)")
sys.exit(0 if ok else 1)
