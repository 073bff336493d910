#!/usr/bin/env python3
"""Reads per second and latency of GET /VisionPrescription/{id} (rxvault serve) against nginx
serving the same FHIR JSON from files, with the same load generator (wrk --latency).

Usage: api_read.py RXVAULT WORKDIR   (run it through Benchmarks/api-read.sh)

The vault holds PRESCRIPTIONS (default 100,000) prescriptions, generated as an rxvault export
(docs/format.md, "Export JSON v1") and brought in with `rxvault import`; one client is granted
GRANTED (default 100) of them. The server listens on loopback TCP with its defaults (log level
info: a line per request on stderr, here into a file; every read queued for the owner's audit
log). wrk runs CONNECTIONS (16) connections on 2 threads for SECONDS (10) s per run, each request
a random one of the granted ids with the client's bearer token. nginx (`worker_processes auto`,
an access log line per request) serves each of those resources, as the server sent them, from a
file at the same path, and BARE_HUMMINGBIRD (Benchmarks/BareHummingbird, built by api-read.sh)
the same bytes from memory with no authentication, vault or log line: what Hummingbird itself
allows. Runs alternate (rxvault, nginx, bare, ...) ROUNDS (3) times after a warm-up; the table
shows every run and the verdict uses the medians.

Environment: PRESCRIPTIONS, GRANTED, CONNECTIONS, SECONDS, ROUNDS; RXVAULT_BENCH_CACHE=DIR keeps
the imported vault there and reuses it (the import is most of the first run's time);
LOG_LEVEL (info) for the server. PERF_OUT=FILE adds one rxvault run after the rounds under
`perf record -g` attached to the server (its numbers are not in the table: perf slows it), for
`perf report -i FILE` to say where a read's time goes.
"""
import importlib.util, json, os, random, re, shutil, signal, statistics, subprocess, sys, time

RXVAULT, WORK = sys.argv[1], sys.argv[2]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Tests", "Support"))
from pg_cluster import free_port  # noqa: E402  (one definition for the benchmarks and the suites)
N = int(os.environ.get("PRESCRIPTIONS", "100000"))
GRANTED = int(os.environ.get("GRANTED", "100"))
CONNECTIONS = int(os.environ.get("CONNECTIONS", "16"))
SECONDS = int(os.environ.get("SECONDS", "10"))
ROUNDS = int(os.environ.get("ROUNDS", "3"))
LOG_LEVEL = os.environ.get("LOG_LEVEL", "info")
PERF_OUT = os.environ.get("PERF_OUT")
TODAY = "2026-04-20"


def generate(n, seed=11):
    rng = random.Random(seed)
    first = ["Sam", "Kim", "Ada", "Lin", "Omar", "Eva", "Raj", "Mia", "Noor", "Tomas"]
    last = ["Rivera", "Park", "Lovelace", "Chen", "Haddad", "Novak", "Patel", "Rossi", "Okafor", "Berg"]
    for i in range(n):
        kind = "glasses" if i % 3 else "contacts"
        y, m, d = 2020 + i % 6, 1 + i % 12, 1 + i % 28
        rx = {"kind": kind, "patient": {"name": f"{rng.choice(first)} {rng.choice(last)} {i}", "birthDate": f"{1950 + i % 60:04d}-{m:02d}-{d:02d}"},
              "prescriber": {"name": "Dr Ana Lee", "licence": "OD-20417"},
              "issued": f"{y:04d}-{m:02d}-{d:02d}", "expires": f"{y + (2 if kind == 'glasses' else 1):04d}-{m:02d}-{d:02d}",
              "right": {"sphere": -0.25 * (i % 40), "cylinder": -0.5, "axis": 1 + i % 180},
              "left": {"sphere": -0.25 * ((i + 3) % 40), "cylinder": -0.75, "axis": 1 + (i * 7) % 180}}
        if kind == "contacts":
            for eye in ("right", "left"):
                rx[eye].update({"baseCurve": 8.6, "diameter": 14.2, "brand": "Acuvue"})
        else:
            rx["pupillaryDistance"] = {"far": 63, "near": 60}
        yield {"id": "%032x" % rng.getrandbits(128), "version": 1, "recorded": "2026-01-01T00:00:00Z", "prescription": rx}


def run(*args, env, check=True):
    done = subprocess.run([RXVAULT, *args], env=env, capture_output=True, text=True)
    if check and done.returncode != 0:
        sys.exit(f"api-read: rxvault {args[0]} failed ({done.returncode}): {done.stderr.strip()[:500]}")
    return done.stdout


def vault(env, folder):
    path = env["RXVAULT_PATH"]
    if os.path.exists(path):
        print(f"vault: reusing {path}")
        return
    export = os.path.join(folder, "export.json")
    with open(export, "w") as f:
        f.write('{"schema": "rxvault/export/v1", "exported": "2026-01-01T00:00:00Z", "prescriptions": [')
        for i, item in enumerate(generate(N)):
            f.write(("," if i else "") + json.dumps(item))
        f.write("]}")
    run("init", "--kdf", "interactive", env=env)
    start = time.monotonic()
    run("import", export, env=env)
    print(f"vault: {N} prescriptions imported in {time.monotonic() - start:.0f} s ({os.path.getsize(path) >> 20} MiB)")
    os.remove(export)


