#!/usr/bin/env python3
"""The vault in PostgreSQL beside the same work on a file (issue 25), in one run.

Usage: postgres_bench.py RXVAULT WORKDIR   (run it through Benchmarks/postgres.sh)

A throwaway PostgreSQL cluster (initdb as the postgres user into a temporary folder, scram
passwords, a free port on 127.0.0.1, fsync on as the file's synchronous=FULL) holds one vault;
a file beside it holds another, both made from the same generated export (Benchmarks/api_read.py's
generator: PRESCRIPTIONS, default 100,000). Measured, each side the same way:
  1. `rxvault import` of the export (wall time; goal: the database at most 2x the file);
  2. `rxvault query --expiring-within 60d --format json`, median of RUNS (5) whole processes
     (goal: at most 2x);
  3. GET /VisionPrescription/{id} over loopback TCP with wrk, CONNECTIONS (16) connections for
     SECONDS (10) s a run, ROUNDS (3) rounds, one client granted GRANTED (100) prescriptions:
     one `serve` on the file, one on the database (goal: at least 0.5x the file's reads/s, p99
     under 20 ms), and two more `serve` on the database behind nginx (round robin, at most 16
     connections to each: `serve` takes 16 at once from one address, and nginx is one; a token
     any instance issued is good at both) against the one: reads/s, p99, and the CPU seconds each
     side used in the run (the rxvault servers, PostgreSQL's processes, nginx, and wrk itself;
     2 cores are shared by all of them, so what two instances add is what the cores allow).
Prints every run, the medians, each goal with its ratio and a verdict: exit 0 every goal met, 1
not, 2 cannot run.
"""
import importlib.util, json, os, random, shutil, signal, statistics, subprocess, sys, time

RXVAULT, WORK = sys.argv[1], sys.argv[2]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
spec = importlib.util.spec_from_file_location("api_read", os.path.join(ROOT, "Benchmarks", "api_read.py"))
api = importlib.util.module_from_spec(spec)
spec.loader.exec_module(api)  # its generator, wrk runner and free_port; its knobs (PRESCRIPTIONS, ...)
sys.path.insert(0, os.path.join(ROOT, "Tests", "Support"))
from pg_cluster import Cluster, ClusterError  # noqa: E402  (the one the reliability suite uses too)

RUNS = int(os.environ.get("RUNS", "5"))
TODAY = api.TODAY
TICKS = os.sysconf("SC_CLK_TCK")


def say(text):
    print(text, flush=True)


def cpu_seconds(pids):
    total = 0
    for pid in pids:
        try:
            fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
        except OSError:
            continue
    return total / TICKS


