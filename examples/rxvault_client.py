#!/usr/bin/env python3
"""A reference client for `rxvault serve` (docs/api.md): standard library only, plus the `age`
command (Debian package `age`) to open the authentication challenge with the client's identity.

    python3 examples/rxvault_client.py --socket "$XDG_RUNTIME_DIR/rxvault/serve.sock" --identity shop.key list
    python3 examples/rxvault_client.py --url https://rx.example:8443 --cafile ca.pem --identity shop.key show <id>
    python3 examples/rxvault_client.py ... history <id>
    python3 examples/rxvault_client.py ... attachments <id>
    python3 examples/rxvault_client.py ... download <binary id> --out scan.pdf
    python3 examples/rxvault_client.py ... request --reason "ordering lenses" --kind glasses [--patient NAME]
    python3 examples/rxvault_client.py ... request-status <request id>

Prints JSON (FHIR resources as the server sent them). Exit status: 0 ok, 1 an HTTP error (the
OperationOutcome is printed on stderr), 2 a usage or connection problem.
"""
import argparse
import http.client
import json
import os
import socket
import ssl
import subprocess
import sys
import urllib.parse


class UnixHTTPConnection(http.client.HTTPConnection):
    """HTTP over a Unix domain socket (the server's default)."""

    def __init__(self, path, timeout=30):
        super().__init__("localhost", timeout=timeout)
        self.socket_path = path

    def connect(self):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        sock.connect(self.socket_path)
        self.sock = sock


class APIError(Exception):
    def __init__(self, status, body):
        super().__init__(f"HTTP {status}")
        self.status = status
        self.body = body


class RxvaultClient:
    def __init__(self, identity, socket_path=None, url=None, cafile=None):
        self.identity = identity
        self.socket_path = socket_path
        self.url = urllib.parse.urlsplit(url) if url else None
        self.cafile = cafile
        self.token = None
        self.recipient = self._recipient(identity)

    @staticmethod
    def _recipient(identity):
        """The age recipient of an identity file (its '# public key:' line, or age-keygen -y)."""
        with open(identity, encoding="utf-8") as f:
            for line in f:
                if line.startswith("# public key: "):
                    return line.split(": ", 1)[1].strip()
        return subprocess.run(["age-keygen", "-y", identity], check=True, capture_output=True, text=True).stdout.strip()

    def _connection(self):
        if self.socket_path:
            return UnixHTTPConnection(self.socket_path)
        if self.url.scheme == "https":
            context = ssl.create_default_context(cafile=self.cafile)
            return http.client.HTTPSConnection(self.url.hostname, self.url.port or 443, context=context, timeout=30)
        return http.client.HTTPConnection(self.url.hostname, self.url.port or 80, timeout=30)

    def _request(self, method, path, body=None, authorized=True, raw=False):
        headers = {"Accept": "application/fhir+json"}
        if body is not None:
            body = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if authorized:
            if self.token is None:
                self.authenticate()
            headers["Authorization"] = "Bearer " + self.token
        connection = self._connection()
        try:
            connection.request(method, path, body=body, headers=headers)
            response = connection.getresponse()
            data = response.read()
        finally:
            connection.close()
        if response.status == 401 and authorized and self.token is not None:
            # The token expired (15 minutes at most): authenticate again, once.
            self.token = None
            return self._request(method, path, body, authorized, raw)
        if response.status >= 400:
            raise APIError(response.status, data.decode("utf-8", "replace"))
        return (data, response.getheader("Content-Type")) if raw else json.loads(data)

    def authenticate(self):
        """Proves possession of the identity: open the age-encrypted challenge, send back its secret."""
        challenge = self._request("POST", "/auth/challenge", {"recipient": self.recipient}, authorized=False)
        opened = subprocess.run(["age", "-d", "-i", self.identity], input=challenge["age"], capture_output=True, text=True)
        if opened.returncode != 0:
            raise APIError(0, "age could not open the challenge with this identity: " + opened.stderr.strip())
        token = self._request("POST", "/auth/token", {"challenge": challenge["challenge"], "response": opened.stdout.strip()},
                              authorized=False)
        self.token = token["access_token"]
        return token

    def _path(self, url_or_path):
        """A next-link URL from the server, as a path on this connection."""
        parts = urllib.parse.urlsplit(url_or_path)
        return parts.path + ("?" + parts.query if parts.query else "")

    def search(self, **params):
        """Every page of GET /VisionPrescription, following the Bundle's next links. A link already
        followed ends the walk: a server whose next page is one it sent before would otherwise
        be asked for it forever."""
        path = "/VisionPrescription"
        if params:
            # A parameter given several times (datewritten=ge...&datewritten=lt...) is a list.
            path += "?" + urllib.parse.urlencode(params, doseq=True)
        resources = []
        followed = set()
        while path and path not in followed:
            followed.add(path)
            bundle = self._request("GET", path)
            followed.update(self._path(link["url"]) for link in bundle.get("link", []) if link["relation"] == "self")
            resources += [entry["resource"] for entry in bundle.get("entry", [])]
            path = next((self._path(link["url"]) for link in bundle.get("link", []) if link["relation"] == "next"), None)
        return resources

    def read(self, resource_type, resource_id):
        return self._request("GET", f"/{resource_type}/{urllib.parse.quote(resource_id)}")

    def history(self, resource_id):
        return self._request("GET", f"/VisionPrescription/{urllib.parse.quote(resource_id)}/_history")

    def attachments(self, resource_id):
        bundle = self._request("GET", "/DocumentReference?related=" + urllib.parse.quote("VisionPrescription/" + resource_id))
        return [entry["resource"] for entry in bundle.get("entry", [])]

    def download(self, binary_id):
        return self._request("GET", f"/Binary/{urllib.parse.quote(binary_id)}", raw=True)

    def request_access(self, reason, patient=None, kinds=None):
        body = {"reason": reason}
        if patient:
            body["patient"] = patient
        if kinds:
            body["kinds"] = kinds
        return self._request("POST", "/access-requests", body)

    def request_status(self, request_id):
        return self._request("GET", f"/access-requests/{urllib.parse.quote(request_id)}")


