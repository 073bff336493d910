"""Hostile clients against `rxvault serve` (the reliability suite's `api` part).

Raw sockets, no HTTP library: malformed requests (garbage, bad request lines, huge and endless
headers, broken chunked bodies, pipelined junk, seeded random bytes and mutations of valid
requests), slow clients (a head sent a byte at a time, a body trickled in, a download never
read), more connections than the cap, and bodies far over the limit. After every round: the
server is running, answers GET /metadata promptly, still serves a client its grant, holds no
more connections than its cap, and its memory stays bounded. At the end SIGTERM stops it with
exit status 0, hostile connections still open.
"""
import hashlib, importlib.util, os, random, re, signal, socket, ssl, subprocess, sys, threading, time

IDLE = 2                    # RXVAULT_SERVE_IDLE_TIMEOUT for the suite (the default is 30 s)
MAX_CONNECTIONS = 64        # ServeSettings.maxConnections
MEMORY_SLACK_KIB = 48 * 1024  # RSS may grow this much over its level after the first requests
STREAM_SLACK_KIB = 8 * 1024  # RSS may rise this much while a ~31 MiB attachment streams to a slow reader
PROMPT = 1.0                # seconds: GET /metadata must be answered this fast between rounds


class APIServer:
    """`rxvault serve` on a Unix socket in the vault's folder, its stderr in a file."""

    def __init__(self, binary, vault, name="api", idle=IDLE, tls=None):
        """On a Unix socket; with `tls` (certificate, key, port), TLS on 127.0.0.1:port instead."""
        self.socket_path = os.path.join(vault.folder, name + ".sock")
        self.tls = tls
        self.log_path = os.path.join(vault.folder, name + ".log")
        self.log = open(self.log_path, "w")
        where = ["--listen", f"127.0.0.1:{tls[2]}", "--tls-cert", tls[0], "--tls-key", tls[1]] if tls else ["--socket", self.socket_path]
        self.process = subprocess.Popen([binary, "serve", *where, "--log-level", "notice"],
                                        env=dict(vault.env, RXVAULT_SERVE_IDLE_TIMEOUT=str(idle)),
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.log)
        deadline = time.time() + 60
        while "rxvault: serving vault" not in self.stderr():
            if self.process.poll() is not None or time.time() > deadline:
                raise RuntimeError("rxvault serve did not start: " + self.stderr())
            time.sleep(0.05)

    def stderr(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def status(self):
        """VmRSS and VmHWM in KiB, and the number of open file descriptors."""
        fields = {}
        with open(f"/proc/{self.process.pid}/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    fields[key] = int(value.split()[0])
        return fields["VmRSS"], fields["VmHWM"], len(os.listdir(f"/proc/{self.process.pid}/fd"))

    def connect(self, timeout=5.0):
        """A connection, retrying while the listen queue is full (a Unix socket refuses with EAGAIN)."""
        deadline = time.monotonic() + timeout
        while True:
            s = socket.socket(socket.AF_INET if self.tls else socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(timeout)
            try:
                s.connect(("127.0.0.1", self.tls[2]) if self.tls else self.socket_path)
                return s
            except BlockingIOError:
                s.close()
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.02)

    def exchange(self, data, timeout=5.0, half_close=True, chunk=65536):
        """Sends `data` on a new connection (then, with `half_close`, shuts the sending side as a
        client that is done does) and reads until the server closes it or `timeout` passes.
        Returns (what was read, True if the server closed, seconds taken)."""
        start = time.monotonic()
        s = self.connect(timeout)
        received = bytearray()
        closed = False
        try:
            try:
                for i in range(0, len(data), chunk):
                    s.sendall(data[i:i + chunk])
                if half_close:
                    s.shutdown(socket.SHUT_WR)
            except (BrokenPipeError, ConnectionResetError, socket.timeout):
                pass                    # the server stopped reading, or closed: what it said is read below
            deadline = max(start + timeout, time.monotonic() + 2)
            while time.monotonic() < deadline:
                s.settimeout(max(0.05, deadline - time.monotonic()))
                try:
                    block = s.recv(65536)
                except socket.timeout:
                    break
                except ConnectionResetError:
                    closed = True
                    break
                if not block:
                    closed = True
                    break
                received += block
        finally:
            s.close()
        return bytes(received), closed, time.monotonic() - start

    def metadata(self, timeout=10.0):
        """(status, seconds) of GET /metadata on a fresh connection."""
        if self.tls:
            start = time.monotonic()
            context = ssl.create_default_context(cafile=self.tls[0])
            with context.wrap_socket(self.connect(timeout), server_hostname="localhost") as s:
                s.sendall(b"GET /metadata HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
                data = b""
                while block := s.recv(65536):
                    data += block
            return (statuses(data)[:1] or [0])[0], time.monotonic() - start
        data, _, took = self.exchange(b"GET /metadata HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", timeout)
        return (statuses(data)[:1] or [0])[0], took

    def stop(self, timeout=30):
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            return None


def statuses(data):
    return [int(m) for m in re.findall(rb"HTTP/1\.[01] (\d{3}) ", data)]


def request(method, path, headers=(), body=b"", version=b"HTTP/1.1"):
    lines = [method + b" " + path + b" " + version, b"Host: localhost", *headers]
    if body:
        lines.append(b"Content-Length: " + str(len(body)).encode())
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


VALID = [
    request(b"GET", b"/metadata"),
    request(b"POST", b"/auth/challenge", [b"Content-Type: application/json"], b'{"recipient": "age1xyz"}'),
    request(b"GET", b"/VisionPrescription?_count=5", [b"Authorization: Bearer rxv_nothing"]),
    request(b"GET", b"/Binary/abc", [b"Authorization: Bearer rxv_nothing"]),
    request(b"POST", b"/auth/token", [b"Content-Type: application/json"], b'{"challenge": "c", "response": "r"}'),
]

# Malformed requests: (name, bytes). Each must be answered with a 4xx or closed, never a 5xx, a
# hang past the idle timeout, or a crash.
MALFORMED = [
    ("empty line", b"\r\n\r\n"),
    ("garbage line", b"hello there\r\n\r\n"),
    ("no version", b"GET /metadata\r\n\r\n"),
    ("HTTP/9.9", b"GET /metadata HTTP/9.9\r\nHost: x\r\n\r\n"),
    ("HTTP/0.9 style", b"GET /\r\n"),
    ("lower-case method", b"get /metadata HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("unknown method", b"FROBNICATE /metadata HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("NUL in the request line", b"GET /meta\x00data HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("control bytes in the path", b"GET /\x01\x02\x7f HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("bad percent-encoding", b"GET /VisionPrescription/%zz%%% HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("dot segments", b"GET /../../../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("absolute URI", b"GET http://evil.example/metadata HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("asterisk URI", b"OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("CONNECT", b"CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n"),
    ("long URI", b"GET /" + b"a" * 200_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("long query", b"GET /VisionPrescription?" + b"patient=x&" * 20_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("header without colon", b"GET /metadata HTTP/1.1\r\nHost x\r\n\r\n"),
    ("space before colon", b"GET /metadata HTTP/1.1\r\nHost : x\r\n\r\n"),
    ("obsolete line folding", b"GET /metadata HTTP/1.1\r\nHost: x\r\nX-A: a\r\n  folded\r\n\r\n"),
    ("NUL in a header", b"GET /metadata HTTP/1.1\r\nHost: x\x00y\r\n\r\n"),
    ("bare LF", b"GET /metadata HTTP/1.1\nHost: x\n\n"),
    ("bare CR", b"GET /metadata HTTP/1.1\rHost: x\r\r"),
    ("one huge header", b"GET /metadata HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 1_000_000 + b"\r\n\r\n"),
    ("many headers", b"GET /metadata HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-%d: v\r\n" % i for i in range(20_000)) + b"\r\n"),
    ("huge bearer token", b"GET /VisionPrescription HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + b"t" * 15_000 + b"\r\n\r\n"),
    ("huge Host", b"GET /VisionPrescription HTTP/1.1\r\nHost: " + b"h" * 15_000 + b"\r\n\r\n"),
    ("negative Content-Length", b"POST /auth/challenge HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\nhello"),
    ("huge Content-Length", b"POST /auth/challenge HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\nhello"),
    ("two Content-Lengths", b"POST /auth/challenge HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\nhello12"),
    ("Content-Length with chunked", b"POST /auth/challenge HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"),
    ("unknown transfer coding", b"POST /auth/challenge HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, rot13\r\n\r\nhello"),
    ("chunk size not hex", b"POST /auth/challenge HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n"),
    ("chunk size overflow", b"POST /auth/challenge HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffffffffff\r\nhello\r\n0\r\n\r\n"),
    ("chunk longer than said", b"POST /auth/challenge HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhello world\r\n0\r\n\r\n"),
    ("chunk without CRLF", b"POST /auth/challenge HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5hello0"),
    ("negative chunk size", b"POST /auth/challenge HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\nhello\r\n0\r\n\r\n"),
    ("chunk extension flood", b"POST /auth/challenge HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5;" + b"e" * 200_000 + b"\r\nhello\r\n0\r\n\r\n"),
    ("trailer flood", b"POST /auth/challenge HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n" + b"X-T: t\r\n" * 20_000 + b"\r\n"),
    ("body over the limit", request(b"POST", b"/auth/challenge", [b"Content-Type: application/json"], b"{" + b" " * 200_000 + b"}")),
    ("chunked body over the limit", b"POST /auth/challenge HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
     + b"4000\r\n" + b"x" * 0x4000 + b"\r\n" + b"4000\r\n" + b"y" * 0x4000 + b"\r\n0\r\n\r\n"),
    ("JSON nesting bomb", request(b"POST", b"/auth/challenge", [b"Content-Type: application/json"], b"[" * 8000 + b"]" * 8000)),
    ("JSON of the wrong shape", request(b"POST", b"/auth/token", [b"Content-Type: application/json"], b'{"challenge": 5, "response": ["x"]}')),
    ("request smuggling attempt", b"POST /auth/challenge HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n0\r\n\r\nGET /metadata HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("pipelined junk", VALID[0] * 20 + b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"junk\r\n\r\n" + VALID[0]),
    ("TLS hello to plain HTTP", bytes.fromhex("160301020001000100fc0303") + bytes(range(256)) * 2),
    ("HTTP/2 preface", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x12\x04\x00\x00\x00\x00\x00" + b"\x00" * 18),
    ("websocket upgrade", b"GET /metadata HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"),
    ("expect 100-continue, body never sent", b"POST /auth/challenge HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 50\r\n\r\n"),
]


def mutate(rng, data):
    """A valid request with a few bytes flipped, inserted, removed, or lines repeated."""
    data = bytearray(data)
    for _ in range(rng.randint(1, 6)):
        kind = rng.randrange(6)
        at = rng.randrange(len(data) + 1)
        if kind == 0 and data:
            data[min(at, len(data) - 1)] = rng.randrange(256)
        elif kind == 1:
            data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
        elif kind == 2:
            del data[at:at + rng.randint(1, 8)]
        elif kind == 3:
            data[at:at] = rng.choice([b"\r\n", b"\r\n\r\n", b":", b" ", b"\x00", b"%", b"\n", b"chunked"])
        elif kind == 4:
            lines = bytes(data).split(b"\r\n")
            line = rng.choice(lines)
            data = bytearray(b"\r\n".join(lines + [line] * rng.randint(1, 50)))
        else:
            data[at:at] = str(rng.choice([0, -1, 2**31, 2**64, 10**30])).encode()
    return bytes(data)


def random_input(rng):
    kind = rng.randrange(4)
    if kind == 0:
        return bytes(rng.randrange(256) for _ in range(rng.choice([1, 7, 100, 4096, 70_000])))
    if kind == 1:
        return "".join(rng.choice("GETPOS /:\r\n HTTP/1.1Host%?&=-_0123456789abcdef\t") for _ in range(rng.randint(1, 3000))).encode()
    if kind == 2:
        return mutate(rng, rng.choice(VALID))
    return b"".join(mutate(rng, rng.choice(VALID)) if rng.random() < 0.5 else rng.choice(VALID) for _ in range(rng.randint(2, 12)))


class SlowClient(threading.Thread):
    """Sends `head` at once, then `trickle` a byte every `pause` seconds; records when (and if)
    the server closed the connection."""

    def __init__(self, server, head, trickle, pause):
        super().__init__(daemon=True)
        self.server, self.head, self.trickle, self.pause = server, head, trickle, pause
        self.closed_after = None
        self.stop = threading.Event()
        self.started = time.monotonic()

    def run(self):
        try:
            s = self.server.connect(timeout=1)
        except OSError:
            return
        try:
            s.sendall(self.head)
            for byte in self.trickle:
                if self.stop.wait(self.pause):
                    return
                s.sendall(bytes([byte]))
            # Everything sent: wait for the answer or the close.
            while not self.stop.is_set():
                try:
                    if not s.recv(65536):
                        break
                except socket.timeout:
                    continue
            else:
                return
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            s.close()
        self.closed_after = time.monotonic() - self.started


def slow_download(server, binary_id, token, seconds, rate):
    """GET /Binary read at `rate` bytes/s for `seconds`, then at full speed: (bytes, SHA-256 hex)."""
    s = server.connect()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 * 1024)
    s.sendall(request(b"GET", f"/Binary/{binary_id}".encode(), [f"Authorization: Bearer {token}".encode(), b"Connection: close"]))
    data = b""
    while b"\r\n\r\n" not in data:
        block = s.recv(4096)
        if not block:
            return 0, ""
        data += block
    _, _, body = data.partition(b"\r\n\r\n")
    digest, got, start = hashlib.sha256(body), len(body), time.monotonic()
    while True:
        block = s.recv(8192 if time.monotonic() - start < seconds else 1 << 20)
        if not block:
            break
        digest.update(block)
        got += len(block)
        if time.monotonic() - start < seconds:
            time.sleep(len(block) / rate)
    s.close()
    return got, digest.hexdigest()


def reference_client(root):
    spec = importlib.util.spec_from_file_location("rxvault_client", os.path.join(root, "examples/rxvault_client.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def api_suite(binary, root, new_vault, glasses, fail, fast):
    vault = new_vault("api")
    pid = vault.run(*glasses).stdout.strip()
    big = os.path.join(vault.folder, "big.png")
    # ~31 MiB of noise: a server that buffered a download would show it in its RSS.
    subprocess.run([sys.executable, os.path.join(root, "Benchmarks/make_noise_png.py"), big, "3300", "3300"], check=True, capture_output=True)
    attached = vault.run("attach", pid, big, "--name", "big.png")
    assert attached.returncode == 0, attached.stderr
    key = os.path.join(vault.folder, "shop.key")
    assert vault.run("client", "add", "shop", "--generate", "--identity-out", key).returncode == 0
    assert vault.run("grant", "shop", pid).returncode == 0

    server = APIServer(binary, vault)
    client_module = reference_client(root)
    shop = client_module.RxvaultClient(key, socket_path=server.socket_path)
    resource_id = shop.search()[0]["id"]
    binary_id = shop.attachments(resource_id)[0]["content"][0]["attachment"]["url"].rsplit("/", 1)[1]
    big_size = os.path.getsize(big)
    for _ in range(20):
        server.metadata()
    baseline_rss, _, baseline_fds = server.status()
    peak = {"rss": baseline_rss, "fds": baseline_fds}
    rng = random.Random(1111)
    counts = {"cases": 0, "5xx": 0}
    phases = []
    mark = [time.monotonic()]

    def phase(name):
        now = time.monotonic()
        phases.append(f"{name} {now - mark[0]:.0f} s")
        mark[0] = now

    def sample():
        try:
            rss, _, fds = server.status()
        except (FileNotFoundError, ProcessLookupError):
            return
        peak["rss"], peak["fds"] = max(peak["rss"], rss), max(peak["fds"], fds)

    def healthy(context):
        """The server runs, answers promptly, serves the grant, and memory and connections are bounded."""
        if server.process.poll() is not None:
            fail(f"api {context}: the server exited ({server.process.returncode}): {server.stderr()[-1500:]}")
            return False
        status, took = server.metadata()
        if status != 200 or took > PROMPT:
            fail(f"api {context}: GET /metadata answered {status} in {took:.2f} s (expected 200 within {PROMPT} s)")
        try:
            if shop.read("VisionPrescription", resource_id)["id"] != resource_id:
                fail(f"api {context}: the client's read returned another resource")
        except Exception as error:      # noqa: BLE001 - any failure of the reference client is a finding
            fail(f"api {context}: the client could not read its grant: {error}")
        sample()
        rss, _, _ = server.status()
        if rss > baseline_rss + MEMORY_SLACK_KIB:
            fail(f"api {context}: RSS {rss // 1024} MiB, {(rss - baseline_rss) // 1024} MiB over the baseline")
        return True

    def judge(name, data, timeout=IDLE + 4):
        received, closed, took = server.exchange(data, timeout=timeout)
        counts["cases"] += 1
        codes = statuses(received)
        if any(code >= 500 for code in codes):
            counts["5xx"] += 1
            fail(f"api {name}: answered {codes} (a 5xx for a client's mistake)")
        if not closed and not codes:
            fail(f"api {name}: neither answered nor closed within {timeout} s")
        sample()
        return codes

    # 1. Malformed requests, one connection each.
    answers = {}
    for name, data in MALFORMED:
        answers[name] = judge(name, data)
        if server.process.poll() is not None:
            fail(f"api {name}: the server died: {server.stderr()[-1500:]}")
            return
    for name, expected in (("long URI", {400, 414, 431}), ("one huge header", {400, 431}), ("many headers", {400, 431}),
                           ("body over the limit", {413}), ("chunked body over the limit", {413})):
        if not answers[name] or answers[name][0] not in expected:
            fail(f"api {name}: answered {answers[name]}, expected one of {sorted(expected)}")
    if answers["pipelined junk"][:20] != [200] * 20:
        fail(f"api pipelined junk: the 20 valid requests before the junk were answered {answers['pipelined junk'][:20]}")
    healthy("after malformed requests")
    phase("malformed")

    # 2. Seeded random input: random bytes, random HTTP-ish text, mutated and pipelined requests.
    for i in range(150 if fast else 1500):
        judge(f"random input {i}", random_input(rng), timeout=IDLE + 4)
        if i % 50 == 49 and not healthy(f"after random input {i}"):
            return
    phase("random")

    # 3. Slow clients: a head a byte at a time, a body trickled in, a response never read. Each
    #    must be cut off near the idle timeout while others are served promptly.
    slow = [SlowClient(server, b"GET /metadata HTTP/1.1\r\n", b"X-Slow: " + b"s" * 200 + b"\r\n\r\n", 0.25) for _ in range(10)]
    slow += [SlowClient(server, b"POST /auth/challenge HTTP/1.1\r\nHost: x\r\nContent-Length: 4000\r\n\r\n", b"{" + b" " * 3998 + b"}", 0.25)
             for _ in range(10)]
    slow += [SlowClient(server, b"GET /metadata HTTP/1.1\r\nHost: x\r\n", b"", 0) for _ in range(5)]
    slow += [SlowClient(server, b"POST /auth/challenge HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
                        b"".join(b"1\r\n \r\n" for _ in range(400)), 0.05) for _ in range(5)]
    for c in slow:
        c.start()
    time.sleep(0.5)
    healthy(f"while {len(slow)} slow clients trickle")
    for c in slow:
        c.join(timeout=IDLE + 6)
    for c in slow:
        c.stop.set()
        if c.closed_after is None or c.closed_after > IDLE + 3:
            fail(f"api slow client ({c.head[:30]!r}...): not cut off {IDLE + 3} s after connecting "
                 f"(closed after {c.closed_after})")
            break

    # A download never read: the server must give up on it, not hold the stream (and a slot) forever.
    token = shop.token or shop.authenticate()["access_token"]
    stalled = []
    for _ in range(4):
        s = server.connect()
        s.sendall(request(b"GET", f"/Binary/{binary_id}".encode(), [f"Authorization: Bearer {token}".encode()]))
        stalled.append(s)
    time.sleep(IDLE + 3)
    for s in stalled:
        got, closed = 0, False
        s.settimeout(2)
        try:
            while True:
                block = s.recv(1 << 20)
                if not block:
                    closed = True
                    break
                got += len(block)
        except (socket.timeout, ConnectionResetError):
            pass
        s.close()
        if not closed or got >= big_size:
            fail(f"api download never read: the server {'kept the connection' if not closed else 'sent it all'} ({got} of {big_size} bytes)")
            break
    # A slow reader of the whole file: the server's memory stays a few chunks above its level,
    # however far behind the reader is (Benchmarks/api-stream-memory.sh measures it in detail).
    rss_before = server.status()[0]
    slow_peak = [rss_before]
    done = threading.Event()

    def watch():
        while not done.wait(0.05):
            slow_peak[0] = max(slow_peak[0], server.status()[0])
    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    got, digest = slow_download(server, binary_id, token, seconds=3, rate=128 * 1024)
    done.set()
    watcher.join()
    with open(big, "rb") as f:
        if got != big_size or digest != hashlib.sha256(f.read()).hexdigest():
            fail(f"api slow reader: got {got} of {big_size} bytes, or other bytes")
    if slow_peak[0] - rss_before > STREAM_SLACK_KIB:
        fail(f"api slow reader: RSS rose {(slow_peak[0] - rss_before) // 1024} MiB while streaming {big_size >> 20} MiB "
             f"(allowed {STREAM_SLACK_KIB // 1024} MiB)")
    healthy("after slow clients")
    phase("slow")

    # 4. More connections than the cap, held open and silent: the server keeps at most its cap
    #    open, closes idle ones, and serves a newcomer once they are cut off.
    flood = []
    for _ in range(3 * MAX_CONNECTIONS):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.connect(server.socket_path)
        except BlockingIOError:
            pass
        except OSError:
            s.close()
            continue
        flood.append(s)
    start = time.monotonic()
    while time.monotonic() - start < 1.0:
        sample()
        time.sleep(0.05)
    status, took = server.metadata(timeout=4 * IDLE + 10)
    if status != 200 or took > 3 * IDLE + 3:
        fail(f"api connection flood: a newcomer waited {took:.1f} s for {status} while {len(flood)} idle connections were held")
    for s in flood:
        s.close()
    time.sleep(0.5)
    if peak["fds"] > baseline_fds + MAX_CONNECTIONS + 4:
        fail(f"api connection flood: the server held {peak['fds'] - baseline_fds} connections at once (cap {MAX_CONNECTIONS})")
    healthy("after a connection flood")
    phase("flood")

    # 5. Big bodies: 64 MiB sent to a route with a 16 KiB limit, and to one that reads none;
    #    2,000 pipelined requests whose answers are never read.
    huge = b"POST /auth/challenge HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % (64 << 20)
    codes = judge("64 MiB body to a 16 KiB route", huge + b"x" * (64 << 20), timeout=IDLE + 10)
    if codes[:1] != [413]:
        fail(f"api 64 MiB body: answered {codes}, expected 413")
    judge("64 MiB chunked body to GET /metadata", b"GET /metadata HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
          + (b"100000\r\n" + b"z" * 0x100000 + b"\r\n") * 64 + b"0\r\n\r\n", timeout=IDLE + 10)
    s = server.connect()
    try:
        s.settimeout(IDLE + 3)
        s.sendall(VALID[0] * 2000)
    except (socket.timeout, BrokenPipeError, ConnectionResetError):
        pass
    time.sleep(IDLE + 2)
    sample()
    s.close()
    healthy("after big bodies")
    phase("bodies")

    # 6. Stopping with hostile connections open: SIGTERM still ends it, with status 0.
    lingering = [SlowClient(server, b"GET /metadata HTTP/1.1\r\n", b"X: " + b"s" * 100, 0.3) for _ in range(5)]
    for c in lingering:
        c.start()
    held = server.connect()
    held.sendall(request(b"GET", f"/Binary/{binary_id}".encode(), [f"Authorization: Bearer {token}".encode()]))
    time.sleep(0.5)
    start = time.monotonic()
    code = server.stop(timeout=IDLE + 30)
    took = time.monotonic() - start
    held.close()
    for c in lingering:
        c.stop.set()
    if code != 0:
        fail(f"api SIGTERM with hostile connections open: exit status {code}: {server.stderr()[-800:]}")
    fatal = [line for line in server.stderr().splitlines() if "Fatal error" in line or "Illegal instruction" in line or "Segmentation" in line]
    if fatal:
        fail(f"api: the server's stderr shows a crash: {fatal[:3]}")
    tls_cases = tls_round(binary, vault, rng, fail, fast)
    growth = (peak["rss"] - baseline_rss) // 1024
    print(f"api: {len(MALFORMED)} malformed requests, {counts['cases']} cases in all (seeded), 30 slow senders and 4 stalled "
          f"downloads cut off, a slow reader of {big_size >> 20} MiB at RSS +{(slow_peak[0] - rss_before) // 1024} MiB, {3 * MAX_CONNECTIONS} connections held (peak {peak['fds'] - baseline_fds} open, cap {MAX_CONNECTIONS}), "
          f"64 MiB bodies, {tls_cases} cases over TLS; RSS peak {growth} MiB over baseline; SIGTERM after {took:.1f} s, exit {code} ({', '.join(phases)})", flush=True)


def tls_round(binary, vault, rng, fail, fast):
    """The TLS listener under garbage: random bytes, plain HTTP, a ClientHello cut short, and a
    connection that never starts its handshake. Returns the number of cases."""
    cert, key = os.path.join(vault.folder, "cert.pem"), os.path.join(vault.folder, "key.pem")
    made = subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
                           "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
                           "-keyout", key, "-out", cert], capture_output=True)
    if made.returncode != 0:
        fail("api TLS: openssl could not make a certificate: " + made.stderr.decode(errors="replace"))
        return 0
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    server = APIServer(binary, vault, name="tls", tls=(cert, key, port))
    inputs = [VALID[0], bytes.fromhex("16030100c8010000c40303") + bytes(32), bytes.fromhex("1603010200") + bytes(range(256)) * 2,
              b"\x16\x03\x03\xff\xff" + b"\x00" * 70_000]
    inputs += [random_input(rng) for _ in range(30 if fast else 300)]
    for i, data in enumerate(inputs):
        received, closed, took = server.exchange(data, timeout=IDLE + 4)
        if not closed:
            fail(f"api TLS case {i}: the connection was neither closed nor answered within {IDLE + 4} s")
        if server.process.poll() is not None:
            fail(f"api TLS case {i}: the server died: {server.stderr()[-1500:]}")
            return i
    silent = server.connect()
    silent.settimeout(IDLE + 4)
    start = time.monotonic()
    try:
        silent_closed = silent.recv(1) == b""
    except (socket.timeout, ConnectionResetError):
        silent_closed = False
    silent.close()
    if not silent_closed or time.monotonic() - start > IDLE + 3:
        fail(f"api TLS: a connection that never started its handshake was not closed within {IDLE + 3} s")
    status, took = server.metadata()
    if status != 200 or took > PROMPT:
        fail(f"api TLS: GET /metadata answered {status} in {took:.2f} s after the garbage")
    code = server.stop()
    if code != 0:
        fail(f"api TLS: SIGTERM gave exit status {code}: {server.stderr()[-800:]}")
    return len(inputs) + 1
