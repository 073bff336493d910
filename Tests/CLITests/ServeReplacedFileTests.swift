import Foundation
import Testing

/// `rxvault serve` follows the vault file when another is renamed over it (what sync
/// tools, editors and `restore` do), and the agent it runs for owner commands lets go of its
/// socket when it locks because of that. Through the built binary, with real renames.
@Suite(.serialized) struct ServeReplacedFileTests {
    /// The FHIR resource id of a prescription, from `export` (before the server starts: the
    /// export's own audit entry is then in the file, not in a log the server holds open).
    func resourceID(_ cli: CLIHarness, _ prescription: String) throws -> String {
        let out = cli.path("resource-\(prescription).json")
        #expect(try cli.run(["export", prescription, "--format", "fhir", "--out", out]).status == 0)
        let bundle = try cli.json(try String(contentsOfFile: out, encoding: .utf8))
        let resource = (bundle["entry"] as? [[String: Any]])?.compactMap { $0["resource"] as? [String: Any] }
            .first { $0["resourceType"] as? String == "VisionPrescription" }
        return try #require(resource?["id"] as? String)
    }

    /// A folder short enough for the agent's socket path (at most 107 bytes), removed after.
    func runtimeFolder() throws -> String {
        var template = Array("/tmp/rxrep-XXXXXX".utf8CString)
        return String(cString: try #require(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }))
    }

    /// Polls `condition` every 100 ms until it holds or `seconds` have passed.
    func eventually(_ seconds: Double, _ condition: () throws -> Bool) rethrows -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if try condition() { return true }
            usleep(100_000)
        }
        return try condition()
    }

    /// The audit entries of API reads in the vault's log, as `rxvault log` shows them.
    /// The API reads in the audit log; none while `log` cannot read it (under load it may find
    /// the server's write under way, and exit non-zero with nothing on stdout), so that
    /// `eventually` asks again rather than failing on a parse of nothing.
    func apiReads(_ cli: CLIHarness) throws -> [[String: Any]] {
        let run = try cli.run(["log", "--format", "json"])
        guard run.status == 0 else { return [] }
        let log = try cli.json(run.stdout)["entries"] as? [[String: Any]] ?? []
        return log.filter { ($0["detail"] as? String)?.hasPrefix("api ") == true }
    }

    @Test func aRevokeMadeInACopyMovedIntoPlaceCountsAtTheNextRequest() throws {
        let (cli, glasses, contacts, shop, family) = try ServeTests().household()
        let glassesResource = try resourceID(cli, glasses)
        let contactsResource = try resourceID(cli, contacts)
        let runtime = try runtimeFolder()
        defer { try? FileManager.default.removeItem(atPath: runtime) }
        let server = try ServerProcess(cli, environment: ["XDG_RUNTIME_DIR": runtime])
        let shopToken = try server.token(identity: shop)
        let familyToken = try server.token(identity: family)

        // What a sync tool does: a copy changed elsewhere (here: the shop's grant revoked with the
        // CLI), then renamed over the file the server has open.
        let copy = cli.path("copy.rxv")
        try FileManager.default.copyItem(atPath: cli.vaultPath, toPath: copy)
        let revoke = try cli.run(["revoke", "shop", glasses, "--vault", copy])
        #expect(revoke.status == 0, "\(revoke)")
        #expect(rename(copy, cli.vaultPath) == 0)

        // The shop's next read is refused (as if never granted); the family still reads.
        #expect(
            try eventually(3) {
                try server.curl("GET", "/VisionPrescription/\(glassesResource)", token: shopToken).status == 404
            },
            "\(server.stderr)")
        #expect(try server.curl("GET", "/VisionPrescription", token: shopToken).json["total"] as? Int == 0)
        let read = try server.curl("GET", "/VisionPrescription/\(contactsResource)", token: familyToken)
        #expect(read.status == 200, "\(read.body)")
        #expect(
            server.stderr.contains("the vault file at \(cli.vaultPath) was replaced or removed"), "\(server.stderr)")
        #expect(server.stderr.contains("serving the vault file now at \(cli.vaultPath)"), "\(server.stderr)")

        // The read served after the switch is in the new file's log (the one the revoke is in).
        #expect(
            try eventually(5) {
                try apiReads(cli).contains {
                    $0["client"] as? String == "family" && $0["detail"] as? String == "api read VisionPrescription"
                }
            }, "\((try? apiReads(cli)) ?? [])")
        let log = try cli.run(["log", "--format", "json"]).stdout
        #expect(log.contains("\"revoke\""), "the log read is the new file's: it has the revoke made in the copy")

        #expect(server.stop() == 0)
        // The new file is whole: nothing of the old file's write-ahead log reached it.
        let check = try cli.run(["check"])
        #expect(check.status == 0, "\(check)")
        let server2 = try ServerProcess(cli, environment: ["XDG_RUNTIME_DIR": runtime])
        #expect(
            try server2.curl("GET", "/VisionPrescription/\(glassesResource)", token: try server2.token(identity: shop))
                .status == 404,
            "the revoke is still in the file")
        server2.stop()
    }

    @Test func anotherVaultMovedIntoPlaceIsRefusedWith503UntilTheVaultIsBack() throws {
        let (cli, _, contacts, _, family) = try ServeTests().household()
        let contactsResource = try resourceID(cli, contacts)
        let other = try CLIHarness()
        try other.initVault()
        try FileManager.default.copyItem(atPath: other.vaultPath, toPath: cli.path("other.rxv"))
        let runtime = try runtimeFolder()
        defer { try? FileManager.default.removeItem(atPath: runtime) }
        let server = try ServerProcess(cli, environment: ["XDG_RUNTIME_DIR": runtime])
        let token = try server.token(identity: family)

        // The vault moved aside and another vault moved into its place.
        #expect(rename(cli.vaultPath, cli.path("kept.rxv")) == 0)
        #expect(rename(cli.path("other.rxv"), cli.vaultPath) == 0)
        let refused = try server.curl("GET", "/VisionPrescription/\(contactsResource)", token: token)
        #expect(refused.status == 503, "\(refused.body)")
        let issue = (refused.json["issue"] as? [[String: Any]])?.first
        #expect(
            refused.json["resourceType"] as? String == "OperationOutcome" && issue?["code"] as? String == "transient",
            "\(refused.body)")
        #expect((issue?["diagnostics"] as? String)?.contains("was replaced") == true, "\(refused.body)")
        #expect(refused.headers.lowercased().contains("retry-after:"), "\(refused.headers)")
        #expect(server.stderr.contains("holds another vault now"), "\(server.stderr)")
        // Said once, however often it is asked.
        #expect(try server.curl("GET", "/VisionPrescription", token: token).status == 503)
        #expect(server.stderr.components(separatedBy: "holds another vault now").count == 2, "\(server.stderr)")

        // The vault back in place: served again, and the read logged in it.
        #expect(rename(cli.path("kept.rxv"), cli.vaultPath) == 0)
        #expect(
            try eventually(4) {
                try server.curl("GET", "/VisionPrescription/\(contactsResource)", token: token).status == 200
            },
            "\(server.stderr)")
        #expect(try eventually(5) { try apiReads(cli).contains { $0["client"] as? String == "family" } })
        #expect(server.stop() == 0)
        #expect(try cli.run(["check"]).status == 0)
    }

    /// An older copy of the same vault renamed into place, where no rollback anchor can be kept
    /// (a state folder that is a file): the server compares it with the file it let go of, and
    /// refuses it (503) instead of bringing back a revoked grant.
    @Test func anOlderCopyIsRefusedEvenWithoutAnAnchor() throws {
        let (cli, _, contacts, _, family) = try ServeTests().household()
        let contactsResource = try resourceID(cli, contacts)
        let noState = try cli.write("not a folder", to: "state")
        let runtime = try runtimeFolder()
        defer { try? FileManager.default.removeItem(atPath: runtime) }
        let environment = ["XDG_RUNTIME_DIR": runtime, "XDG_STATE_HOME": noState]
        let old = try cli.consistentCopy("old.rxv")
        #expect(try cli.run(["revoke", "family", contacts], environment: environment).status == 0)
        let server = try ServerProcess(cli, environment: environment)
        let token = try server.token(identity: family)
        #expect(try server.curl("GET", "/VisionPrescription/\(contactsResource)", token: token).status == 404)
        #expect(rename(old, cli.vaultPath) == 0)
        #expect(
            try eventually(4) {
                try server.curl("GET", "/VisionPrescription/\(contactsResource)", token: token).status == 503
            },
            "\(server.stderr)")
        #expect(server.stderr.contains("older (write"), "\(server.stderr)")
        #expect(server.stop() == 0)
    }

    /// The server is the vault's agent while it runs; a replaced file locks that agent, which
    /// must then leave no socket behind: a command that found the socket would wait for an
    /// answer nobody gives (10 s) before it asks for the passphrase. The server itself goes on
    /// with the new file (the agent's lock wipes the agent's key, not the server's).
    @Test func theServersAgentLeavesNoSocketWhenTheFileIsReplaced() throws {
        let (cli, glasses, _, shop, _) = try ServeTests().household()
        let glassesResource = try resourceID(cli, glasses)
        let runtime = try runtimeFolder()
        defer { try? FileManager.default.removeItem(atPath: runtime) }
        let server = try ServerProcess(cli, environment: ["XDG_RUNTIME_DIR": runtime])
        let token = try server.token(identity: shop)
        let agentFolder = runtime + "/rxvault"
        let sockets = {
            ((try? FileManager.default.contentsOfDirectory(atPath: agentFolder)) ?? []).filter { $0.hasSuffix(".sock") }
        }
        #expect(sockets().count == 1)

        try FileManager.default.copyItem(atPath: cli.vaultPath, toPath: cli.path("copy.rxv"))
        #expect(rename(cli.path("copy.rxv"), cli.vaultPath) == 0)
        // Each command asks the agent first; each must finish promptly with the passphrase.
        for arguments in [
            ["status", "--passphrase-file", cli.passphraseFile], ["show", glasses],
            ["status", "--passphrase-file", cli.passphraseFile]
        ] {
            let start = Date()
            let result = try cli.run(arguments, environment: ["XDG_RUNTIME_DIR": runtime])
            #expect(result.status == 0, "\(result)")
            #expect(
                Date().timeIntervalSince(start) < 5, "\(arguments) took \(Date().timeIntervalSince(start)) s: \(result)"
            )
        }
        #expect(eventually(4) { sockets().isEmpty }, "the agent's socket is gone: \(sockets())")
        #expect(eventually(4) { server.stderr.contains("the vault is locked for owner commands") }, "\(server.stderr)")
        let read = try server.curl("GET", "/VisionPrescription/\(glassesResource)", token: token)
        #expect(read.status == 200, "\(read.body)\n\(server.stderr)")
        #expect(server.stderr.contains("serving the vault file now at"), "\(server.stderr)")
        #expect(server.stop() == 0)
    }
}
