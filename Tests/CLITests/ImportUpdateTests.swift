import Foundation
import RxCrypto
import Testing

/// `import` adds prescriptions; it replaces one already in the vault only with `--update`, and
/// only from a file this vault's owner exported (bound by the vault id and the owner's MAC)
/// unless `--update-unverified` says otherwise.
@Suite struct ImportUpdateTests {
    /// A vault with the glasses prescription granted to a client, and the client's identity.
    func setUp() throws -> (CLIHarness, String, [String]) {
        let cli = try CLIHarness()
        try cli.initVault()
        let glasses = try cli.add(CLIHarness.glassesArguments)
        #expect(
            try cli.run(["client", "add", "shop", "--generate", "--identity-out", cli.path("shop.key")]).status == 0)
        #expect(try cli.run(["grant", "shop", glasses]).status == 0)
        return (cli, glasses, ["--identity", cli.path("shop.key")])
    }

    /// Rewrites an rxvault JSON export: `change` edits the first prescription, `binding` false drops the vault binding.
    func rewrite(
        _ cli: CLIHarness, _ source: String, to target: String, binding: Bool = true,
        _ change: (inout [String: Any]) -> Void
    ) throws -> String {
        var document = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: cli.path(source))))
                as? [String: Any])
        if !binding { document["vault"] = nil }
        var entries = try #require(document["prescriptions"] as? [[String: Any]])
        var prescription = try #require(entries[0]["prescription"] as? [String: Any])
        change(&prescription)
        entries[0]["prescription"] = prescription
        document["prescriptions"] = entries
        try JSONSerialization.data(withJSONObject: document).write(to: URL(fileURLWithPath: cli.path(target)))
        return cli.path(target)
    }

    func odSphere(_ cli: CLIHarness, _ id: String, as prefix: [String] = [], environment: [String: String?] = [:])
        throws -> Double?
    {
        let show = try cli.run(prefix + ["show", id, "--format", "json"], environment: environment)
        #expect(show.status == 0, "\(show)")
        return (try cli.json(show.stdout)["right"] as? [String: Any])?["sphere"] as? Double
    }

    func sha256(_ data: Data) -> String {
        let hash = SHA256()
        hash.update(Array(data))
        return hash.finalHex()
    }

    func versions(_ cli: CLIHarness, _ id: String) throws -> Int {
        (try cli.json(try cli.run(["history", id, "--format", "json"]).stdout)["prescriptions"] as? [Any])?.count ?? -1
    }

    @Test func aCraftedFileNamingAnExistingIdIsRefusedWhole() throws {
        let (cli, glasses, asClient) = try setUp()
        #expect(try cli.run(["export", "--format", "json", "--out", cli.path("own.json")]).status == 0)
        let crafted = try rewrite(cli, "own.json", to: "crafted.json", binding: false) { rx in
            var right = rx["right"] as! [String: Any]
            right["sphere"] = -2.5
            rx["right"] = right
            rx["note"] = "crafted"
        }
        // A new prescription in the same file is not imported either: all or nothing.
        var document = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: crafted))) as? [String: Any])
        var entries = document["prescriptions"] as! [[String: Any]]
        var extra = entries[0]
        extra["id"] = String(repeating: "cd", count: 16)
        entries.append(extra)
        document["prescriptions"] = entries
        try JSONSerialization.data(withJSONObject: document).write(to: URL(fileURLWithPath: crafted))

        let r = try cli.run(["import", crafted])
        #expect(r.status == 65, "\(r)")
        #expect(
            r.stderr.contains("prescriptions[0]: \(glasses)")
                && r.stderr.contains("exists in this vault with other content"), "\(r.stderr)")
        #expect(r.stderr.contains("OD sphere -2.25 → -2.50; note"), "\(r.stderr)")
        #expect(!r.stderr.contains("crafted"), "free text is named, not quoted")
        #expect(r.stderr.contains("nothing was imported") && r.stderr.contains("--update"), "\(r.stderr)")
        #expect(r.stdout.isEmpty)
        #expect(try versions(cli, glasses) == 1)
        #expect(try cli.run(["status"]).stdout.contains("prescriptions  1"))
        #expect(
            try odSphere(cli, glasses, as: asClient, environment: ["RXVAULT_PASSPHRASE_FILE": nil]) == -2.25,
            "the grantee still reads the owner's content")

        // The dry run shows the same, item by item, and also refuses.
        let dry = try cli.run(["import", crafted, "--dry-run"])
        #expect(dry.status == 65, "\(dry)")
        #expect(
            dry.stdout.contains("refused    \(glasses)  prescriptions[0]: OD sphere -2.25 → -2.50; note"),
            "\(dry.stdout)")
        #expect(dry.stdout.contains("new        cdcdcdcd  prescriptions[1]"), "\(dry.stdout)")

        // The same content with an attachment the prescription lacks is a change too.
        let photo = try rewrite(cli, "own.json", to: "photo.json", binding: false) { _ in }
        var withPhoto = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: photo))) as? [String: Any])
        var photoEntries = withPhoto["prescriptions"] as! [[String: Any]]
        let png = try Data(contentsOf: URL(fileURLWithPath: AttachmentTests.photo))
        photoEntries[0]["attachments"] = [
            [
                "id": String(repeating: "ef", count: 16), "name": "planted.png", "type": "png", "size": png.count,
                "sha256": sha256(png), "added": "2026-01-01T00:00:00Z", "data": png.base64EncodedString()
            ]
        ]
        withPhoto["prescriptions"] = photoEntries
        try JSONSerialization.data(withJSONObject: withPhoto).write(to: URL(fileURLWithPath: photo))
        let planted = try cli.run(["import", photo])
        #expect(planted.status == 65 && planted.stderr.contains("attachment planted.png added"), "\(planted)")
        #expect(try cli.run(["attachments", glasses]).stdout.contains("planted.png") == false)
    }

    @Test func updateFromAnOwnExportStoresANewVersionAndResealsGrants() throws {
        let (cli, glasses, asClient) = try setUp()
        #expect(try cli.run(["export", glasses, "--format", "json", "--out", cli.path("own.json")]).status == 0)
        #expect(try cli.run(["edit", glasses, "--od-sphere", "-2.50", "--note", "changed since"]).status == 0)

        let refused = try cli.run(["import", cli.path("own.json")])
        #expect(refused.status == 65 && refused.stderr.contains("OD sphere -2.50 → -2.25; note"), "\(refused)")

        let dry = try cli.run(["import", cli.path("own.json"), "--update", "--dry-run"])
        #expect(dry.status == 0, "\(dry)")
        #expect(
            dry.stdout.contains("update     \(glasses)  prescriptions[0]: OD sphere -2.50 → -2.25; note"),
            "\(dry.stdout)")
        #expect(dry.stdout.contains("would import: 0 new, 1 updated (new version), 0 unchanged"), "\(dry.stdout)")
        #expect(try versions(cli, glasses) == 2, "a dry run writes nothing")

        let updated = try cli.run(["import", cli.path("own.json"), "--update"])
        #expect(updated.status == 0, "\(updated)")
        #expect(updated.stdout.contains("imported: 0 new, 1 updated (new version), 0 unchanged"), "\(updated.stdout)")
        #expect(try versions(cli, glasses) == 3)
        #expect(try odSphere(cli, glasses) == -2.25)
        #expect(
            try odSphere(cli, glasses, as: asClient, environment: ["RXVAULT_PASSPHRASE_FILE": nil]) == -2.25,
            "the grantee reads the new version, as after an edit")
        let history = try cli.run(["history", glasses])
        #expect(history.stdout.contains("OD sphere -2.50 → -2.25"), "\(history.stdout)")

        let log = try cli.json(try cli.run(["log", "--format", "json"]).stdout)["entries"] as? [[String: Any]] ?? []
        let entry = log.last { $0["action"] as? String == "import" }
        #expect((entry?["prescriptions"] as? [String])?.first?.hasPrefix(glasses) == true, "\(log)")
        #expect(
            (entry?["detail"] as? String)?.contains("1 updated (\(glasses))") == true, "\(String(describing: entry))")

        // The same file again: nothing left to change.
        let again = try cli.run(["import", cli.path("own.json"), "--update"])
        #expect(again.stdout.contains("0 new, 0 updated (new version), 1 unchanged"), "\(again)")
        #expect(try cli.run(["import", cli.path("own.json")]).stdout.contains("1 unchanged"))
        #expect(try versions(cli, glasses) == 3)
    }

    @Test func updateFromAFileNotBoundToThisVaultNeedsUpdateUnverified() throws {
        let (cli, glasses, asClient) = try setUp()
        #expect(try cli.run(["export", "--format", "json", "--out", cli.path("own.json")]).status == 0)

        // Tampered: the binding is kept, the content changed.
        let tampered = try rewrite(cli, "own.json", to: "tampered.json") { $0["note"] = "edited after export" }
        let r = try cli.run(["import", tampered, "--update"])
        #expect(r.status == 65, "\(r)")
        #expect(r.stderr.contains("does not verify") && r.stderr.contains("--update-unverified"), "\(r.stderr)")
        #expect(try versions(cli, glasses) == 1)

        // Another vault's export of the same prescription.
        let pw = try cli.write("a second vault's passphrase\n", to: "pw2")
        let second: [String: String?] = ["RXVAULT_PATH": cli.path("second.rxv"), "RXVAULT_PASSPHRASE_FILE": pw]
        #expect(try cli.run(["init", "--kdf", "interactive"], environment: second).status == 0)
        #expect(try cli.run(["import", cli.path("own.json")], environment: second).status == 0)
        #expect(try cli.run(["edit", glasses, "--od-sphere", "-2.75"], environment: second).status == 0)
        #expect(
            try cli.run(["export", "--format", "json", "--out", cli.path("second.json")], environment: second).status
                == 0)
        let foreign = try cli.run(["import", cli.path("second.json"), "--update"])
        #expect(foreign.status == 65 && foreign.stderr.contains("another vault"), "\(foreign)")
        let foreignDry = try cli.run(["import", cli.path("second.json"), "--update", "--dry-run"])
        #expect(
            foreignDry.status == 65
                && foreignDry.stdout.contains("refused    \(glasses)  prescriptions[0]: OD sphere -2.25 → -2.75"),
            "\(foreignDry)")

        // A client's export carries no binding (a client does not hold the owner's key), nor does FHIR.
        let clientExport = try cli.run(
            asClient + ["export", "--format", "json", "--out", cli.path("client.json")],
            environment: ["RXVAULT_PASSPHRASE_FILE": nil])
        #expect(clientExport.status == 0, "\(clientExport)")
        let clientDocument = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: cli.path("client.json"))))
                as? [String: Any])
        #expect(clientDocument["vault"] == nil)
        let own = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: cli.path("own.json"))))
                as? [String: Any])
        #expect((own["vault"] as? [String: Any])?["mac"] is String, "the owner's export is bound")
        #expect(
            try cli.run(["export", "--format", "fhir", "--out", cli.path("second.fhir")], environment: second).status
                == 0)
        let fhir = try cli.run(["import", cli.path("second.fhir"), "--update"])
        #expect(fhir.status == 65 && fhir.stderr.contains("no binding"), "\(fhir)")
        #expect(try versions(cli, glasses) == 1)
        #expect(try odSphere(cli, glasses, as: asClient, environment: ["RXVAULT_PASSPHRASE_FILE": nil]) == -2.25)

        // Asked for explicitly, the update is made.
        let forced = try cli.run(["import", cli.path("second.json"), "--update-unverified"])
        #expect(forced.status == 0 && forced.stdout.contains("1 updated"), "\(forced)")
        #expect(try odSphere(cli, glasses) == -2.75)
        #expect(try versions(cli, glasses) == 2)
        let log = try cli.json(try cli.run(["log", "--format", "json"]).stdout)["entries"] as? [[String: Any]] ?? []
        #expect(
            (log.last { $0["action"] as? String == "import" }?["detail"] as? String)?.contains("unverified") == true)
    }
}
