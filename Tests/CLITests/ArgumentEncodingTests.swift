import Foundation
import Testing

/// Arguments and environment values that are not UTF-8 (a file name in Latin-1, a stray byte)
/// are refused (64) before anything runs: Swift would otherwise read each bad byte as U+FFFD,
/// and rxvault would open, create or store a name nobody typed.
@Suite struct ArgumentEncodingTests {
    static let invalid: [UInt8] = [0xFF]

    func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    static func expectRefused(_ r: CLIHarness.Result, _ what: String) {
        #expect(r.status == 64 && !r.signalled, "\(what): \(r)")
        #expect(r.stderr.hasPrefix("rxvault: error: ") && r.stderr.contains("not UTF-8"), "\(what): \(r)")
    }

    /// `\xff.png` is not the file named "\u{FFFD}.png": attaching it must not attach that one.
    @Test func aPathIsNotReadAsAnotherFile() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let id = try cli.add(CLIHarness.glassesArguments)
        try FileManager.default.copyItem(atPath: AttachmentTests.photo, toPath: cli.path("\u{FFFD}.png"))
        let r = try cli.run(bytes: [bytes("attach"), bytes(id), Self.invalid + bytes(".png")])
        Self.expectRefused(r, "attach \\xff.png")
        #expect(
            r.stderr.contains("argument 3") && r.stderr.contains("\\xFF.png"), "the message names the argument: \(r)")
        #expect(r.stderr.contains("rxvault: hint: "), "\(r)")
        let listed = try cli.json(try cli.run(["attachments", id, "--format", "json"]).stdout)
        #expect((listed["attachments"] as? [Any])?.isEmpty == true, "an attachment was stored: \(listed)")
    }

    /// A vault path or a name with a bad byte creates and stores nothing under a mangled name.
    @Test func nothingIsCreatedOrStoredUnderAMangledName() throws {
        let cli = try CLIHarness()
        let created = try cli.run(bytes: [
            bytes("init"), bytes("--kdf"), bytes("interactive"), bytes("--vault"),
            bytes("v") + Self.invalid + bytes(".rxv")
        ])
        Self.expectRefused(created, "init --vault v\\xff.rxv")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: cli.path("")).filter { $0.hasPrefix("v") }.isEmpty,
            "a vault was created")

        try cli.initVault()
        let recipient = try cli.ageKeygen("shop.key")
        let client = try cli.run(bytes: [
            bytes("client"), bytes("add"), bytes("shop") + Self.invalid, bytes("--recipient"), bytes(recipient)
        ])
        Self.expectRefused(client, "client add shop\\xff")
        #expect(!(try cli.run(["client", "list"]).stdout.contains("shop")), "a client was stored")

        // The refusal takes the JSON form when JSON was asked for.
        let json = try cli.run(bytes: [bytes("list"), bytes("--format"), bytes("json"), bytes("--vault"), Self.invalid])
        #expect(json.status == 64, "\(json)")
        let error = try #require(try cli.json(json.stderr)["error"] as? [String: Any], "\(json)")
        #expect(
            error["code"] as? String == "usage" && (error["message"] as? String)?.contains("not UTF-8") == true,
            "\(json)")
    }

    /// The environment values rxvault reads: RXVAULT_PATH with a bad byte creates nothing.
    @Test func environmentValuesAreCheckedToo() throws {
        let cli = try CLIHarness()
        let r = try cli.run(
            bytes: [bytes("init"), bytes("--kdf"), bytes("interactive")],
            environment: ["RXVAULT_PATH": bytes(cli.path("e")) + Self.invalid])
        Self.expectRefused(r, "RXVAULT_PATH=e\\xff")
        #expect(r.stderr.contains("RXVAULT_PATH"), "\(r)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: cli.path("")).filter { $0.hasPrefix("e") }.isEmpty,
            "a vault was created")
    }

    /// UTF-8 beyond ASCII is text like any other: accepted as given, through the same route.
    @Test func utf8PathsAndNamesStillWork() throws {
        let cli = try CLIHarness()
        let path = cli.path("ordonnance-é-眼鏡.rxv")
        let r = try cli.run(bytes: [bytes("init"), bytes("--kdf"), bytes("interactive"), bytes("--vault"), bytes(path)])
        #expect(r.status == 0, "\(r)")
        #expect(FileManager.default.fileExists(atPath: path))
    }
}
