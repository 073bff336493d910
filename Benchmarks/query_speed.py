#!/usr/bin/env python3
"""Query speed: rxvault against an SQLCipher database holding the same prescriptions.

Builds both sides from the same generated data (rxvault through its public import path, SQLCipher
through the sqlcipher CLI), then times whole processes (median of several runs):
  - `rxvault query --expiring-within 60d --format json` against `sqlcipher` opening the database
    with its key and running the equivalent SELECT (without and with an index on the expiry date);
  - `rxvault show ID` on a vault of 100 and of 100,000 prescriptions;
  - a client's `rxvault --identity ... list` of its 10 grants on both vaults.
Prints the timings and the ratios. Run it through Benchmarks/query-speed.sh.
"""
import json, os, random, statistics, subprocess, sys, tempfile, time

RXVAULT, WORK, RUNS = sys.argv[1], sys.argv[2], int(os.environ.get("RUNS", "7"))
TODAY = "2026-04-20"          # RXVAULT_TODAY for both sides
UNTIL = "2026-06-19"          # today + 60 days
PASS = "benchmark passphrase"


def generate(n, seed=7):
    rng = random.Random(seed)
    names = ["Sam Rivera", "Kim Park", "Ada Lovelace", "Lin Chen", "Omar Haddad", "Eva Novak", "Raj Patel", "Mia Rossi"]
    out = []
    for i in range(n):
        kind = "glasses" if i % 3 else "contacts"
        y, m, d = 2020 + i % 6, 1 + i % 12, 1 + i % 28
        rx = {"kind": kind, "patient": {"name": f"{rng.choice(names)} {i}"}, "prescriber": {"name": "Dr Lee"},
              "issued": f"{y:04d}-{m:02d}-{d:02d}", "expires": f"{y + (2 if kind == 'glasses' else 1):04d}-{m:02d}-{d:02d}",
              "right": {"sphere": -0.25 * (i % 40)}, "left": {"sphere": -0.25 * ((i + 3) % 40)}}
        if kind == "contacts":
            for eye in ("right", "left"):
                rx[eye].update({"baseCurve": 8.6, "diameter": 14.2, "brand": "Acuvue"})
        out.append({"id": "%032x" % rng.getrandbits(128), "version": 1, "recorded": "2026-01-01T00:00:00Z", "prescription": rx})
    return out


def run(args, env=None, stdin=None):
    start = time.perf_counter()
    done = subprocess.run(args, env=env, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"failed: {' '.join(args)}\n{done.stderr.decode()}")
    return elapsed, done.stdout


def median(args, env=None):
    run(args, env)  # warm the page cache
    return statistics.median(run(args, env)[0] for _ in range(RUNS))


