#!/usr/bin/env python3
"""`rxvault sync` through a folder remote, against a plain import of the same changes (issue 48).

A vault of N prescriptions (default 10,000) is copied to a second computer (its own HOME: its
own replica); each computer adds CHANGES prescriptions (default 100) with one import. Then,
whole processes, median of RUNS runs after one warm-up, each from the same starting state:
  - first push: A syncs with an empty folder (its whole snapshot goes up);
  - pull and merge: B syncs (A's state is rebuilt from the chunks B lacks, merged, B's pushed);
  - in step: A syncs again after B and A are in step (the heads are read; nothing moves);
  - import: the same 100 prescriptions imported into A's copy instead.
Then what one small write moves: A adds one prescription and syncs, then another and syncs;
the chunks and bytes the second sync uploads against the size of its vault. Prints times, ratios and bytes. Run it through
Benchmarks/sync.sh. The issue sets no pass/fail goal; the ratios are the record.
"""
import json, os, shutil, statistics, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vault_bench  # noqa: E402
from vault_bench import generate, run, write_export  # noqa: E402

RXVAULT, WORK = sys.argv[1], sys.argv[2]
N = int(os.environ.get("PRESCRIPTIONS", "10000"))
CHANGES = int(os.environ.get("CHANGES", "100"))
RUNS = int(os.environ.get("RUNS", "5"))

os.makedirs(WORK, exist_ok=True)
pw = os.path.join(WORK, "pw")
with open(pw, "w") as f:
    f.write("benchmark passphrase\n")
os.chmod(pw, 0o600)
base = os.path.join(WORK, "base")
os.makedirs(base)
paths = {name: os.path.join(base, name) for name in ["a.rxv", "b.rxv", "home-a", "home-b"]}


def env(side, root):
    return vault_bench.env_for(os.path.join(root, f"home-{side}"), os.path.join(root, f"{side}.rxv"), pw)


write_export(os.path.join(WORK, "base.json"), generate(N, 1, 0))
write_export(os.path.join(WORK, "a.json"), generate(CHANGES, 2, N))
write_export(os.path.join(WORK, "b.json"), generate(CHANGES, 3, N + CHANGES))
write_export(os.path.join(WORK, "one.json"), generate(1, 4, N + 2 * CHANGES))
write_export(os.path.join(WORK, "two.json"), generate(1, 5, N + 2 * CHANGES + 1))
run([RXVAULT, "init", "--kdf", "interactive"], env("a", base))
run([RXVAULT, "import", os.path.join(WORK, "base.json")], env("a", base))
shutil.copyfile(paths["a.rxv"], paths["b.rxv"])
run([RXVAULT, "import", os.path.join(WORK, "a.json")], env("a", base))
run([RXVAULT, "import", os.path.join(WORK, "b.json")], env("b", base))


def fresh(i):
    """A copy of the starting state: both computers' files and state folders, no remote."""
    root = os.path.join(WORK, f"run-{i}")
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(base, root)
    return root


def sync(side, root):
    elapsed, out = run([RXVAULT, "sync", os.path.join(root, "remote"), "--format", "json"], env(side, root))
    return elapsed, json.loads(out)


samples = {"push": [], "pull": [], "step": [], "import": []}
for i in range(RUNS + 1):
    root = fresh(i)
    push, first = sync("a", root)
    pull, pulled = sync("b", root)
    if len(pulled["merged"]) != 1 or pulled["merged"][0]["merge"]["prescriptionsAdded"].__len__() != CHANGES:
        sys.exit(f"B's sync did not bring A's {CHANGES}: {pulled}")
    sync("a", root)  # A takes B's state: now in step
    step, quiet = sync("a", root)
    if not quiet["inStep"]:
        sys.exit(f"a sync in step moved something: {quiet}")
    imported, _ = run([RXVAULT, "import", os.path.join(WORK, "b.json")], env("a", fresh(f"i{i}")))
    if i:
        for key, value in [("push", push), ("pull", pull), ("step", step), ("import", imported)]:
            samples[key].append(value)
    if i == RUNS:
        # A's own head is its first push: one write and a sync bring it up to date, then the
        # write measured is the next one.
        run([RXVAULT, "import", os.path.join(WORK, "one.json")], env("a", root))
        sync("a", root)
        run([RXVAULT, "import", os.path.join(WORK, "two.json")], env("a", root))
        _, small = sync("a", root)
        size = os.path.getsize(os.path.join(root, "a.rxv"))
        first_bytes = first["bytesUploaded"]
    shutil.rmtree(os.path.join(WORK, f"i{i}"), ignore_errors=True)

median = {key: statistics.median(values) for key, values in samples.items()}
print(f"sync of two copies of a {N:,}-prescription vault that each added {CHANGES}; median of {RUNS} runs, seconds")
print(f"{'first push (A, whole snapshot)':40}{median['push']:10.3f}")
print(f"{'pull, merge and push (B)':40}{median['pull']:10.3f}")
print(f"{'sync with nothing to move':40}{median['step']:10.3f}")
print(f"{'import of the same changes':40}{median['import']:10.3f}")
print()
print(f"pull, merge and push / import: {median['pull'] / median['import']:.2f}x")
print(f"nothing to move / import: {median['step'] / median['import']:.2f}x")
print(f"first push uploaded {first_bytes:,} bytes (the vault file is {size:,} bytes)")
print(f"one new prescription, then sync: {small['chunksUploaded']} chunks, {small['bytesUploaded']:,} bytes uploaded"
      f" ({small['bytesUploaded'] / size:.3f} of the vault), {small['chunksAlreadyThere']} chunks already there")