def wrk(port, script, seconds):
    out = subprocess.run(["wrk", "-t2", f"-c{CONNECTIONS}", f"-d{seconds}s", "--latency", "-s", script, f"http://127.0.0.1:{port}"],
                         capture_output=True, text=True).stdout

    def latency(label):
        match = re.search(rf"^\s+{label}%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
        if not match:
            return float("nan")
        value, unit = float(match.group(1)), match.group(2)
        return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value

    rps = re.search(r"Requests/sec:\s+([\d.]+)", out)
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    socket_errors = re.search(r"Socket errors: (.*)", out)
    return {"rps": float(rps.group(1)) if rps else 0.0, "p50": latency("50"), "p99": latency("99"),
            "non2xx": int(errors.group(1)) if errors else 0, "socket": socket_errors.group(1) if socket_errors else "", "raw": out}


def reads_script(script, paths, token):
    """A wrk script: each request GETs a random one of `paths` with the bearer token."""
    with open(script, "w") as f:
        f.write("local paths = {" + ",".join(f'"{p}"' for p in paths) + "}\n")
        f.write(f'local headers = {{["Authorization"] = "Bearer {token}", ["Accept"] = "application/fhir+json"}}\n')
        f.write("local counter = 0\nfunction setup(thread) counter = counter + 1; thread:set('seed', counter) end\n")
        f.write("function init(args) math.randomseed(seed * 7919 + os.time()) end\n")
        f.write('function request() return wrk.format("GET", paths[math.random(#paths)], headers) end\n')


def main():
    for tool in ("wrk", "nginx", "age"):
        if not shutil.which(tool) and not os.path.exists(f"/usr/sbin/{tool}"):
            print(f"api-read: needs {tool} (Debian packages wrk, nginx-light, age)", file=sys.stderr)
            return 2
    cache = os.environ.get("RXVAULT_BENCH_CACHE")
    folder = cache or os.path.join(WORK, "vault")
    os.makedirs(folder, exist_ok=True)
    with open(os.open(os.path.join(folder, "pw"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
        f.write("benchmark passphrase, not a secret\n")
    env = dict(os.environ, RXVAULT_PATH=os.path.join(folder, f"v{N}.rxv"), RXVAULT_PASSPHRASE_FILE=os.path.join(folder, "pw"),
               RXVAULT_TODAY=TODAY, XDG_STATE_HOME=os.path.join(folder, "state"))
    vault(env, folder)

    # One client granted GRANTED prescriptions (spread over the vault), made afresh each run.
    run("client", "remove", "bench", "--yes", env=env, check=False)
    key = os.path.join(WORK, "bench.key")
    run("client", "add", "bench", "--generate", "--identity-out", key, env=env)
    listed = json.loads(run("list", "--format", "json", env=env))["prescriptions"]
    chosen = random.Random(5).sample([p["id"] for p in listed], GRANTED)
    for i in range(0, len(chosen), 50):
        run("grant", "bench", *chosen[i:i + 50], "--no-expiry", env=env)

    port = free_port()
    log = open(os.path.join(WORK, "serve.log"), "w")
    server = subprocess.Popen([RXVAULT, "serve", "--listen", f"127.0.0.1:{port}", "--log-level", LOG_LEVEL], env=env,
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
    nginx = bare = None
    try:
        deadline = time.time() + 60
        while "serving vault" not in open(os.path.join(WORK, "serve.log")).read():
            if server.poll() is not None or time.time() > deadline:
                sys.exit("api-read: the server did not start: " + open(os.path.join(WORK, "serve.log")).read())
            time.sleep(0.1)
        spec = importlib.util.spec_from_file_location("rxvault_client", os.path.join(ROOT, "examples/rxvault_client.py"))
        client_module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(client_module)
        client = client_module.RxvaultClient(key, url=f"http://127.0.0.1:{port}")
        resources = client.search(_count=200)
        if len(resources) != GRANTED:
            sys.exit(f"api-read: the client sees {len(resources)} prescriptions, expected {GRANTED}")
        token = client.token

        # nginx: the same bodies, byte for byte, at the same paths.
        web = os.path.join(WORK, "www")
        os.makedirs(os.path.join(web, "VisionPrescription"))
        paths = []
        for resource in resources:
            data, _ = client._request("GET", f"/VisionPrescription/{resource['id']}", raw=True)
            with open(os.path.join(web, "VisionPrescription", resource["id"]), "wb") as f:
                f.write(data)
            paths.append(f"/VisionPrescription/{resource['id']}")
        body_sizes = [os.path.getsize(os.path.join(web, p.lstrip("/"))) for p in paths]
        nginx_port = free_port()
        conf = os.path.join(WORK, "nginx.conf")
        with open(conf, "w") as f:
            f.write(f"""{"user root;" if os.geteuid() == 0 else ""}
worker_processes auto;
daemon off;
pid {WORK}/nginx.pid;
error_log {WORK}/nginx-error.log;
events {{ worker_connections 1024; }}
http {{
    access_log {WORK}/nginx-access.log;
    client_body_temp_path {WORK}/nginx-body;
    proxy_temp_path {WORK}/nginx-proxy;
    fastcgi_temp_path {WORK}/nginx-fastcgi;
    uwsgi_temp_path {WORK}/nginx-uwsgi;
    scgi_temp_path {WORK}/nginx-scgi;
    keepalive_requests 1000000;
    server {{
        listen 127.0.0.1:{nginx_port};
        root {web};
        default_type "application/fhir+json; charset=utf-8";
        location / {{ try_files $uri =404; }}
    }}
}}
""")
        nginx = subprocess.Popen(["nginx", "-c", conf, "-p", WORK], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        bare_port = free_port()
        bare = subprocess.Popen([os.environ["BARE_HUMMINGBIRD"], str(bare_port), web], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(1)
        if nginx.poll() is not None:
            sys.exit("api-read: nginx did not start: " + nginx.stderr.read().decode())
        if bare.poll() is not None:
            sys.exit("api-read: the bare Hummingbird server did not start: " + bare.stderr.read().decode())

        script = os.path.join(WORK, "reads.lua")
        reads_script(script, paths, token)

        print(f"load: wrk, 2 threads, {CONNECTIONS} connections, {SECONDS} s a run, GET /VisionPrescription/<one of {GRANTED} granted ids> "
              f"with the bearer token; bodies {min(body_sizes)}-{max(body_sizes)} bytes")
        servers = {"rxvault": port, "nginx": nginx_port, "bare": bare_port}
        for each in servers.values():
            wrk(each, script, 3)
        runs = {name: [] for name in servers}
        for _ in range(ROUNDS):
            for name, each in servers.items():
                runs[name].append(wrk(each, script, SECONDS))
        if PERF_OUT:
            perf = subprocess.Popen(["perf", "record", "-q", "-g", "-F", "2000", "-o", PERF_OUT, "-p", str(server.pid)],
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            time.sleep(1)
            profiled = wrk(port, script, SECONDS)
            perf.send_signal(signal.SIGINT)
            perf.wait(timeout=120)
            print(f"profile: {profiled['rps']:.0f} reads/s under perf, written to {PERF_OUT} (perf report -i {PERF_OUT})")
        server.send_signal(signal.SIGTERM)
        code = server.wait(timeout=120)
    finally:
        if server.poll() is None:
            server.kill()
        if bare and bare.poll() is None:
            bare.kill()
        if nginx and nginx.poll() is None:
            nginx.send_signal(signal.SIGQUIT)
            nginx.wait(timeout=30)

    print(f"\n{'server':>8} {'run':>4} {'reads/s':>10} {'p50 ms':>8} {'p99 ms':>8} {'non-2xx':>8}  socket errors")
    for name in ("rxvault", "nginx", "bare"):
        for i, r in enumerate(runs[name]):
            print(f"{name:>8} {i + 1:>4} {r['rps']:>10.0f} {r['p50']:>8.2f} {r['p99']:>8.2f} {r['non2xx']:>8}  {r['socket'] or '-'}")
    med = {name: {k: statistics.median(r[k] for r in runs[name]) for k in ("rps", "p50", "p99")} for name in runs}
    ratio = med["rxvault"]["rps"] / med["nginx"]["rps"] if med["nginx"]["rps"] else float("nan")
    ceiling = med["bare"]["rps"] / med["nginx"]["rps"] if med["nginx"]["rps"] else float("nan")
    of_bare = med["rxvault"]["rps"] / med["bare"]["rps"] if med["bare"]["rps"] else float("nan")
    failures = sum(r["non2xx"] for r in runs["rxvault"])
    print(f"\nmedian: rxvault {med['rxvault']['rps']:.0f} reads/s (p50 {med['rxvault']['p50']:.2f} ms, p99 {med['rxvault']['p99']:.2f} ms); "
          f"nginx {med['nginx']['rps']:.0f} reads/s (p50 {med['nginx']['p50']:.2f} ms, p99 {med['nginx']['p99']:.2f} ms); "
          f"bare Hummingbird {med['bare']['rps']:.0f} reads/s (p50 {med['bare']['p50']:.2f} ms, p99 {med['bare']['p99']:.2f} ms)")
    print(f"ratio rxvault / nginx: {ratio:.2f} (aim: at least 0.5); rxvault p99 {med['rxvault']['p99']:.2f} ms (aim: under 5 ms); "
          f"non-2xx answers from rxvault: {failures}; server exit status on SIGTERM: {code}")
    print(f"ceiling: bare Hummingbird / nginx {ceiling:.2f}; rxvault / bare Hummingbird {of_bare:.2f}")
    ok = ratio >= 0.5 and med["rxvault"]["p99"] < 5 and failures == 0 and code == 0
    print("VERDICT: " + ("PASS" if ok else "FAIL (aims not met)"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