def rxvault(env, *args, check=True):
    start = time.perf_counter()
    done = subprocess.run([RXVAULT, *args], env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if check and done.returncode != 0:
        sys.exit(f"postgres: rxvault {' '.join(args[:2])} failed ({done.returncode}): {done.stderr.strip()[:800]}")
    return elapsed, done.stdout


def serve(env, port, log, runtime):
    server = subprocess.Popen([RXVAULT, "serve", "--listen", f"127.0.0.1:{port}", "--log-level", "error"],
                              env=dict(env, XDG_RUNTIME_DIR=runtime), stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=open(log, "w"))
    deadline = time.time() + 60
    while "serving vault" not in open(log).read():
        if server.poll() is not None or time.time() > deadline:
            sys.exit(f"postgres: a server did not start: {open(log).read()[-800:]}")
        time.sleep(0.1)
    return server


def main():
    for tool in ("wrk", "nginx", "age"):
        if not shutil.which(tool) and not os.path.exists(f"/usr/sbin/{tool}"):
            print(f"postgres: needs {tool} (Debian packages wrk, nginx-light, age)", file=sys.stderr)
            return 2
    N, GRANTED = api.N, api.GRANTED
    passphrase = os.path.join(WORK, "pw")
    with open(os.open(passphrase, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
        f.write("benchmark passphrase, not a secret\n")
    base = dict(os.environ, RXVAULT_PASSPHRASE_FILE=passphrase, RXVAULT_TODAY=TODAY,
                XDG_STATE_HOME=os.path.join(WORK, "state"), XDG_RUNTIME_DIR=os.path.join(WORK, "run"))
    os.makedirs(os.path.join(WORK, "run"), mode=0o700)
    export = os.path.join(WORK, "export.json")
    with open(export, "w") as f:
        f.write('{"schema": "rxvault/export/v1", "exported": "2026-01-01T00:00:00Z", "prescriptions": [')
        for i, item in enumerate(api.generate(N)):
            f.write(("," if i else "") + json.dumps(item))
        f.write("]}")

    cluster = None
    processes = []
    nginx = None
    try:
        try:
            cluster = Cluster()
        except ClusterError as error:
            print(f"postgres: {error}", file=sys.stderr)
            return 2
        sides = {"file": dict(base, RXVAULT_PATH=os.path.join(WORK, "vault.rxv")),
                 "postgres": dict(base, RXVAULT_PATH=cluster.url, PGPASSWORD=cluster.password)}
        say(f"{N} prescriptions; PostgreSQL {os.path.basename(os.path.dirname(cluster.bin))} on 127.0.0.1:{cluster.port} "
            f"(TCP, scram, fsync on); rxvault {rxvault(base, '--version')[1].strip()}; {os.cpu_count()} CPUs")
        imports = {}
        for side, env in sides.items():
            rxvault(env, "init", "--kdf", "interactive")
            imports[side] = rxvault(env, "import", export)[0]
            say(f"import, {side}: {imports[side]:.1f} s")
        os.remove(export)

        queries = {}
        for side, env in sides.items():
            rxvault(env, "query", "--expiring-within", "60d", "--format", "json")  # warm
            times = [rxvault(env, "query", "--expiring-within", "60d", "--format", "json")[0] for _ in range(RUNS)]
            queries[side] = statistics.median(times)
            say(f"query --expiring-within 60d, {side}: median {queries[side] * 1000:.0f} ms of {RUNS} "
                f"({', '.join(f'{t * 1000:.0f}' for t in times)})")

        # One client, the same GRANTED prescriptions granted on both sides.
        key = os.path.join(WORK, "bench.key")
        rxvault(sides["file"], "client", "add", "bench", "--generate", "--identity-out", key)
        recipient = next(l for l in open(key) if l.startswith("# public key: ")).split(": ")[1].strip()
        rxvault(sides["postgres"], "client", "add", "bench", "--recipient", recipient)
        listed = json.loads(rxvault(sides["file"], "list", "--format", "json")[1])["prescriptions"]
        chosen = random.Random(5).sample([p["id"] for p in listed], GRANTED)
        for env in sides.values():
            for i in range(0, len(chosen), 50):
                rxvault(env, "grant", "bench", *chosen[i:i + 50], "--no-expiry")

        # The one measured alone is not behind nginx: nginx's idle upstream connections would count
        # against its 16 connections from one source (ServeSettings.maxConnectionsPerSource).
        ports = {"file": api.free_port(), "postgres": api.free_port(), "postgres-a": api.free_port(),
                 "postgres-b": api.free_port()}
        servers = {}
        for name, port in ports.items():
            runtime = os.path.join(WORK, f"run-{name}")
            os.makedirs(runtime, mode=0o700)
            env = sides["file" if name == "file" else "postgres"]
            servers[name] = serve(env, port, os.path.join(WORK, f"serve-{name}.log"), runtime)
            processes.append(servers[name])
        nginx_port = api.free_port()
        conf = os.path.join(WORK, "nginx.conf")
        with open(conf, "w") as f:
            f.write(f"""{"user root;" if os.geteuid() == 0 else ""}
worker_processes 1;
daemon off;
pid {WORK}/nginx.pid;
error_log {WORK}/nginx-error.log;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {WORK}/nginx-body;
    proxy_temp_path {WORK}/nginx-proxy;
    fastcgi_temp_path {WORK}/nginx-fastcgi;
    uwsgi_temp_path {WORK}/nginx-uwsgi;
    scgi_temp_path {WORK}/nginx-scgi;
    upstream rxvault {{
        server 127.0.0.1:{ports['postgres-a']} max_conns=16;
        server 127.0.0.1:{ports['postgres-b']} max_conns=16;
        keepalive 16;
    }}
    server {{
        listen 127.0.0.1:{nginx_port};
        location / {{ proxy_pass http://rxvault; proxy_http_version 1.1; proxy_set_header Connection ""; }}
    }}
}}
""")
        nginx = subprocess.Popen(["nginx", "-c", conf, "-p", WORK], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE)
        time.sleep(1)
        if nginx.poll() is not None:
            sys.exit("postgres: nginx did not start: " + nginx.stderr.read().decode())

        client_spec = importlib.util.spec_from_file_location("rxvault_client", os.path.join(ROOT, "examples/rxvault_client.py"))
        client_module = importlib.util.module_from_spec(client_spec)
        client_spec.loader.exec_module(client_module)
        targets = {"file": ports["file"], "postgres": ports["postgres"], "postgres x2 (nginx)": nginx_port}
        scripts = {}
        for name, port in targets.items():
            client = client_module.RxvaultClient(key, url=f"http://127.0.0.1:{port}")
            resources = client.search(_count=200)
            if len(resources) != GRANTED:
                sys.exit(f"postgres: the client sees {len(resources)} prescriptions at {name}, expected {GRANTED}")
            script = os.path.join(WORK, f"reads-{port}.lua")
            api.reads_script(script, [f"/VisionPrescription/{r['id']}" for r in resources], client.token)
            scripts[name] = script

        say(f"\nload: wrk, 2 threads, {api.CONNECTIONS} connections, {api.SECONDS} s a run, "
            f"GET /VisionPrescription/<one of {GRANTED} granted ids>")
        groups = {"serve file": lambda: [servers["file"].pid], "serve db": lambda: [servers["postgres"].pid],
                  "serve db a+b": lambda: [servers["postgres-a"].pid, servers["postgres-b"].pid],
                  "postgres": cluster.pids,
                  "nginx": lambda: [nginx.pid] + [int(p) for p in subprocess.run(["pgrep", "-P", str(nginx.pid)],
                                                                                 capture_output=True, text=True).stdout.split()]}
        for name in targets:
            api.wrk(targets[name], scripts[name], 3)
        runs = {name: [] for name in targets}
        for _ in range(api.ROUNDS):
            for name in targets:
                before = {group: cpu_seconds(pids()) for group, pids in groups.items()}
                own = os.times()
                result = api.wrk(targets[name], scripts[name], api.SECONDS)
                after = os.times()
                result["cpu"] = {group: cpu_seconds(pids()) - before[group] for group, pids in groups.items()}
                result["cpu"]["wrk"] = after.children_user + after.children_system - own.children_user - own.children_system
                runs[name].append(result)
        for server in servers.values():
            server.send_signal(signal.SIGTERM)
        codes = {name: server.wait(timeout=120) for name, server in servers.items()}
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
        if nginx and nginx.poll() is None:
            nginx.send_signal(signal.SIGQUIT)
            nginx.wait(timeout=30)
        if cluster:
            cluster.stop()

    groups_named = list(runs[next(iter(targets))][0]["cpu"])
    say(f"\n{'target':>20} {'run':>4} {'reads/s':>9} {'p50 ms':>7} {'p99 ms':>7} {'non-2xx':>7}  CPU s in the run: "
        + ", ".join(groups_named) + "; socket errors")
    for name in targets:
        for i, r in enumerate(runs[name]):
            say(f"{name:>20} {i + 1:>4} {r['rps']:>9.0f} {r['p50']:>7.2f} {r['p99']:>7.2f} {r['non2xx']:>7}  "
                + ", ".join(f"{r['cpu'][g]:.1f}" for g in groups_named) + f"; {r['socket'] or '-'}")
    med = {name: {k: statistics.median(r[k] for r in runs[name]) for k in ("rps", "p50", "p99")} for name in targets}
    failures = sum(r["non2xx"] for rs in runs.values() for r in rs)

    goals = []

    def goal(text, value, ok):
        goals.append(ok)
        say(f"{'met    ' if ok else 'NOT MET'}  {text}: {value}")

    say("")
    goal("import, database / file (at most 2x)", f"{imports['postgres']:.1f} s / {imports['file']:.1f} s = "
         f"{imports['postgres'] / imports['file']:.2f}x", imports["postgres"] <= 2 * imports["file"])
    goal("query --expiring-within 60d, database / file (at most 2x)",
         f"{queries['postgres'] * 1000:.0f} ms / {queries['file'] * 1000:.0f} ms = {queries['postgres'] / queries['file']:.2f}x",
         queries["postgres"] <= 2 * queries["file"])
    ratio = med["postgres"]["rps"] / med["file"]["rps"] if med["file"]["rps"] else 0
    goal("API reads/s, one serve on the database / one on the file (at least 0.5x)",
         f"{med['postgres']['rps']:.0f} / {med['file']['rps']:.0f} = {ratio:.2f}x", ratio >= 0.5)
    goal("API p99, one serve on the database (under 20 ms)", f"{med['postgres']['p99']:.2f} ms (file {med['file']['p99']:.2f} ms)",
         med["postgres"]["p99"] < 20)
    goal("every answer 2xx, every server exited 0 on SIGTERM", f"{failures} non-2xx; exit statuses {codes}",
         failures == 0 and all(code == 0 for code in codes.values()))
    two = med["postgres x2 (nginx)"]
    cpu = {name: {g: statistics.median(r["cpu"][g] for r in runs[name]) for g in runs[name][0]["cpu"]} for name in targets}
    say(f"report   two serve behind nginx / one serve: {two['rps']:.0f} / {med['postgres']['rps']:.0f} reads/s = "
        f"{two['rps'] / med['postgres']['rps']:.2f}x (p99 {two['p99']:.2f} ms against {med['postgres']['p99']:.2f} ms); "
        f"median CPU s a run ({', '.join(groups_named)}): two {tuple(round(v, 1) for v in cpu['postgres x2 (nginx)'].values())}, "
        f"one {tuple(round(v, 1) for v in cpu['postgres'].values())}, of {api.SECONDS * (os.cpu_count() or 1)} CPU s the "
        f"{os.cpu_count()} cores give a run")
    say("VERDICT: " + ("PASS" if all(goals) else "FAIL (goals not met)"))
    return 0 if all(goals) else 1


if __name__ == "__main__":
    sys.exit(main())
