#!/usr/bin/env python3
"""rxvault's reliability suite: crashes, concurrency, a full disk, tampering and bad input.

Runs the built binary as users and scripts would, then checks the vault with
`rxvault check --read-data`. Usage: reliability.py RXVAULT [--fast]
  --fast: fewer kills and rounds (CI); the full run does hundreds of kills.
  --only=NAME: one suite (bad-input, disk-full, tamper, concurrency, crash, api).
  api: hostile clients against `rxvault serve` (Tests/Reliability/hostile_api.py).
Exit 0 when every expectation holds; prints each failure otherwise.
"""
import json, os, random, resource, shutil, signal, sqlite3, subprocess, sys, tempfile, time

import hostile_api

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Support"))
from pg_cluster import Cluster, ClusterError  # noqa: E402

BIN = sys.argv[1]
FAST = "--fast" in sys.argv
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PHOTO = os.path.join(ROOT, "Fixtures/attachments/valid/png-prescription-photo-1200x1600.png")
PDF = os.path.join(ROOT, "Fixtures/attachments/valid/pdf-1.4-three-pages.pdf")
failures = []


def fail(message):
    failures.append(message)
    print("FAIL:", message, flush=True)


class Vault:
    def __init__(self, folder):
        self.folder = folder
        os.makedirs(folder, exist_ok=True)
        self.path = os.path.join(folder, "v.rxv")
        # 0600, as a careful user keeps it: rxvault warns about secrets others can read.
        with open(os.open(os.path.join(folder, "pw"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
            f.write("reliability passphrase\n")
        # XDG_STATE_HOME: the rollback anchor stays in the suite's folder, never the user's home.
        self.env = dict(os.environ, RXVAULT_PATH=self.path, RXVAULT_PASSPHRASE_FILE=os.path.join(folder, "pw"),
                        RXVAULT_BUSY_TIMEOUT="60", XDG_STATE_HOME=os.path.join(folder, "state"))

    def run(self, *args, limit=None, timeout=120):
        preexec = (lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))) if limit else None
        return subprocess.run([BIN, *args], env=self.env, capture_output=True, timeout=timeout, preexec_fn=preexec, text=True, errors="replace")

    def start(self, *args, extra_env=None):
        return subprocess.Popen([BIN, *args], env=dict(self.env, **(extra_env or {})), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, errors="replace")

    def check(self, context):
        r = self.run("check", "--read-data")
        if r.returncode != 0:
            fail(f"{context}: check exited {r.returncode}:\n{r.stdout}{r.stderr}")
        return r.returncode == 0

    def ids(self):
        r = self.run("list", "--format", "json")
        return {p["id"][:8]: p for p in json.loads(r.stdout)["prescriptions"]} if r.returncode == 0 else None

    def snapshot(self):
        r = self.run("list", "--format", "json")
        return r.stdout


GLASSES = ["add", "glasses", "--patient", "Crash Test", "--prescriber", "Dr Kill", "--issued", "2026-01-01",
           "--expires", "2028-01-01", "--od", "-2.25 -0.75 x180", "--os", "-2.00"]


def import_file(folder, rng, i):
    """An export holding one new prescription (its id drawn from `rng`), for `import`."""
    pid = "%032x" % rng.getrandbits(128)
    path = os.path.join(folder, f"import-{i}.json")
    entry = {"id": pid, "version": 1, "recorded": "2026-01-01T00:00:00Z",
             "prescription": {"kind": "glasses", "issued": "2026-01-01", "expires": "2028-01-01",
                              "patient": {"name": "Crash Test"}, "prescriber": {"name": "Dr Kill"},
                              "right": {"sphere": -1.0}, "left": {"sphere": -1.25}}}
    with open(path, "w") as f:
        json.dump({"schema": "rxvault/export/v1", "prescriptions": [entry]}, f)
    return pid


def new_vault(name):
    vault = Vault(os.path.join(WORK, name))
    r = vault.run("init", "--kdf", "interactive")
    assert r.returncode == 0, r.stderr
    return vault


# --- Crashes: SIGKILL at random moments ------------------------------------------------------

def crash_suite(kills):
    vault = new_vault("crash")
    client = vault.run("client", "add", "shop", "--generate", "--identity-out", os.path.join(vault.folder, "shop.key"))
    assert client.returncode == 0, client.stderr
    seeds = [vault.run(*GLASSES).stdout.strip() for _ in range(3)]
    committed = set(seeds)          # prescriptions whose add reported success
    versions = {}                   # id -> the version an edit reported
    backups = []                    # backups that reported success
    rng = random.Random(11)
    aimed = 0                       # kills that landed inside an open write transaction
    for i in range(kills):
        live = sorted(committed) or seeds
        target = rng.choice(live)
        op = rng.choice(["add", "add", "edit", "attach", "grant", "revoke", "backup", "remove", "import"])
        imported = import_file(vault.folder, rng, i) if op == "import" else None
        args = {
            "add": GLASSES,
            "edit": ["edit", target, "--note", f"edit {i}"],
            "attach": ["attach", target, rng.choice([PHOTO, PDF]), "--allow-duplicate"],
            "grant": ["grant", "shop", target],
            "revoke": ["revoke", "shop", "--all"],
            "backup": ["backup", os.path.join(vault.folder, f"b{i}.age")],
            "remove": ["remove", target, "--yes"],
            # An import takes the same write path, so the aimed kill lands before its commit too.
            "import": ["import", os.path.join(vault.folder, f"import-{i}.json")],
        }[op]
        if i % 2 == 0:
            # Aimed: the binary says when its write transaction is complete but not committed
            # (RXVAULT_TEST_WRITE_PAUSE_MS), and the kill lands then, the worst moment.
            process = vault.start(*args, extra_env={"RXVAULT_TEST_WRITE_PAUSE_MS": "400"})
            line = process.stderr.readline()
            if "pausing before commit" in line:
                time.sleep(rng.uniform(0, 0.2))
                aimed += 1
        else:
            process = vault.start(*args)
            # A backup opens the vault (Argon2id) and seals a snapshot: give it the time to finish now and then.
            time.sleep(rng.uniform(0, 2.5 if op == "backup" else 0.6))
        process.send_signal(signal.SIGKILL)
        out, _ = process.communicate()
        finished = process.returncode == 0
        if finished:
            if op == "add":
                committed.add(out.strip())
            elif op == "import":
                committed.add(imported[:8])
            elif op == "edit" and "version" in out:
                versions[target] = int(out.split()[-1])
            elif op == "remove":
                committed.discard(target)
                versions.pop(target, None)
            elif op == "backup":
                backups.append(os.path.join(vault.folder, f"b{i}.age"))
        elif op == "backup" and os.path.exists(os.path.join(vault.folder, f"b{i}.age")):
            # A killed backup may have finished writing; it must then be whole.
            r = vault.run("backup", "verify", os.path.join(vault.folder, f"b{i}.age"))
            if r.returncode != 0:
                fail(f"kill {i}: a killed backup left a partial file behind")
        if not vault.check(f"kill {i} during {op}"):
            return
        listed = vault.ids()
        if listed is None:
            fail(f"kill {i}: list failed")
            return
        for pid in committed:
            if pid not in listed:
                fail(f"kill {i} ({op}): prescription {pid} whose add reported success is gone")
        for pid, version in versions.items():
            if pid in listed and listed[pid]["version"] < version:
                fail(f"kill {i} ({op}): {pid} went back from version {version} to {listed[pid]['version']}")
        if op == "remove" and finished and target in listed:
            fail(f"kill {i}: removed prescription {target} is still listed")
    for b in backups[:5]:
        r = vault.run("backup", "verify", b)
        if r.returncode != 0:
            fail(f"backup {b} that reported success does not verify")
    if aimed < kills // 3:
        fail(f"crash: only {aimed} of {kills} kills landed inside a write transaction; the suite is not testing recovery")
    print(f"crash: {kills} kills ({aimed} inside an open write transaction), {len(committed)} prescriptions, "
          f"{len(backups)} backups, vault checks after every kill", flush=True)


# --- Concurrency: several processes at once ---------------------------------------------------

def concurrency_suite(rounds, workers):
    vault = new_vault("concurrency")
    base = vault.run(*GLASSES).stdout.strip()
    expected = 1
    for r in range(rounds):
        processes = []
        for w in range(workers):
            kind = (r + w) % 5
            args = {0: GLASSES, 1: ["edit", base, "--note", f"round {r} worker {w}"], 2: ["list"], 3: ["attach", base, PDF, "--allow-duplicate"],
                    4: ["backup", os.path.join(vault.folder, f"b-{r}-{w}.age")]}[kind]
            processes.append((kind, vault.start(*args), args))
        for kind, process, args in processes:
            out, err = process.communicate(timeout=180)
            if process.returncode != 0:
                fail(f"concurrency round {r}: a {['add', 'edit', 'list', 'attach', 'backup'][kind]} failed: {err.strip()}")
            if kind == 0 and process.returncode == 0:
                expected += 1
            if kind == 4 and process.returncode == 0:
                # A backup taken while others write is a consistent vault.
                v = vault.run("backup", "verify", args[1])
                if v.returncode != 0:
                    fail(f"concurrency round {r}: a backup taken during writes does not verify: {v.stdout[-300:]}")
    vault.check("after concurrent writers")
    listed = vault.ids() or {}
    if len(listed) != expected:
        fail(f"concurrency: {len(listed)} prescriptions listed, {expected} adds succeeded")
    print(f"concurrency: {rounds} rounds of {workers} processes, {expected} prescriptions, vault checks", flush=True)


# --- A full disk: a file-size limit on the process --------------------------------------------

def disk_full_suite():
    """A file-size limit a little above the vault's size: reads and small writes still work (a
    nearly full disk), and everything larger is refused with 74 and leaves the vault as it was."""
    vault = new_vault("diskfull")
    pid = vault.run(*GLASSES).stdout.strip()
    big_png = os.path.join(vault.folder, "noise.png")
    subprocess.run([sys.executable, os.path.join(ROOT, "Benchmarks/make_noise_png.py"), big_png, "600", "600"], check=True, capture_output=True)
    export = os.path.join(vault.folder, "many.json")
    entries = [{"id": os.urandom(16).hex(), "version": 1, "recorded": "2026-01-01T00:00:00Z", "prescription": {"kind": "glasses", "issued": "2026-01-01", "expires": "2028-01-01",
                                 "patient": {"name": f"Patient {i:05d}"}, "prescriber": {"name": "Dr Full"},
                                 "right": {"sphere": -1.0}, "left": {"sphere": -1.25}}} for i in range(1500)]
    with open(export, "w") as f:
        json.dump({"schema": "rxvault/export/v1", "prescriptions": entries}, f)
    limit = os.path.getsize(vault.path) + 64 * 1024
    r = vault.run("list", limit=limit)
    if r.returncode != 0:
        fail(f"disk full: list exited {r.returncode} with room for reads: {r.stderr.strip()}")
    r = vault.run("edit", pid, "--note", "small write on a nearly full disk", limit=limit)
    if r.returncode != 0:
        fail(f"disk full: a small edit exited {r.returncode} with 64 KiB to spare: {r.stderr.strip()}")
    before = vault.snapshot()
    for args in (["attach", pid, big_png], ["import", export], ["edit", pid, "--note", "x" * 1500]):
        r = vault.run(*args, limit=limit if args[0] != "edit" else 4096)
        if r.returncode != 74:
            fail(f"disk full: {args[0]} exited {r.returncode}, expected 74: {r.stderr.strip()[:300]}")
        elif "disk refused a write" not in r.stderr and "disk is full" not in r.stderr:
            fail(f"disk full: unclear message: {r.stderr.strip()}")
        if vault.snapshot() != before:
            fail(f"disk full: {args[0]} changed the vault")
    backup = os.path.join(vault.folder, "b.age")
    r = vault.run("backup", backup, limit=16 * 1024)
    if r.returncode != 74:
        fail(f"disk full: backup exited {r.returncode}, expected 74: {r.stderr.strip()}")
    if os.path.exists(backup):
        fail("disk full: a failed backup left a file behind")
    vault.check("after writes refused by a full disk")
    print("disk full: reads and small writes work, larger writes and a backup refused with exit 74, vault unchanged", flush=True)


# --- Tampering: every kind of stored object ----------------------------------------------------

class DatabaseLeg:
    """The tamper matrix against PostgreSQL: each tampered vault file is copied (ciphertext as it
    is: `copy` never decrypts) into a fresh database of a throwaway cluster, and `check` and the
    reading commands must say there what they say of the file. A cluster that cannot start is a
    failure, not a skip."""

    def __init__(self):
        self.cases = 0
        self.refused_at_copy = 0
        try:
            self.cluster = Cluster(database="tamper_first")
        except ClusterError as error:
            self.cluster = None
            fail(f"tamper in PostgreSQL: cannot start a cluster: {error}")

    def same(self, vault, name, codes, commands):
        if not self.cluster:
            return
        self.cases += 1
        url = self.cluster.database(f"tamper_{self.cases}")
        env = dict(vault.env, RXVAULT_PATH=url, PGPASSWORD=self.cluster.password)

        def run(*args):
            return subprocess.run([BIN, *args], env=env, capture_output=True, timeout=120, text=True, errors="replace")

        copied = run("copy", vault.path, url)
        if copied.returncode == 76 and 76 in codes and "nothing was copied" in copied.stderr:
            self.refused_at_copy += 1  # rows that point at missing ones: refused there, the damage named
            return
        if copied.returncode != 0:
            fail(f"tamper {name} in PostgreSQL: copy exited {copied.returncode}: {copied.stderr.strip()[:300]}")
            return
        r = run("check", "--read-data")
        if r.returncode not in codes:
            fail(f"tamper {name} in PostgreSQL: check exited {r.returncode}, expected {codes}: {r.stderr[-300:]}")
        expected = 0 if codes == (0,) else 76
        for command in commands:
            r3 = run(*command)
            if r3.returncode != expected:
                fail(f"tamper {name} in PostgreSQL: {' '.join(command[:2])} exited {r3.returncode}, expected "
                     f"{expected}: {r3.stderr.strip()[:200]}")

    def stop(self):
        if self.cluster:
            self.cluster.stop()


def tamper_suite():
    database = DatabaseLeg()
    try:
        tamper_on_file_and_database(database)
    finally:
        database.stop()


def tamper_on_file_and_database(database):
    vault = new_vault("tamper")
    a = vault.run(*GLASSES).stdout.strip()
    vault.run("edit", a, "--note", "second version")
    b = vault.run(*GLASSES).stdout.strip()
    vault.run("attach", a, PHOTO)
    vault.run("client", "add", "shop", "--generate", "--identity-out", os.path.join(vault.folder, "shop.key"))
    vault.run("grant", "shop", a)
    vault.run("client", "add", "family", "--generate", "--identity-out", os.path.join(vault.folder, "family.key"))
    # An older copy of the same vault, as a client would keep one: it still has a grant on b, an
    # attachment of b and a client that are then revoked, detached and removed.
    vault.run("grant", "shop", b)
    vault.run("attach", b, PHOTO, "--name", "second.png")
    vault.run("client", "add", "gone", "--generate", "--identity-out", os.path.join(vault.folder, "gone.key"))
    older = os.path.join(WORK, "older.rxv")
    if os.path.exists(older):
        os.remove(older)
    db = sqlite3.connect(vault.path)
    db.execute("VACUUM INTO ?", (older,))
    db.close()
    vault.run("revoke", "shop", b)
    vault.run("detach", b, "second.png", "--yes")
    vault.run("client", "remove", "gone", "--yes")
    vault.run("backup", os.path.join(vault.folder, "good.age"))
    assert vault.check("before tampering")
    pristine = os.path.join(WORK, "pristine.rxv")
    shutil.copy(vault.path, pristine)
    database.same(vault, "untouched", (0,), [["list"], ["show", a]])

    def flip(value):
        data = bytearray(value)
        data[len(data) // 2] ^= 0x01
        return bytes(data)

    cases = [
        ("header salt", "UPDATE vault_header SET kdf_salt = ?", lambda db: flip(db.execute("SELECT kdf_salt FROM vault_header").fetchone()[0]), (77,)),
        ("header KDF parameters", "UPDATE vault_header SET kdf_ops_limit = kdf_ops_limit + 1 WHERE ? IS NOT NULL", lambda db: 1, (77,)),
        ("wrapped root key", "UPDATE vault_header SET wrapped_root_key = ?", lambda db: flip(db.execute("SELECT wrapped_root_key FROM vault_header").fetchone()[0]), (77,)),
        ("audit public key", "UPDATE vault_header SET audit_public_key = ?", lambda db: flip(db.execute("SELECT audit_public_key FROM vault_header").fetchone()[0]), (76,)),
        ("record content", "UPDATE prescription_version SET content = ? WHERE prescription_id = (SELECT min(prescription_id) FROM prescription_version) AND version = 1", lambda db: flip(db.execute("SELECT content FROM prescription_version WHERE prescription_id = (SELECT min(prescription_id) FROM prescription_version) AND version = 1").fetchone()[0]), (76,)),
        ("record wrapped key", "UPDATE prescription_version SET wrapped_key = ? WHERE prescription_id = (SELECT min(prescription_id) FROM prescription_version) AND version = 1", lambda db: flip(db.execute("SELECT wrapped_key FROM prescription_version WHERE prescription_id = (SELECT min(prescription_id) FROM prescription_version) AND version = 1").fetchone()[0]), (76,)),
        ("record MAC", "UPDATE prescription_version SET mac = ? WHERE prescription_id = (SELECT min(prescription_id) FROM prescription_version) AND version = 1", lambda db: flip(db.execute("SELECT mac FROM prescription_version WHERE prescription_id = (SELECT min(prescription_id) FROM prescription_version) AND version = 1").fetchone()[0]), (76,)),
        ("attachment metadata", "UPDATE attachment SET metadata = ?", lambda db: flip(db.execute("SELECT metadata FROM attachment").fetchone()[0]), (76,)),
        ("attachment chunk", "UPDATE attachment_chunk SET data = ? WHERE seq = 1", lambda db: flip(db.execute("SELECT data FROM attachment_chunk WHERE seq = 1").fetchone()[0]), (76,)),
        ("attachment chunk removed", "DELETE FROM attachment_chunk WHERE seq = (SELECT max(seq) FROM attachment_chunk) AND ? IS NOT NULL", lambda db: 1, (76,)),
        ("grant sealed keys", "UPDATE access_grant SET sealed_keys = ?", lambda db: flip(db.execute("SELECT sealed_keys FROM access_grant").fetchone()[0]), (76,)),
        ("client row", "UPDATE client SET info = ?", lambda db: flip(db.execute("SELECT info FROM client").fetchone()[0]), (76,)),
        ("audit entry", "UPDATE audit_entry SET entry = ? WHERE seq = 1", lambda db: flip(db.execute("SELECT entry FROM audit_entry WHERE seq = 1").fetchone()[0]), (76,)),
        ("audit entry deleted", "DELETE FROM audit_entry WHERE seq = 2 AND ? IS NOT NULL", lambda db: 1, (76,)),
        ("search index bucket", "UPDATE search_index SET content = ? WHERE rowid = (SELECT min(rowid) FROM search_index)", lambda db: flip(db.execute("SELECT content FROM search_index LIMIT 1").fetchone()[0]), (76,)),
        ("rows swapped between prescriptions", "UPDATE prescription_version SET content = (SELECT content FROM prescription_version WHERE prescription_id LIKE ? || '%' LIMIT 1) WHERE prescription_id NOT LIKE '" + b + "%'", lambda db: b, (76,)),
        ("prescription deleted", "DELETE FROM prescription WHERE id LIKE ? || '%'", lambda db: b, (76,)),
        ("newest version deleted", "DELETE FROM prescription_version WHERE prescription_id LIKE ? || '%' AND version = 2", lambda db: a, (76,)),
        ("old version put back", "UPDATE prescription_version SET content = (SELECT content FROM prescription_version p WHERE p.prescription_id = prescription_version.prescription_id AND p.version = 1), wrapped_key = (SELECT wrapped_key FROM prescription_version p WHERE p.prescription_id = prescription_version.prescription_id AND p.version = 1) WHERE version = 2 AND ? IS NOT NULL", lambda db: 1, (76,)),
    ]
    must_refuse = {
        "record MAC": [], "record content": [], "record wrapped key": [],  # filled below: whichever id is min()
        "attachment chunk": [["extract", a, "png-prescription-photo-1200x1600.png", "--out", "-"]],
        "attachment chunk removed": [["extract", a, "png-prescription-photo-1200x1600.png", "--out", "-"]],
        "rows swapped between prescriptions": [["show", a]],
        "newest version deleted": [["show", a], ["edit", a, "--note", "built on a rolled-back version"]],
        "old version put back": [["show", a]],
        "search index bucket": [["list"]],
    }
    db = sqlite3.connect(pristine)
    first = db.execute("SELECT min(prescription_id) FROM prescription_version").fetchone()[0][:8]
    db.close()
    for case in ("record MAC", "record content", "record wrapped key"):
        must_refuse[case] = [["history", first]]
    for name, sql, value, codes in cases:
        shutil.copy(pristine, vault.path)
        for suffix in ("-wal", "-shm"):
            if os.path.exists(vault.path + suffix):
                os.remove(vault.path + suffix)
        db = sqlite3.connect(vault.path)
        db.execute(sql, (value(db),))
        db.commit()
        db.close()
        r = vault.run("check", "--read-data")
        if r.returncode not in codes:
            fail(f"tamper {name}: check exited {r.returncode}, expected {codes}: {r.stdout[-300:]}{r.stderr[-300:]}")
        for command in (["list"], ["show", a], ["extract", a, "png-prescription-photo-1200x1600.png", "--out", "-"]):
            r2 = vault.run(*command)
            if r2.returncode >= 128 or r2.returncode < 0:
                fail(f"tamper {name}: {command[0]} crashed ({r2.returncode})")
        # Reading what was altered must fail too, not only check: the owner never sees a forgery.
        for command in must_refuse.get(name, []):
            r3 = vault.run(*command)
            if r3.returncode != 76:
                fail(f"tamper {name}: {' '.join(command[:2])} exited {r3.returncode}, expected 76: {r3.stderr.strip()[:200]}")
        database.same(vault, name, codes, must_refuse.get(name, []))
    # Rows deleted, put back from the older copy, or mixed with it: every row keeps a valid MAC,
    # only the state root and the manifest can tell. check and the reading command must say 76.
    bucket_of_b = int(b[:2], 16)
    row_cases = [
        ("rows: revoked grant put back with its versions and index", [
            "INSERT INTO main.access_grant SELECT * FROM old.access_grant WHERE id NOT IN (SELECT id FROM main.access_grant)",
            f"DELETE FROM main.prescription_version WHERE prescription_id LIKE '{b}%' AND version > (SELECT max(version) FROM old.prescription_version WHERE prescription_id LIKE '{b}%')",
            "DELETE FROM main.search_index", "INSERT INTO main.search_index SELECT * FROM old.search_index"],
         [["grants"], ["show", b], ["edit", b, "--note", "sealed to a revoked client?"]]),
        ("rows: detached attachment put back", [
            "INSERT INTO main.attachment SELECT * FROM old.attachment WHERE id NOT IN (SELECT id FROM main.attachment)",
            "INSERT INTO main.attachment_chunk SELECT * FROM old.attachment_chunk WHERE attachment_id NOT IN (SELECT attachment_id FROM main.attachment_chunk)"],
         [["attachments", b]]),
        ("rows: attachment row deleted", [
            f"DELETE FROM attachment_chunk WHERE attachment_id IN (SELECT id FROM attachment WHERE prescription_id LIKE '{a}%')",
            f"DELETE FROM attachment WHERE prescription_id LIKE '{a}%'"],
         [["attachments", a]]),
        ("rows: grant row deleted", ["DELETE FROM access_grant"], [["show", a]]),
        ("rows: removed client put back", [
            "INSERT INTO main.client SELECT * FROM old.client WHERE id NOT IN (SELECT id FROM main.client)"],
         [["client", "list"]]),
        ("rows: older audit log", [
            "DELETE FROM main.audit_entry", "INSERT INTO main.audit_entry SELECT * FROM old.audit_entry",
            "UPDATE main.audit_head SET seq = (SELECT seq FROM old.audit_head), hash = (SELECT hash FROM old.audit_head), mac = (SELECT mac FROM old.audit_head)"],
         [["log"]]),
        ("rows: index bucket mixed from the older copy", [
            f"UPDATE main.search_index SET content = (SELECT content FROM old.search_index WHERE bucket = {bucket_of_b}) WHERE bucket = {bucket_of_b}"],
         [["list"]]),
        ("rows: manifest from the older copy", [
            "DELETE FROM main.manifest", "INSERT INTO main.manifest SELECT * FROM old.manifest"],
         [["show", b]]),
        # Format 3 rows that would give the grant graph away if moved: a grant handed to another
        # client, and two clients' lookup tags swapped (each would find the other's grants).
        ("rows: grant moved to another client", [
            "UPDATE main.access_grant SET client_id = (SELECT id FROM main.client WHERE id <> main.access_grant.client_id LIMIT 1)"],
         [["grants"], ["edit", a, "--note", "sealed to the wrong client?"]]),
        ("rows: client lookup tags swapped", [
            "CREATE TEMP TABLE tags AS SELECT id, lookup FROM main.client",
            "UPDATE main.client SET lookup = randomblob(32)",
            "UPDATE main.client SET lookup = (SELECT lookup FROM tags WHERE tags.id <> main.client.id LIMIT 1)"],
         [["client", "list"]]),
        ("rows: state root from the older copy", [
            "DELETE FROM main.vault_state", "INSERT INTO main.vault_state SELECT * FROM old.vault_state"],
         [["show", a]]),
    ]
    for name, statements, commands in row_cases:
        shutil.copy(pristine, vault.path)
        for suffix in ("-wal", "-shm"):
            if os.path.exists(vault.path + suffix):
                os.remove(vault.path + suffix)
        db = sqlite3.connect(vault.path)
        db.execute("ATTACH DATABASE ? AS old", (older,))
        for statement in statements:
            db.execute(statement)
        db.commit()
        db.close()
        r = vault.run("check", "--read-data")
        if r.returncode != 76:
            fail(f"tamper {name}: check exited {r.returncode}, expected 76: {r.stdout[-300:]}{r.stderr[-300:]}")
        for command in commands:
            r3 = vault.run(*command)
            if r3.returncode != 76:
                fail(f"tamper {name}: {' '.join(command[:2])} exited {r3.returncode}, expected 76: {r3.stderr.strip()[:200]}")
        database.same(vault, name, (76,), commands)
    # Truncated and garbage files.
    for name, mutate in (("truncated to half", lambda data: data[: len(data) // 2]), ("empty", lambda data: b""),
                         ("random bytes", lambda data: os.urandom(len(data)))):
        data = open(pristine, "rb").read()
        open(vault.path, "wb").write(mutate(data))
        r = vault.run("check")
        if r.returncode not in (66, 76, 77):
            fail(f"tamper {name}: check exited {r.returncode}")
    # Backup files.
    good = open(os.path.join(vault.folder, "good.age"), "rb").read()
    for offset in (30, len(good) // 3, len(good) // 2, len(good) - 5):
        damaged = bytearray(good)
        damaged[offset] ^= 0x01
        path = os.path.join(vault.folder, "bad.age")
        open(path, "wb").write(damaged)
        r = vault.run("backup", "verify", path)
        if r.returncode not in (65, 76, 77):
            fail(f"tamper backup byte {offset}: verify exited {r.returncode}")
    # A backup re-encrypted around an altered vault: the age layer is then authentic (whoever
    # holds a recipient's identity can do this), so only the check of every object inside stops it.
    key = os.path.join(vault.folder, "backup.key")
    subprocess.run(["age-keygen", "-o", key], check=True, capture_output=True)
    recipient = subprocess.run(["age-keygen", "-y", key], check=True, capture_output=True, text=True).stdout.strip()
    shutil.copy(pristine, vault.path)
    for suffix in ("-wal", "-shm"):
        if os.path.exists(vault.path + suffix):
            os.remove(vault.path + suffix)
    outer = os.path.join(vault.folder, "recipient.age")
    r = vault.run("backup", outer, "--recipient", recipient)
    assert r.returncode == 0, r.stderr
    inner = os.path.join(vault.folder, "inner.rxv")
    subprocess.run(["age", "-d", "-i", key, "-o", inner, outer], check=True)
    db = sqlite3.connect(inner)
    row = db.execute("SELECT prescription_id, version, content FROM prescription_version ORDER BY prescription_id LIMIT 1").fetchone()
    db.execute("UPDATE prescription_version SET content = ? WHERE prescription_id = ? AND version = ?", (flip(row[2]), row[0], row[1]))
    db.commit()
    db.close()
    forged = os.path.join(vault.folder, "forged.age")
    subprocess.run(["age", "-r", recipient, "-o", forged, inner], check=True)
    r = vault.run("backup", "verify", forged, "--age-identity", key)
    if r.returncode != 76:
        fail(f"tamper backup re-encrypted around an altered record: verify exited {r.returncode}, expected 76")
    restored = os.path.join(vault.folder, "from-forged.rxv")
    r = vault.run("restore", forged, "--age-identity", key, "--to", restored)
    if r.returncode != 76 or os.path.exists(restored):
        fail(f"tamper backup re-encrypted around an altered record: restore exited {r.returncode}, expected 76 and no file")
    r = vault.run("backup", "verify", outer, "--age-identity", key)
    if r.returncode != 0:
        fail(f"the untouched recipient backup does not verify: {r.stdout[-300:]}")
    print(f"tamper: {len(cases)} stored-object cases, {len(row_cases)} row cases, 3 whole-file cases, 5 backup cases; "
          f"in PostgreSQL too: {database.cases - database.refused_at_copy} checked there, "
          f"{database.refused_at_copy} refused by copy", flush=True)


# --- Bad input: clear errors, documented exit codes, nothing written ---------------------------

def bad_input_suite():
    vault = new_vault("badinput")
    pid = vault.run(*GLASSES).stdout.strip()
    before = open(vault.path, "rb").read()
    empty = os.path.join(vault.folder, "empty.json")
    open(empty, "w").close()
    huge = os.path.join(vault.folder, "huge.json")
    with open(huge, "w") as f:
        f.write("[" + "1," * 2_000_000 + "1]")
    garbage = os.path.join(vault.folder, "garbage.bin")
    open(garbage, "wb").write(os.urandom(5000))
    cases = [
        (["add", "glasses"], 64), (["add", "spectacles"], 64), (["add", "glasses", "--patient", "P", "--prescriber", "D", "--issued", "yesterday", "--od", "plano"], 65),
        (["add", "glasses", "--patient", "P", "--prescriber", "D", "--issued", "2026-01-01", "--od", "-2.00 x 90"], 65),
        (["add", "glasses", "--patient", "P", "--prescriber", "D", "--issued", "2026-01-01", "--od", "banana"], 65),
        (["add", "glasses", "--patient", "P", "--prescriber", "D", "--issued", "2026-01-01", "--od", "-2.00", "--pd", "abc"], 65),
        (["add", "contacts", "--patient", "P", "--prescriber", "D", "--issued", "2026-01-01", "--od", "-2.00"], 65),
        (["show", "zzzz"], 64), (["show", "00000000"], 67), (["edit", pid], 64), (["edit", pid, "--od-axis", "400"], 65),
        (["remove", pid], 64), (["history"], 64), (["query", "--valid-on", "2026-02-30"], 65), (["query", "--limit", "0"], 64),
        (["import", empty], 65), (["import", huge], 65), (["import", garbage], 65), (["import", "/nonexistent"], 67),
        (["attach", pid, empty], 65), (["attach", pid, garbage], 65), (["attach", pid, "/nonexistent"], 67),
        (["grant", "nobody", pid], 67), (["client", "remove", "nobody"], 67), (["remove", "ffffffff"], 67), (["client", "add", "x", "--recipient", "age1bad"], 65), (["export", "--format", "xml", "--out", "-"], 64),
        (["backup", "verify", garbage], 65), (["restore", garbage, "--to", os.path.join(vault.folder, "r.rxv")], 65),
        (["list", "--format", "yaml"], 64), (["frobnicate"], 64), (["status", "--vault", garbage], 66),
        (["import", vault.folder], 64), (["export", "--format", "json", "--out", vault.folder], 73),
        (["export", "--format", "json", "--out", os.path.join(garbage, "x.json")], 73), (["query", "--valid-on", "10000-01-01"], 65),
        (["show", os.fsdecode(b"\xff\xfe")], 64),
    ]
    for args, code in cases:
        r = vault.run(*args)
        if r.returncode != code:
            fail(f"bad input {' '.join(args)[:80]}: exited {r.returncode}, expected {code}: {r.stderr.strip()[:200]}")
        elif code != 0 and not (r.stderr.startswith("rxvault: error:") or r.stderr.startswith("Error:")):
            fail(f"bad input {' '.join(args)[:80]}: no clear error message: {r.stderr[:200]}")
    after = open(vault.path, "rb").read()
    if after != before:
        fail("bad input changed the vault file")
    print(f"bad input: {len(cases)} commands refused with their documented codes, vault unchanged", flush=True)


WORK = tempfile.mkdtemp(prefix="rxvault-reliability-")
try:
    start = time.time()
    suites = {
        "bad-input": bad_input_suite,
        "disk-full": disk_full_suite,
        "tamper": tamper_suite,
        "concurrency": lambda: concurrency_suite(rounds=3 if FAST else 10, workers=4 if FAST else 8),
        "crash": lambda: crash_suite(kills=40 if FAST else 300),
        "api": lambda: hostile_api.api_suite(BIN, ROOT, new_vault, GLASSES, fail, FAST),
    }
    chosen = [a.split("=", 1)[1] for a in sys.argv if a.startswith("--only=")] or list(suites)
    for name in chosen:
        suites[name]()
    print(f"reliability: {'fast' if FAST else 'full'} run in {time.time() - start:.0f} s")
finally:
    shutil.rmtree(WORK, ignore_errors=True)
print("reliability: all expectations held" if not failures else f"reliability: {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
