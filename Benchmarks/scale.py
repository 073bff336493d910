#!/usr/bin/env python3
"""Import, export and query at scale: rxvault against SQLCipher on the same rows.

Usage: scale.py RXVAULT_BINARY WORK_DIR   (through Benchmarks/scale.sh, which builds the release binary)
Environment: N (default 100000) prescriptions; SMALL (default 2000) for the linearity pair (SMALL and 8 x SMALL);
RUNS (default 3) for the medians of the quick commands; FHIR_BIG=0 skips the FHIR import of all N.

Each figure is a whole process (rxvault or sqlcipher), timed on this machine in the same run, with
its peak memory (the largest resident set of the process and its children: `time -f %M`). rxvault
pays its own key derivation in every command (the vaults use --kdf interactive); SQLCipher pays
its default PBKDF2. Prints a table of numbers (wall seconds, CPU seconds user+system, peak memory),
then each goal with its ratio and a verdict. Verdicts use wall time, as the goals are stated; on a
loaded machine the CPU ratio (printed beside it) is the steadier figure.
"""
import csv, json, os, random, shutil, statistics, subprocess, sys, time

RXVAULT, WORK = sys.argv[1], sys.argv[2]
N = int(os.environ.get("N", "100000"))
SMALL = int(os.environ.get("SMALL", "2000"))
RUNS = int(os.environ.get("RUNS", "3"))
FHIR_BIG = os.environ.get("FHIR_BIG", "1") != "0"
TODAY = "2026-04-20"
UNTIL = "2026-06-19"  # today + 60 days
PASS = "benchmark passphrase"
GNU_TIME = "/usr/bin/time"


def generate(n, seed=15):
    """A third contacts; cylinder and axis on about half the lenses, add on a quarter; many patients."""
    rng = random.Random(seed)
    first = ["Sam", "Kim", "Ada", "Lin", "Omar", "Eva", "Raj", "Mia", "Noor", "Yuki", "Ines", "Tom"]
    last = ["Rivera", "Park", "Lovelace", "Chen", "Haddad", "Novak", "Patel", "Rossi", "Okafor", "Berg"]
    out = []
    for i in range(n):
        kind = "contacts" if i % 3 == 0 else "glasses"
        y, m, d = 2021 + rng.randrange(5), 1 + rng.randrange(12), 1 + rng.randrange(28)
        rx = {"kind": kind, "patient": {"name": f"{rng.choice(first)} {rng.choice(last)} {i % 9000}"},
              "prescriber": {"name": "Dr Lee", "licence": "OPT-%05d" % rng.randrange(100000)},
              "issued": f"{y:04d}-{m:02d}-{d:02d}", "expires": f"{y + (1 if kind == 'contacts' else 2):04d}-{m:02d}-{d:02d}"}
        for eye in ("right", "left"):
            lens = {"sphere": -0.25 * rng.randrange(0, 40)}
            if rng.random() < 0.5:
                lens["cylinder"] = -0.25 * rng.randrange(1, 12)
                lens["axis"] = rng.randrange(1, 181)
            if kind == "glasses" and rng.random() < 0.25:
                lens["add"] = 0.25 * rng.randrange(4, 13)
            if kind == "contacts":
                lens.update({"baseCurve": 8.6, "diameter": 14.2, "brand": "Acuvue Oasys"})
            rx[eye] = lens
        out.append({"id": "%032x" % rng.getrandbits(128), "version": 1, "recorded": "2026-01-01T00:00:00Z", "prescription": rx})
    return out


CPU = {}   # label -> CPU seconds of the last timed run of that command line


def timed(args, env=None, stdin=None, stdout=subprocess.DEVNULL):
    """(seconds, peak KiB, stdout bytes) of one process and its children (CPU seconds in LAST_CPU)."""
    measure = os.path.join(WORK, "time.out")
    start = time.perf_counter()
    source = open(stdin, "rb") if stdin else subprocess.DEVNULL
    try:
        done = subprocess.run([GNU_TIME, "-o", measure, "-f", "%M %U %S"] + args, env=env, stdin=source,
                              stdout=subprocess.PIPE if stdout is None else stdout, stderr=subprocess.PIPE)
    finally:
        if stdin:
            source.close()
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"failed ({done.returncode}): {' '.join(args[:4])}\n{done.stderr.decode()[-2000:]}")
    peak, user, system = open(measure).read().strip().splitlines()[-1].split()
    global LAST_CPU
    LAST_CPU = float(user) + float(system)
    return elapsed, int(peak), done.stdout


LAST_CPU = 0.0