def main():
    parser = argparse.ArgumentParser(description="rxvault serve reference client")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--socket", help="the server's Unix socket")
    where.add_argument("--url", help="http(s)://host:port")
    parser.add_argument("--cafile", help="CA certificate(s) to trust for https")
    parser.add_argument("--identity", required=True, help="the client's age identity file")
    sub = parser.add_subparsers(dest="command", required=True)
    listing = sub.add_parser("list")
    listing.add_argument("--patient")
    listing.add_argument("--datewritten", action="append", help="e.g. ge2026-01-01; may be repeated")
    listing.add_argument("--updated-since", help="only what changed since: YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ")
    listing.add_argument("--page-size", type=int, help="prescriptions per page (_count); every page is read")
    sub.add_parser("metadata")
    for name in ("show", "history", "attachments", "patient", "request-status"):
        sub.add_parser(name).add_argument("id")
    download = sub.add_parser("download")
    download.add_argument("id")
    download.add_argument("--out", required=True)
    request = sub.add_parser("request")
    request.add_argument("--reason", required=True)
    request.add_argument("--patient")
    request.add_argument("--kind", action="append", choices=["glasses", "contacts"])
    args = parser.parse_args()

    client = RxvaultClient(args.identity, socket_path=args.socket, url=args.url, cafile=args.cafile)
    try:
        if args.command == "metadata":
            result = client._request("GET", "/metadata", authorized=False)
        elif args.command == "list":
            # Every filter given, together (the server ANDs them; repeated dates bound a range).
            params = {}
            if args.patient:
                params["patient"] = args.patient
            if args.datewritten:
                params["datewritten"] = args.datewritten
            if args.updated_since:
                params["_lastUpdated"] = "ge" + args.updated_since
            if args.page_size is not None:
                params["_count"] = str(args.page_size)
            result = client.search(**params)
        elif args.command == "show":
            result = client.read("VisionPrescription", args.id)
        elif args.command == "history":
            result = client.history(args.id)
        elif args.command == "attachments":
            result = client.attachments(args.id)
        elif args.command == "patient":
            result = client.read("Patient", args.id)
        elif args.command == "download":
            data, content_type = client.download(args.id)
            with open(args.out, "wb") as f:
                f.write(data)
            result = {"written": args.out, "bytes": len(data), "contentType": content_type}
        elif args.command == "request":
            result = client.request_access(args.reason, args.patient, args.kind)
        else:
            result = client.request_status(args.id)
    except APIError as error:
        print(f"rxvault_client: HTTP {error.status}: {error.body}", file=sys.stderr)
        return 1
    except (OSError, subprocess.SubprocessError) as error:
        print(f"rxvault_client: {error}", file=sys.stderr)
        return 2
    try:
        print(json.dumps(result, indent=2, sort_keys=True))
        sys.stdout.flush()
    except BrokenPipeError:
        # `... list | head`: the reader has what it wanted; say nothing more (as cat does).
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    sys.exit(main())
