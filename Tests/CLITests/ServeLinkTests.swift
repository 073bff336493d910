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