def median(args, env=None, runs=RUNS):
    global LAST_CPU
    timed(args, env)
    samples = []
    for _ in range(runs):
        seconds, peak, _ = timed(args, env)
        samples.append((seconds, peak, LAST_CPU))
    LAST_CPU = statistics.median(s[2] for s in samples)
    return statistics.median(s[0] for s in samples), max(s[1] for s in samples)


def vault(name):
    folder = os.path.join(WORK, name)
    os.makedirs(folder, exist_ok=True)
    with open(os.open(os.path.join(folder, "pw"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
        f.write(PASS + "\n")
    os.chmod(os.path.join(folder, "pw"), 0o600)  # rxvault refuses a passphrase file others can read
    env = dict(os.environ, RXVAULT_PATH=os.path.join(folder, "v.rxv"), RXVAULT_PASSPHRASE_FILE=os.path.join(folder, "pw"),
               RXVAULT_TODAY=TODAY, XDG_STATE_HOME=os.path.join(folder, "state"))
    timed([RXVAULT, "init", "--kdf", "interactive"], env)
    return folder, env


def write_export(path, records):
    with open(path, "w") as f:
        json.dump({"schema": "rxvault/export/v1", "exported": "2026-01-01T00:00:00Z", "prescriptions": records}, f)


def sqlcipher_load(folder, records, indexed):
    """SQLCipher's bulk load: `.import` of a CSV of the same rows into a keyed database."""
    rows = os.path.join(folder, "rows.csv")
    with open(rows, "w", newline="") as f:
        w = csv.writer(f)
        for r in records:
            p = r["prescription"]
            w.writerow([r["id"], p["kind"], p["patient"]["name"], p["prescriber"]["name"], p["issued"], p["expires"], json.dumps(r)])
    db = os.path.join(folder, "indexed.db" if indexed else "plain.db")
    script = os.path.join(folder, "load.sql")
    with open(script, "w") as f:
        f.write(f"PRAGMA key = '{PASS}';\n")
        f.write("CREATE TABLE rx (id TEXT PRIMARY KEY, kind TEXT, patient TEXT, prescriber TEXT, issued TEXT, expires TEXT, doc TEXT);\n")
        f.write(f".mode csv\n.import {rows} rx\n")
        if indexed:
            f.write("CREATE INDEX rx_expires ON rx(expires);\n")
    seconds, peak, _ = timed(["sqlcipher", db], stdin=script)
    return db, seconds, peak


def sqlcipher_query(db, sql, mode=None):
    return ["sqlcipher", db, f"PRAGMA key = '{PASS}';"] + ([mode] if mode else []) + [sql]


def main():
    os.makedirs(WORK, exist_ok=True)
    results = []   # (label, seconds, peak KiB)
    cpu = {}       # label -> CPU seconds

    def row(label, seconds, peak, cpu_seconds=None):
        cpu_seconds = LAST_CPU if cpu_seconds is None else cpu_seconds
        results.append((label, seconds, peak))
        cpu[label] = cpu_seconds
        print(f"  {label:58}{seconds:10.2f} s{cpu_seconds:9.2f} s cpu{peak / 1024:8.0f} MiB", flush=True)

    print(f"generating {N} prescriptions ...", flush=True)
    records = generate(N)
    big, env = vault("big")
    export = os.path.join(big, "in.json")
    write_export(export, records)

    print("measuring (seconds, peak resident memory):", flush=True)
    seconds, peak, _ = timed([RXVAULT, "import", export], env)
    row(f"rxvault import json, {N}", seconds, peak)
    import_json_cpu = LAST_CPU
    import_json = seconds, peak
    _, sql_load_seconds, sql_load_peak = sqlcipher_load(big, records, indexed=False)
    sql_load_cpu = LAST_CPU
    row(f"sqlcipher bulk load (.import csv), {N}", sql_load_seconds, sql_load_peak)
    indexed_db, _, _ = sqlcipher_load(big, records, indexed=True)
    plain_db = os.path.join(big, "plain.db")

    exports = {}
    for fmt in ("json", "csv", "fhir"):
        out = os.path.join(big, f"out.{fmt}")
        seconds, peak, _ = timed([RXVAULT, "export", "--format", fmt, "--out", out], env)
        exports[fmt] = (seconds, peak, LAST_CPU)
        row(f"rxvault export {fmt}, {N}", seconds, peak)
    # The same exports held to one core (taskset): what opening and writing on all cores gives.
    one_core = {}
    if (os.cpu_count() or 1) > 1 and shutil.which("taskset"):
        for fmt in ("json", "csv", "fhir"):
            out = os.path.join(big, f"out.{fmt}")
            seconds, peak, _ = timed(["taskset", "-c", "0", RXVAULT, "export", "--format", fmt, "--out", out, "--force"], env)
            one_core[fmt] = (seconds, LAST_CPU)
            row(f"rxvault export {fmt}, {N}, on one core", seconds, peak)
    sql_csv = os.path.join(big, "sqlcipher.csv")
    seconds, peak, _ = timed(sqlcipher_query(plain_db, "SELECT * FROM rx;", ".mode csv"), stdout=open(sql_csv, "wb"))
    row(f"sqlcipher select * to csv, {N}", seconds, peak)
    sql_export, sql_export_cpu = seconds, LAST_CPU

    # FHIR import: linear? (SMALL, 8 x SMALL) then the whole bundle.
    fhir_times = {}
    for n in (SMALL, 8 * SMALL):
        folder, fenv = vault(f"fhir{n}")
        sub = os.path.join(folder, "in.json")
        write_export(sub, records[:n])
        small_vault = dict(fenv, RXVAULT_PATH=os.path.join(folder, "src.rxv"))
        timed([RXVAULT, "init", "--kdf", "interactive"], small_vault)
        timed([RXVAULT, "import", sub], small_vault)
        bundle = os.path.join(folder, "bundle.json")
        timed([RXVAULT, "export", "--format", "fhir", "--out", bundle], small_vault)
        seconds, peak, _ = timed([RXVAULT, "import", bundle], fenv)
        fhir_times[n] = seconds
        fhir_times[f"cpu{n}"] = LAST_CPU
        row(f"rxvault import fhir, {n}", seconds, peak)
        json_folder, jenv = vault(f"json{n}")
        seconds, peak, _ = timed([RXVAULT, "import", sub], jenv)
        row(f"rxvault import json, {n}", seconds, peak)
        fhir_times[f"json{n}"] = seconds
        fhir_times[f"jsoncpu{n}"] = LAST_CPU
    import_fhir = None
    if FHIR_BIG:
        folder, fenv = vault("fhirbig")
        seconds, peak, _ = timed([RXVAULT, "import", os.path.join(big, "out.fhir")], fenv)
        row(f"rxvault import fhir, {N}", seconds, peak)
        import_fhir = seconds, peak, LAST_CPU

    # Queries and reads.
    query = [RXVAULT, "query", "--expiring-within", "60d", "--format", "json"]
    q_seconds, q_peak = median(query, env)
    q_cpu = LAST_CPU
    row("rxvault query --expiring-within 60d --format json", q_seconds, q_peak)
    sql = f"SELECT doc FROM rx WHERE expires >= '{TODAY}' AND expires <= '{UNTIL}';"
    s_seconds, s_peak = median(sqlcipher_query(indexed_db, sql))
    s_cpu = LAST_CPU
    row("sqlcipher, index on expires", s_seconds, s_peak)
    u_seconds, u_peak = median([RXVAULT, "status"], env)
    row("rxvault status (unlock alone: Argon2id and the root check)", u_seconds, u_peak)
    # The same query once the owner has unlocked (`rxvault unlock`: the agent holds the root key,
    # so no command pays the key derivation): how rxvault is meant to be used for repeated reads.
    timed([RXVAULT, "unlock", "--timeout", "10m"], env)
    agent_env = {k: v for k, v in env.items() if k != "RXVAULT_PASSPHRASE_FILE"}
    a_seconds, a_peak = median(query + ["--no-input"], agent_env)
    a_cpu = LAST_CPU
    row("rxvault query, vault unlocked (agent; no key derivation)", a_seconds, a_peak)
    timed([RXVAULT, "lock"], env)
    matched = len(json.loads(timed(query, env, stdout=None)[2])["prescriptions"])
    sql_matched = len(timed(sqlcipher_query(plain_db, sql), stdout=None)[2].splitlines())
    if matched != sql_matched:
        sys.exit(f"the two sides disagree: rxvault found {matched}, sqlcipher {sql_matched}")

    small, senv = vault("small")
    write_export(os.path.join(small, "in.json"), records[:100])
    timed([RXVAULT, "import", os.path.join(small, "in.json")], senv)
    flat = {}
    for label, folder, e in (("100", small, senv), (str(N), big, env)):
        timed([RXVAULT, "client", "add", "shop", "--generate", "--identity-out", os.path.join(folder, "shop.key")], e)
        timed([RXVAULT, "grant", "shop"] + [r["id"] for r in records[:10]], e)
        client_env = {k: v for k, v in e.items() if k != "RXVAULT_PASSPHRASE_FILE"}
        def measured(args, environment):
            seconds, peak = median(args, environment)
            return seconds, peak, LAST_CPU
        flat[label] = {
            "show": measured([RXVAULT, "show", records[5]["id"][:12]], e),
            "client list": measured([RXVAULT, "--identity", os.path.join(folder, "shop.key"), "list"], client_env),
            "grants": measured([RXVAULT, "grants"], e),
        }
        for key, value in flat[label].items():
            row(f"rxvault {key}, {label} prescriptions", *value)

    def cpu_of(label):
        return cpu.get(label, 0.0) or float("nan")

    goals = [
        ("import is linear: json, 8x the rows", fhir_times[f"json{8 * SMALL}"] / fhir_times[f"json{SMALL}"],
         fhir_times[f"jsoncpu{8 * SMALL}"] / fhir_times[f"jsoncpu{SMALL}"], 9.0),
        ("import is linear: fhir, 8x the rows", fhir_times[8 * SMALL] / fhir_times[SMALL],
         fhir_times[f"cpu{8 * SMALL}"] / fhir_times[f"cpu{SMALL}"], 9.0),
        (f"import json {N} / sqlcipher bulk load", import_json[0] / sql_load_seconds, import_json_cpu / sql_load_cpu, 3.0),
        (f"import json {N}: peak MiB (goal: under 300)", import_json[1] / 1024, None, 300),
    ]
    if import_fhir:
        goals += [
            (f"import fhir {N} / sqlcipher bulk load", import_fhir[0] / sql_load_seconds, import_fhir[2] / sql_load_cpu, 3.0),
            (f"import fhir {N}: peak MiB (goal: under 300)", import_fhir[1] / 1024, None, 300),
        ]
    goals += [
        ("query / sqlcipher with an index on expires", q_seconds / s_seconds, q_cpu / s_cpu, 1.0),
        ("  (not a goal) query with the vault unlocked / sqlcipher", a_seconds / s_seconds, a_cpu / s_cpu, float("inf")),
        (f"export json {N} / sqlcipher to csv", exports["json"][0] / sql_export, exports["json"][2] / sql_export_cpu, 5.0),
        (f"export csv {N} / sqlcipher to csv", exports["csv"][0] / sql_export, exports["csv"][2] / sql_export_cpu, 5.0),
        (f"export fhir {N} / sqlcipher to csv", exports["fhir"][0] / sql_export, exports["fhir"][2] / sql_export_cpu, 5.0),
        ("export fhir / export json", exports["fhir"][0] / exports["json"][0], exports["fhir"][2] / exports["json"][2], 2.0),
        (f"export json {N}: peak MiB (goal: under 300)", exports["json"][1] / 1024, None, 300),
        (f"export fhir {N}: peak MiB (goal: under 300)", exports["fhir"][1] / 1024, None, 300),
    ]
    goals += [
        (f"  (not a goal) export {fmt}: all cores / one core", exports[fmt][0] / one_core[fmt][0],
         exports[fmt][2] / one_core[fmt][1], float("inf"))
        for fmt in one_core
    ]
    goals += [
        (f"show, {N} / 100", flat[str(N)]["show"][0] / flat["100"]["show"][0], flat[str(N)]["show"][2] / flat["100"]["show"][2], 1.5),
        (f"a client's list, {N} / 100", flat[str(N)]["client list"][0] / flat["100"]["client list"][0],
         flat[str(N)]["client list"][2] / flat["100"]["client list"][2], 1.5),
        (f"grants, {N} / 100", flat[str(N)]["grants"][0] / flat["100"]["grants"][0], flat[str(N)]["grants"][2] / flat["100"]["grants"][2], 1.5),
    ]
    print()
    print(f"goals ({N} prescriptions; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; ratios are rxvault / peer, measured in this run):")
    failed = 0
    print(f"  {'':6}{'':58}{'wall':>10}{'cpu':>10}")
    for label, value, cpu_ratio, limit in goals:
        ok = value <= limit
        failed += not ok
        if limit == float("inf"):
            print(f"  {'':6}{label:58}{value:10.2f}{cpu_ratio:10.2f}   (for comparison)")
            continue
        cpu_text = "" if cpu_ratio is None else f"{cpu_ratio:10.2f}"
        print(f"  {'PASS' if ok else 'FAIL'}  {label:58}{value:10.2f}{cpu_text:>10}   (goal: at most {limit:g})")
    print()
    counted = sum(1 for g in goals if g[3] != float("inf"))
    print(f"{counted - failed} of {counted} goals met")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
