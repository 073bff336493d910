#!/usr/bin/env python3
"""Merging two copies of a vault, against a plain import of the same changes (issue 48).

A vault of N prescriptions (default 10,000) is copied to a second computer (its own HOME: its
own replica); each computer then adds CHANGES prescriptions of its own (default 100) with one
import. Timed, whole processes, median of RUNS runs after one warm-up, each on fresh copies:
  - merge: computer A merges B's copy (B's 100 come in; A's file and B's are both read whole
    and B's is checked first, as `check` would);
  - import: the same 100 prescriptions imported into A's copy instead (what a merge must at
    least do);
  - in step: A merges a copy of its own file (nothing to move: only the two roots are read).
Prints the times and the ratios merge/import and in-step/import. Run it through
Benchmarks/merge.sh. No pass/fail goal is set by the issue; the ratios are the record.
"""
import os, shutil, statistics, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vault_bench  # noqa: E402
from vault_bench import generate, run, write_export  # noqa: E402

RXVAULT, WORK = sys.argv[1], sys.argv[2]
N = int(os.environ.get("PRESCRIPTIONS", "10000"))
CHANGES = int(os.environ.get("CHANGES", "100"))
RUNS = int(os.environ.get("RUNS", "5"))
PASS = "benchmark passphrase"


def env_for(home, vault):
    return vault_bench.env_for(home, vault, pw)


os.makedirs(WORK, exist_ok=True)
pw = os.path.join(WORK, "pw")
with open(pw, "w") as f:
    f.write(PASS + "\n")
os.chmod(pw, 0o600)
base_a, base_b = os.path.join(WORK, "a.rxv"), os.path.join(WORK, "b.rxv")
home_a, home_b = os.path.join(WORK, "home-a"), os.path.join(WORK, "home-b")
write_export(os.path.join(WORK, "base.json"), generate(N, 1, 0))
write_export(os.path.join(WORK, "a.json"), generate(CHANGES, 2, N))
write_export(os.path.join(WORK, "b.json"), generate(CHANGES, 3, N + CHANGES))
run([RXVAULT, "init", "--kdf", "interactive"], env_for(home_a, base_a))
run([RXVAULT, "import", os.path.join(WORK, "base.json")], env_for(home_a, base_a))
shutil.copyfile(base_a, base_b)
run([RXVAULT, "import", os.path.join(WORK, "a.json")], env_for(home_a, base_a))
run([RXVAULT, "import", os.path.join(WORK, "b.json")], env_for(home_b, base_b))
# Each run works on fresh copies of A's file (A's computer: home-a, which saw base_a).
state_a = os.path.join(WORK, "state-a")
shutil.copytree(home_a, state_a)


def fresh():
    target = os.path.join(WORK, "a-run.rxv")
    shutil.copyfile(base_a, target)
    home = os.path.join(WORK, "home-run")
    shutil.rmtree(home, ignore_errors=True)
    shutil.copytree(state_a, home)
    return env_for(home, target)


def timed(args_of_env):
    samples = []
    for i in range(RUNS + 1):
        env = fresh()
        elapsed, out = run(args_of_env(env), env)
        if i:
            samples.append(elapsed)
    return statistics.median(samples), out


merge, merged_out = timed(lambda env: [RXVAULT, "merge", base_b])
if f"{CHANGES} new prescriptions" not in merged_out:
    sys.exit(f"the merge did not bring {CHANGES} prescriptions: {merged_out}")
imported, _ = timed(lambda env: [RXVAULT, "import", os.path.join(WORK, "b.json")])
same = os.path.join(WORK, "same.rxv")
shutil.copyfile(base_a, same)
in_step, out = timed(lambda env: [RXVAULT, "merge", same])
if "nothing to bring in" not in out:
    sys.exit(f"a copy of the same state brought something: {out}")
print(f"merging two copies of a {N:,}-prescription vault that each added {CHANGES}; median of {RUNS} runs, seconds")
print(f"{'merge (B into A)':32}{merge:10.3f}")
print(f"{'import of the same changes':32}{imported:10.3f}")
print(f"{'merge with nothing to move':32}{in_step:10.3f}")
print()
print(f"merge / import: {merge / imported:.2f}x")
print(f"nothing to move / import: {in_step / imported:.2f}x")
