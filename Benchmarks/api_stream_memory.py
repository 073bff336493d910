#!/usr/bin/env python3
"""The server's memory while it streams a big attachment to slow readers (rxvault serve).

Usage: api_stream_memory.py RXVAULT WORKDIR [--slow-seconds N] [--readers N] [--threshold-chunks N]

Makes a vault with one prescription and a ~32 MiB noise PNG attached, granted to one client,
starts `rxvault serve` on a Unix socket, authenticates with the reference client
(examples/rxvault_client.py), then measures the server's own memory from /proc/PID/status:

  baseline   VmRSS after a few requests, when VmHWM is reset (/proc/PID/clear_refs: the
             Argon2id block of the passphrase is long gone by then)
  1 reader   GET /Binary/<id> read at 8 KiB/s for --slow-seconds, then at full speed to the end
             (the body is checked against the file's SHA-256)
  N readers  the same with --readers concurrent slow readers
  peak       VmHWM at the end of each phase (the exact peak since the reset) and the largest VmRSS
             sampled every 50 ms

A server that buffered the file would show ~32 MiB per reader; one that streams shows a few
64 KiB chunks. Prints a table and a verdict: exit 0 PASS, 1 FAIL (a peak over --threshold-chunks
chunks above the baseline per reader), 2 cannot run.
"""
import argparse, hashlib, importlib.util, os, signal, socket, subprocess, sys, threading, time

CHUNK = 64 * 1024
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def status(pid):
    values = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM", "RssAnon"):
                values[key] = int(value.split()[0])
    return values


def reset_peak(pid):
    with open(f"/proc/{pid}/clear_refs", "w") as f:
        f.write("5")


class Sampler(threading.Thread):
    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.peak, self.done = pid, 0, threading.Event()

    def run(self):
        while not self.done.wait(0.05):
            try:
                self.peak = max(self.peak, status(self.pid)["VmRSS"])
            except OSError:
                return