def build(n):
    folder = os.path.join(WORK, str(n))
    os.makedirs(folder)
    records = generate(n)
    export = os.path.join(folder, "export.json")
    with open(export, "w") as f:
        json.dump({"schema": "rxvault/export/v1", "exported": "2026-01-01T00:00:00Z", "prescriptions": records}, f)
    with open(os.open(os.path.join(folder, "pw"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
        f.write(PASS + "\n")
    os.chmod(os.path.join(folder, "pw"), 0o600)  # rxvault refuses a passphrase file others can read
    env = dict(os.environ, RXVAULT_PATH=os.path.join(folder, "v.rxv"), RXVAULT_PASSPHRASE_FILE=os.path.join(folder, "pw"),
               RXVAULT_TODAY=TODAY)
    run([RXVAULT, "init", "--kdf", "interactive"], env)
    seconds, _ = run([RXVAULT, "import", export], env)
    # A client with 10 grants.
    run([RXVAULT, "client", "add", "shop", "--generate", "--identity-out", os.path.join(folder, "shop.key")], env)
    run([RXVAULT, "grant", "shop"] + [r["id"] for r in records[:10]], env)
    # The same rows in SQLCipher: one table, the record as JSON plus the columns a query filters on.
    sql = [f"PRAGMA key = '{PASS}';",
           "CREATE TABLE rx (id TEXT PRIMARY KEY, kind TEXT, patient TEXT, prescriber TEXT, issued TEXT, expires TEXT, doc TEXT);",
           "BEGIN;"]
    q = lambda s: "'" + s.replace("'", "''") + "'"
    for r in records:
        p = r["prescription"]
        sql.append("INSERT INTO rx VALUES (%s);" % ",".join(q(x) for x in
                   [r["id"], p["kind"], p["patient"]["name"], p["prescriber"]["name"], p["issued"], p["expires"], json.dumps(r)]))
    sql.append("COMMIT;")
    for name, extra in (("plain", []), ("indexed", ["CREATE INDEX rx_expires ON rx(expires);"])):
        db = os.path.join(folder, f"{name}.db")
        subprocess.run(["sqlcipher", db], input="\n".join(sql[:2] + extra + sql[2:]).encode(), check=True)
    return folder, env, records, seconds


def sqlcipher(folder, name):
    return ["sqlcipher", os.path.join(folder, f"{name}.db"), f"PRAGMA key = '{PASS}';",
            f"SELECT doc FROM rx WHERE expires >= '{TODAY}' AND expires <= '{UNTIL}';"]


results = {}
for n in (100, 100_000):
    folder, env, records, import_seconds = build(n)
    query = [RXVAULT, "query", "--expiring-within", "60d", "--format", "json"]
    matched = len(json.loads(run(query, env)[1])["prescriptions"])
    sql_matched = len(run(sqlcipher(folder, "plain"))[1].splitlines())
    if matched != sql_matched:
        sys.exit(f"the two sides disagree: rxvault found {matched}, sqlcipher {sql_matched}")
    client_env = {k: v for k, v in env.items() if k != "RXVAULT_PASSPHRASE_FILE"}
    results[n] = {
        "import": import_seconds, "matched": matched,
        "rxvault query": median(query, env),
        "sqlcipher (no index)": median(sqlcipher(folder, "plain")),
        "sqlcipher (index on expires)": median(sqlcipher(folder, "indexed")),
        "show ID": median([RXVAULT, "show", records[-1]["id"][:12]], env),
        "client list (10 grants)": median([RXVAULT, "--identity", os.path.join(folder, "shop.key"), "list"], client_env),
        "unlock only (status)": median([RXVAULT, "status"], env),
    }

print(f"query speed, median of {RUNS} runs, whole processes (vault made with --kdf interactive); seconds")
print(f"{'':32}{'100 prescriptions':>20}{'100,000 prescriptions':>24}")
for key in ["import", "matched", "rxvault query", "sqlcipher (no index)", "sqlcipher (index on expires)", "show ID",
            "client list (10 grants)", "unlock only (status)"]:
    fmt = (lambda v: f"{v:d}") if key == "matched" else (lambda v: f"{v:.3f}")
    print(f"{key:32}{fmt(results[100][key]):>20}{fmt(results[100_000][key]):>24}")
big, small = results[100_000], results[100]
ratios = {
    "rxvault query / sqlcipher (no index), 100,000": big["rxvault query"] / big["sqlcipher (no index)"],
    "rxvault query / sqlcipher (index on expires), 100,000": big["rxvault query"] / big["sqlcipher (index on expires)"],
    "show ID, 100,000 / 100": big["show ID"] / small["show ID"],
    "client list of 10 grants, 100,000 / 100": big["client list (10 grants)"] / small["client list (10 grants)"],
}
print()
for key, value in ratios.items():
    print(f"{key:56}{value:8.2f}x")
ok = (ratios["rxvault query / sqlcipher (no index), 100,000"] <= 1.25 and ratios["show ID, 100,000 / 100"] <= 1.5
      and ratios["client list of 10 grants, 100,000 / 100"] <= 1.5)
print()
print("note: every rxvault command pays Argon2id (the 'unlock only' row). rxvault's encrypted index is bucketed by")
print("      random id, so the file reveals nothing about how dates are distributed, and a query decrypts every bucket;")
print("      SQLCipher's B-tree on expires (encrypted page by page) lets it read only the pages that match.")
print("VERDICT:", "PASS" if ok else "FAIL",
      "(query within 1.25x of sqlcipher scanning the same rows; show and a client's list within 1.5x from 100 to 100,000)")
sys.exit(0 if ok else 1)
