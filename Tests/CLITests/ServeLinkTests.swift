import Foundation
import RxTestSupport
import RxVault
import RxVaultClient
import Testing

/// Where a live `rxvault serve`'s links point (`--public-url`, `--trusted-proxy`, else its own
/// address, never a request's Host), what it tells caches, the clients' paging, and its log.
extension ServeTests {
    /// The `url` of each of a Bundle's links, by relation, and each entry's `fullUrl`.
    static func urls(_ json: [String: Any]) -> [String] {
        (json["link"] as? [[String: Any]] ?? []).compactMap { $0["url"] as? String }
            + (json["entry"] as? [[String: Any]] ?? []).compactMap { $0["fullUrl"] as? String }
    }

    @Test func linksNameTheServerAsConfiguredNeverAsARequestSays() throws {
        let (cli, glasses, contacts, shop, _) = try household()
        #expect(try cli.run(["grant", "shop", contacts]).status == 0)
        let port = freeLoopbackPort()
        let url = "http://127.0.0.1:\(port)"
        let forged = [
            "-H", "Host: evil.example", "-H", "X-Forwarded-Host: evil.example", "-H", "X-Forwarded-Proto: https"
        ]
        let proxied = ["-H", "Host: rx.example", "-H", "X-Forwarded-Proto: https"]

        // No --public-url, no --trusted-proxy: the address the server listens on, whatever the
        // request's Host and forwarded headers say.
        var server = try ServerProcess(cli, arguments: ["--listen", "127.0.0.1:\(port)"])
        var token = try server.token(identity: shop, url: url)
        var search = try server.curl("GET", "/VisionPrescription?_count=1", token: token, url: url, extra: forged)
        var links = Self.urls(search.json)
        #expect(search.status == 200 && links.count == 3, "\(search.body)")
        #expect(links.allSatisfy { $0.hasPrefix("\(url)/") }, "\(links)")
        #expect(!search.body.contains("evil.example"))
        // Every answer, on the wire too, says no cache may keep it.
        #expect(search.headers.lowercased().contains("cache-control: no-store"), "\(search.headers)")
        let documents = try server.curl("GET", "/DocumentReference", token: token, url: url, extra: forged)
        #expect(documents.body.contains("\"url\":\"\(url)/Binary/") && !documents.body.contains("evil"))
        #expect(server.stop() == 0)

        // A trusted proxy's forwarded scheme and host (or the Host it sets) name the links.
        server = try ServerProcess(cli, arguments: ["--listen", "127.0.0.1:\(port)", "--trusted-proxy", "127.0.0.1"])
        token = try server.token(identity: shop, url: url)
        search = try server.curl("GET", "/VisionPrescription?_count=1", token: token, url: url, extra: proxied)
        links = Self.urls(search.json)
        #expect(links.count == 3 && links.allSatisfy { $0.hasPrefix("https://rx.example/") }, "\(links)")
        search = try server.curl(
            "GET", "/VisionPrescription", token: token, url: url,
            extra: ["-H", "X-Forwarded-Host: rx.example:8443", "-H", "X-Forwarded-Proto: https"])
        #expect(Self.urls(search.json).allSatisfy { $0.hasPrefix("https://rx.example:8443/") }, "\(search.body)")
        // Forwarded values that are no scheme or no host are not used.
        for bad in [
            ["-H", "X-Forwarded-Host: evil.example/x?", "-H", "X-Forwarded-Proto: https"],
            ["-H", "X-Forwarded-Host: rx.example", "-H", "X-Forwarded-Proto: javascript"]
        ] {
            search = try server.curl("GET", "/VisionPrescription", token: token, url: url, extra: bad)
            #expect(Self.urls(search.json).allSatisfy { $0.hasPrefix("\(url)/") }, "\(bad): \(search.body)")
        }
        #expect(server.stop() == 0)
        // From a peer that is not the trusted proxy, they are ignored.
        server = try ServerProcess(cli, arguments: ["--listen", "127.0.0.1:\(port)", "--trusted-proxy", "192.0.2.7"])
        token = try server.token(identity: shop, url: url)
        search = try server.curl("GET", "/VisionPrescription", token: token, url: url, extra: proxied)
        #expect(Self.urls(search.json).allSatisfy { $0.hasPrefix("\(url)/") }, "\(search.body)")
        #expect(server.stop() == 0)

        // --public-url: every link, whatever the request or a proxy says.
        server = try ServerProcess(
            cli,
            arguments: [
                "--listen", "127.0.0.1:\(port)", "--public-url", "https://rx.example/", "--trusted-proxy", "127.0.0.1"
            ])
        token = try server.token(identity: shop, url: url)
        search = try server.curl("GET", "/VisionPrescription?_count=1", token: token, url: url, extra: forged)
        links = Self.urls(search.json)
        #expect(links.count == 3 && links.allSatisfy { $0.hasPrefix("https://rx.example/VisionPrescription") })
        let id = try #require(
            ((search.json["entry"] as? [[String: Any]])?.first?["resource"] as? [String: Any])?["id"] as? String)
        let history = try server.curl("GET", "/VisionPrescription/\(id)/_history", token: token, url: url)
        #expect(Self.urls(history.json).allSatisfy { $0.hasPrefix("https://rx.example/VisionPrescription/") })
        let attached = try server.curl("GET", "/DocumentReference", token: token, url: url, extra: forged)
        #expect(attached.body.contains("\"url\":\"https://rx.example/Binary/"), "\(attached.body)")
        #expect(server.stop() == 0)
        _ = glasses
    }

    /// The request log a live server writes: each duration in milliseconds to three decimals
    /// (`GET /metadata 200 0.065 ms`), not Swift's `6.5286e-05 seconds`.
    @Test func theRequestLogSaysMilliseconds() throws {
        let (cli, _, _, shop, _) = try household()
        let server = try ServerProcess(cli)
        let token = try server.token(identity: shop)
        #expect(try server.curl("GET", "/VisionPrescription", token: token).status == 200)
        #expect(try server.curl("GET", "/Encounter").status == 404)
        #expect(server.stop() == 0)
        let logged = server.stderr.split(separator: "\n").filter { $0.contains("] GET /") || $0.contains("] POST /") }
        #expect(logged.count >= 4, "\(server.stderr)")
        for line in logged {
            #expect(
                line.range(of: #"\] (GET|POST) /[^ ]* [0-9]{3} [0-9]+\.[0-9]{3} ms$"#, options: .regularExpression)
                    != nil,
                "\(line)")
        }
    }

    @Test func aPublicURLOrProxyAddressThatCannotBeUsedIsAUsageError() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        for bad in [
            "rx.example", "ftp://rx.example", "https://", "https://rx.example/?page=1", "https://rx.example/#top",
            "https://user@rx.example", "https://rx example", "/VisionPrescription"
        ] {
            let result = try cli.run(["serve", "--listen", "127.0.0.1:8080", "--public-url", bad])
            #expect(
                result.status == 64 && result.stderr.contains("--public-url '\(bad)'"), "\(bad): \(result)")
        }
        for bad in ["rx.example", "127.0.0.1:80", "10.0.0.0/8", ""] {
            let result = try cli.run(["serve", "--listen", "127.0.0.1:8080", "--trusted-proxy", bad])
            #expect(
                result.status == 64 && result.stderr.contains("--trusted-proxy '\(bad)'"), "\(bad): \(result)")
        }
    }

    /// `_count=0` is the total alone, with no `next`: both clients list every page and stop
    /// (before, the server's `next` was its `self`, and a client asked for it forever).
    @Test func bothClientsStopAtAPageOfNone() async throws {
        let (cli, _, contacts, shop, _) = try household()
        #expect(try cli.run(["grant", "shop", contacts]).status == 0)
        let port = freeLoopbackPort()
        let server = try ServerProcess(cli, arguments: ["--listen", "127.0.0.1:\(port)"])
        defer { server.stop() }
        let script = ServerProcess.root.appendingPathComponent("examples/rxvault_client.py").path
        for (size, count) in [(0, 0), (1, 2), (200, 2)] {
            let (status, out, err) = try ServerProcess.run(
                "/usr/bin/timeout",
                [
                    "20", ServerProcess.python, script, "--url", "http://127.0.0.1:\(port)", "--identity", shop, "list",
                    "--page-size", String(size)
                ], in: cli.directory)
            #expect(status == 0, "page size \(size): \(err)")
            #expect(
                (try? JSONSerialization.jsonObject(with: Data(out.utf8)) as? [Any])?.count == count,
                "page size \(size): \(out)")
        }
        let client = try RxVaultClient(
            baseURL: try #require(URL(string: "http://127.0.0.1:\(port)")),
            identity: try String(contentsOfFile: shop, encoding: .utf8))
        #expect(try await client.search(.init(pageSize: 0)).isEmpty)
        #expect(try await client.search(.init(pageSize: 1)).count == 2)
    }
}