def download(socket_path, binary_id, token, slow_seconds, rate, digest_out):
    """Reads the attachment at `rate` bytes/s for `slow_seconds`, then as fast as it comes."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 * 1024)
    s.connect(socket_path)
    s.sendall(f"GET /Binary/{binary_id} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n\r\n".encode())
    buffered = b""
    while b"\r\n\r\n" not in buffered:
        buffered += s.recv(4096)
    head, _, body = buffered.partition(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 200"):
        raise RuntimeError(f"GET /Binary answered {head[:60]!r}")
    length = int(next(line.split(b":", 1)[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")))
    digest = hashlib.sha256(body)
    got = len(body)
    start = time.monotonic()
    step = 2048
    while got < length and time.monotonic() - start < slow_seconds:
        block = s.recv(step)
        if not block:
            break
        digest.update(block)
        got += len(block)
        time.sleep(len(block) / rate)
    slow_bytes = got
    while got < length:
        block = s.recv(1 << 20)
        if not block:
            break
        digest.update(block)
        got += len(block)
    s.close()
    digest_out.append((got, length, slow_bytes, digest.hexdigest()))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("work")
    parser.add_argument("--slow-seconds", type=float, default=20)
    parser.add_argument("--readers", type=int, default=8)
    parser.add_argument("--threshold-chunks", type=int, default=16)
    args = parser.parse_args()
    work = args.work

    with open(os.open(os.path.join(work, "pw"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
        f.write("benchmark passphrase, not a secret\n")
    env = dict(os.environ, RXVAULT_PATH=os.path.join(work, "v.rxv"), RXVAULT_PASSPHRASE_FILE=os.path.join(work, "pw"),
               XDG_STATE_HOME=os.path.join(work, "state"))

    def run(*command):
        r = subprocess.run([args.binary, *command], env=env, capture_output=True, text=True)
        if r.returncode != 0:
            print(f"api-stream-memory: rxvault {command[0]} failed: {r.stderr.strip()}", file=sys.stderr)
            sys.exit(2)
        return r.stdout.strip()

    run("init", "--kdf", "interactive", "--max-attachment-size", "64MiB")
    rx = run("add", "glasses", "--patient", "P", "--prescriber", "D", "--issued", "2026-01-01", "--od", "plano")
    png = os.path.join(work, "big.png")
    # 3300 x 3300 noise at zlib level 0: ~31.2 MiB that does not compress.
    subprocess.run([sys.executable, os.path.join(ROOT, "Benchmarks/make_noise_png.py"), png, "3300", "3300"], check=True, capture_output=True)
    size = os.path.getsize(png)
    with open(png, "rb") as f:
        expected = hashlib.sha256(f.read()).hexdigest()
    run("attach", rx, png, "--name", "big.png")
    key = os.path.join(work, "reader.key")
    run("client", "add", "reader", "--generate", "--identity-out", key)
    run("grant", "reader", rx)

    sock = os.path.join(work, "api.sock")
    log = open(os.path.join(work, "serve.log"), "w")
    server = subprocess.Popen([args.binary, "serve", "--socket", sock, "--log-level", "error"], env=env,
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
    try:
        deadline = time.time() + 60
        while not os.path.exists(sock):
            if server.poll() is not None or time.time() > deadline:
                print("api-stream-memory: the server did not start: " + open(os.path.join(work, "serve.log")).read(), file=sys.stderr)
                return 2
            time.sleep(0.05)
        spec = importlib.util.spec_from_file_location("rxvault_client", os.path.join(ROOT, "examples/rxvault_client.py"))
        client_module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(client_module)
        client = client_module.RxvaultClient(key, socket_path=sock)
        resource = client.search()[0]["id"]
        binary_id = client.attachments(resource)[0]["content"][0]["attachment"]["url"].rsplit("/", 1)[1]
        # Warm up: a small download of the real thing at full speed, so code and caches are in.
        results = []
        download(sock, binary_id, client.token, 0, 1, results)
        time.sleep(1)
        reset_peak(server.pid)
        baseline = status(server.pid)
        rows = []
        ok = results[0][0] == size and results[0][3] == expected
        for readers in (1, 1, args.readers):
            reset_peak(server.pid)
            before = status(server.pid)
            sampler = Sampler(server.pid)
            sampler.start()
            results = []
            threads = [threading.Thread(target=download, args=(sock, binary_id, client.token, args.slow_seconds, 8 * 1024, results))
                       for _ in range(readers)]
            start = time.monotonic()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            took = time.monotonic() - start
            sampler.done.set()
            sampler.join()
            after = status(server.pid)
            ok = ok and len(results) == readers and all(got == size and digest == expected for got, _, _, digest in results)
            slow = sum(r[2] for r in results) / max(1, len(results))
            rows.append((readers, before["VmRSS"], after["VmHWM"], sampler.peak, after["VmRSS"], slow, took))
            time.sleep(1)
        server.send_signal(signal.SIGTERM)
        code = server.wait(timeout=60)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()

    print(f"attachment: {size} bytes ({size / 1048576:.1f} MiB), chunk {CHUNK // 1024} KiB; readers read 8 KiB/s for "
          f"{args.slow_seconds:.0f} s, then at full speed; bodies checked against SHA-256: {'OK' if ok else 'MISMATCH'}")
    print(f"server baseline (after warm-up, peak reset): VmRSS {baseline['VmRSS'] / 1024:.1f} MiB, RssAnon {baseline['RssAnon'] / 1024:.1f} MiB")
    print(f"{'readers':>8} {'RSS before MiB':>15} {'VmHWM MiB':>10} {'sampled max MiB':>16} {'peak above before':>18} {'chunks/reader':>14} "
          f"{'slow KiB/reader':>16} {'wall s':>7}")
    verdict = ok and code == 0
    for readers, before, hwm, sampled, after, slow, took in rows:
        peak = max(hwm, sampled)
        chunks = (peak - before) / (CHUNK // 1024) / readers
        verdict = verdict and chunks <= args.threshold_chunks
        print(f"{readers:>8} {before / 1024:>15.1f} {hwm / 1024:>10.1f} {sampled / 1024:>16.1f} {(peak - before) / 1024:>+15.2f} MiB "
              f"{chunks:>14.1f} {slow / 1024:>16.0f} {took:>7.1f}")
    print(f"server exit status on SIGTERM: {code}")
    print(f"threshold: at most {args.threshold_chunks} chunks ({args.threshold_chunks * CHUNK // 1024} KiB) per reader above the level before")
    print("VERDICT: " + ("PASS" if verdict else "FAIL"))
    return 0 if verdict else 1


if __name__ == "__main__":
    sys.exit(main())
