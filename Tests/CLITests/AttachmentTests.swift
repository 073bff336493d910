import Foundation
import RxStore
import RxTestSupport
import Testing

/// Attachments end to end through the binary: attach, list, extract, detach, preview, refusals,
/// the isolated parser surviving crashes and hangs, and tampering with stored chunks.
@Suite struct AttachmentTests {
    static func fixture(_ name: String) -> String { Repository.fixture("attachments/" + name) }
    static let photo = fixture("valid/png-prescription-photo-1200x1600.png")
    static let pdf = fixture("valid/pdf-1.4-three-pages.pdf")

    func setUp() throws -> (CLIHarness, String) {
        let cli = try CLIHarness()
        try cli.initVault()
        return (cli, try cli.add(CLIHarness.glassesArguments))
    }

    func sha256(_ path: String) throws -> String {
        String(try Subprocess.run(["/usr/bin/sha256sum", path]).stdout.prefix(64))
    }

    @Test func attachListExtractDetach() throws {
        let (cli, rx) = try setUp()
        let photo = try cli.run(["attach", rx, Self.photo])
        #expect(photo.status == 0, "\(photo)")
        let photoID = photo.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let scan = try cli.run(["attach", rx, Self.pdf, "--name", "paper prescription.pdf"])
        #expect(scan.status == 0, "\(scan)")

        let table = try cli.run(["attachments", rx])
        #expect(table.stdout.contains("png-prescription-photo-1200x1600.png  png   "))
        #expect(table.stdout.contains("1200x1600 px"))
        #expect(table.stdout.contains("paper prescription.pdf"))
        #expect(table.stdout.contains("3 pages"))
        #expect(!table.stdout.contains(try sha256(Self.photo)), "the hash only with --long")
        #expect(try cli.run(["attachments", rx, "--long"]).stdout.contains(try sha256(Self.photo)))

        let json = try cli.json(try cli.run(["attachments", rx, "--format", "json"]).stdout)
        #expect(json["schema"] as? String == "rxvault/attachments/v1")
        let items = try #require(json["attachments"] as? [[String: Any]])
        #expect(items.count == 2)
        #expect(items[0]["mimeType"] as? String == "image/png")
        #expect(
            items[0]["size"] as? Int == (try FileManager.default.attributesOfItem(atPath: Self.photo)[.size] as? Int))
        #expect(items[1]["pages"] as? Int == 3)

        // Extract by id prefix and by name: byte-identical, same hash.
        let out = cli.path("out.png")
        let extracted = try cli.run(["extract", rx, photoID, "--out", out])
        #expect(extracted.status == 0, "\(extracted)")
        #expect(FileManager.default.contents(atPath: out) == FileManager.default.contents(atPath: Self.photo))
        #expect(try sha256(out) == items[0]["sha256"] as? String)
        let mode = try FileManager.default.attributesOfItem(atPath: out)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let byName = try cli.run(["extract", rx, "paper prescription.pdf"])
        #expect(byName.status == 0, "\(byName)")
        #expect(
            FileManager.default.contents(atPath: cli.path("paper prescription.pdf"))
                == FileManager.default.contents(atPath: Self.pdf))
        // Never overwrite without --force.
        let again = try cli.run(["extract", rx, photoID, "--out", out])
        #expect(again.status == 73)
        #expect(try cli.run(["extract", rx, photoID, "--out", out, "--force"]).status == 0)
        // To stdout.
        let piped = try cli.run(["extract", rx, photoID, "--out", "-"])
        #expect(piped.stdout.utf8.count > 0)

        #expect(try cli.run(["detach", rx, photoID]).status == 64, "needs --yes off a terminal")
        let detached = try cli.run(["detach", rx, photoID, "--yes"])
        #expect(detached.status == 0)
        #expect(try cli.run(["extract", rx, photoID, "--out", cli.path("gone.png")]).status == 67)
        #expect(
            try cli.json(try cli.run(["attachments", rx, "--format", "json"]).stdout)["attachments"].map {
                ($0 as? [Any])?.count
            } == 1)
        // Removing the prescription removes its attachments.
        #expect(try cli.run(["remove", rx, "--yes"]).status == 0)
        #expect(try cli.run(["status"]).stdout.contains("0 attachments"))
    }

    @Test func attachFromStandardInput() throws {
        let (cli, rx) = try setUp()
        let r = try cli.run(["attach", rx, "-"], stdinFile: Self.pdf)
        #expect(r.status == 0, "\(r)")
        let json = try cli.json(try cli.run(["attachments", rx, "--format", "json"]).stdout)
        #expect((json["attachments"] as? [[String: Any]])?.first?["name"] as? String == "attachment.pdf")
    }

    @Test func refusalsSayWhyAndStoreNothing() throws {
        let (cli, rx) = try setUp()
        let cases: [(String, String)] = [
            ("invalid/pdf-really-zip.pdf", "not a PNG or PDF (looks like a ZIP archive)"),
            ("invalid/png-bad-idat-crc.png", "PNG data is corrupt: CRC error in IDAT"),
            ("invalid/pdf-encrypted-aes256-user-password.pdf", "PDF is password-protected"),
            ("invalid/png-bomb-16384x16384.png", "image is 16384x16384: over the 50 megapixel limit"),
            ("invalid/pdf-javascript-openaction.pdf", "PDF contains JavaScript"),
            ("invalid/pdf-launch-link.pdf", "PDF contains a launch action"),
            ("invalid/pdf-bad-startxref.pdf", "PDF is damaged"),
            ("invalid/png-really-text.png", "not a PNG or PDF (looks like a text file)")
        ]
        let before = try cli.run(["status"]).stdout
        for (file, message) in cases {
            let r = try cli.run(["attach", rx, Self.fixture(file)])
            #expect(r.status == 65, "\(file): \(r)")
            #expect(r.stderr.contains("rxvault: error: refused: \(message)"), "\(file): \(r.stderr)")
        }
        #expect(try cli.run(["status"]).stdout == before)
        #expect(try cli.run(["attachments", rx]).stderr.contains("no attachments"))
        let db = try Database(path: cli.vaultPath)
        #expect(try db.integer("SELECT count(*) FROM attachment_chunk") == 0)
    }

    /// The same bytes attached twice are refused, naming the attachment that has them, unless
    /// asked for; a name then shared by two attachments lists both ids to choose from.
    @Test func duplicatesAreRefusedAndAmbiguousNamesListCandidates() throws {
        let (cli, rx) = try setUp()
        let first = try cli.run(["attach", rx, Self.photo])
        #expect(first.status == 0)
        let firstID = first.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let again = try cli.run(["attach", rx, "-", "--name", "copy.png"], stdinFile: Self.photo)
        #expect(again.status == 73, "\(again)")
        #expect(
            again.stderr.contains("already attached as \(firstID) (png-prescription-photo-1200x1600.png)"),
            "\(again.stderr)")
        #expect(again.stderr.contains("--allow-duplicate"))
        #expect(
            try cli.run(["attachments", rx, "--format", "json"]).stdout.components(separatedBy: "\"sha256\"").count
                == 2,
            "a refused duplicate was stored")
        // Another prescription may hold the same file.
        let other = try cli.add(CLIHarness.contactsArguments)
        #expect(try cli.run(["attach", other, Self.photo]).status == 0)

        let second = try cli.run(["attach", rx, Self.photo, "--allow-duplicate"])
        #expect(second.status == 0, "\(second)")
        let secondID = second.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        for command in ["extract", "preview", "detach"] {
            var arguments = [command, rx, "png-prescription-photo-1200x1600.png"]
            if command == "preview" { arguments += ["--out", cli.path("p.png")] }
            if command == "detach" { arguments += ["--yes"] }
            let ambiguous = try cli.run(arguments)
            #expect(ambiguous.status == 64, "\(command): \(ambiguous)")
            #expect(
                ambiguous.stderr.contains(firstID) && ambiguous.stderr.contains(secondID),
                "\(command): \(ambiguous.stderr)")
            #expect(ambiguous.stderr.contains("added 20"), "\(command): \(ambiguous.stderr)")
        }
        #expect(try cli.run(["extract", rx, secondID, "--out", cli.path("second.png")]).status == 0)
    }

    @Test func sizeCapIsCheckedBeforeReading() throws {
        let cli = try CLIHarness()
        #expect(try cli.run(["init", "--kdf", "interactive", "--max-attachment-size", "64KiB"]).status == 0)
        let rx = try cli.add(CLIHarness.glassesArguments)
        #expect(try cli.run(["status"]).stdout.contains("up to 64 KiB each"))
        let big = try cli.run(["attach", rx, Self.photo])
        #expect(big.status == 65)
        #expect(big.stderr.contains("over the 64 KiB limit of this vault"))
        // Through stdin the size is unknown up front: the stream is cut off at the cap.
        let piped = try cli.run(["attach", rx, "-"], stdinFile: Self.photo)
        #expect(piped.status == 65)
        #expect(piped.stderr.contains("over the 64 KiB limit"))
        #expect(try cli.run(["init", "--vault", cli.path("x.rxv"), "--max-attachment-size", "lots"]).status == 64)
    }

    @Test func aCrashingOrHangingParserIsARefusalNotACrash() throws {
        let (cli, rx) = try setUp()
        let crash = try cli.run(["attach", rx, Self.photo], environment: ["RXVAULT_PARSER_FAULT": "crash"])
        #expect(crash.status == 65, "\(crash)")
        #expect(crash.stderr.contains("the file checker crashed on this file"))
        let started = Date()
        let hang = try cli.run(
            ["attach", rx, Self.photo], environment: ["RXVAULT_PARSER_FAULT": "hang", "RXVAULT_PARSER_TIMEOUT": "2"])
        #expect(hang.status == 65, "\(hang)")
        #expect(hang.stderr.contains("the file checker"), "\(hang.stderr)")
        #expect(Date().timeIntervalSince(started) < 20)
        // The vault is untouched and still works.
        #expect(try cli.run(["attachments", rx]).stderr.contains("no attachments"))
        #expect(try cli.run(["attach", rx, Self.photo]).status == 0)
    }

    /// A check that waits without using CPU is stopped by the wall clock; on a terminal the person
    /// hears after 2 s that it is still checking, and the refusal names the limit.
    @Test func aStalledCheckIsStoppedByTheWallClockAndSaysSo() throws {
        let (cli, rx) = try setUp()
        let started = Date()
        let r = try TerminalOutputTests.runOnTerminal(
            cli, ["attach", rx, Self.photo], columns: 100, stderrToo: true,
            environment: ["RXVAULT_PARSER_FAULT": "stall", "RXVAULT_PARSER_TIMEOUT": "4"])
        #expect(r.status == 65, "\(r)")
        #expect(r.stdout.contains("rxvault: still checking the file (it is refused if that takes over 4 s)"), "\(r)")
        #expect(
            r.stdout.contains(
                "the file checker did not finish within 4 s, the limit for checking a file; it is refused as suspicious (RXVAULT_PARSER_TIMEOUT sets the limit)"
            ), "\(r)")
        #expect(Date().timeIntervalSince(started) < 30)
        // Not on a terminal: no notice, the same refusal.
        let piped = try cli.run(
            ["attach", rx, Self.photo], environment: ["RXVAULT_PARSER_FAULT": "stall", "RXVAULT_PARSER_TIMEOUT": "3"])
        #expect(piped.status == 65 && !piped.stderr.contains("still checking"), "\(piped)")
        #expect(try cli.run(["attachments", rx]).stderr.contains("no attachments"))
    }

    @Test func tamperedChunksFailToExtractAndWriteNothing() throws {
        let (cli, rx) = try setUp()
        let id = try cli.run(["attach", rx, Self.photo]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let db = try Database(path: cli.vaultPath)
        let chunks = try db.integer("SELECT count(*) FROM attachment_chunk")!
        #expect(chunks >= 3, "the photo spans several 64 KiB chunks")
        let out = cli.path("out.png")

        func expectIntegrityFailure(_ what: String) throws {
            let r = try cli.run(["extract", rx, id, "--out", out])
            #expect(r.status == 76, "\(what): \(r)")
            #expect(r.stderr.contains("integrity check failed"), "\(what)")
            #expect(!FileManager.default.fileExists(atPath: out), "\(what): a file was written")
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: cli.directory.path).filter {
                $0.contains(".rxvault-")
            }
            #expect(leftovers.isEmpty, "\(what): temporary file left behind")
            let piped = try cli.run(["extract", rx, id, "--out", "-"])
            #expect(piped.status == 76 && piped.stdout.isEmpty, "\(what): stdout got data")
        }

        // A flipped byte in the middle chunk.
        let middle = try db.blob("SELECT data FROM attachment_chunk WHERE seq = 1")
        var flipped = middle
        flipped[100] ^= 0x20
        try db.prepare("UPDATE attachment_chunk SET data = ? WHERE seq = 1").run([.blob(flipped)])
        try expectIntegrityFailure("flipped byte")
        try db.prepare("UPDATE attachment_chunk SET data = ? WHERE seq = 1").run([.blob(middle)])
        #expect(try cli.run(["extract", rx, id, "--out", out]).status == 0)
        try FileManager.default.removeItem(atPath: out)

        // Two chunks swapped.
        let first = try db.blob("SELECT data FROM attachment_chunk WHERE seq = 0")
        try db.prepare("UPDATE attachment_chunk SET data = ? WHERE seq = 0").run([.blob(middle)])
        try db.prepare("UPDATE attachment_chunk SET data = ? WHERE seq = 1").run([.blob(first)])
        try expectIntegrityFailure("reordered")
        try db.prepare("UPDATE attachment_chunk SET data = ? WHERE seq = 0").run([.blob(first)])
        try db.prepare("UPDATE attachment_chunk SET data = ? WHERE seq = 1").run([.blob(middle)])

        // Cut at a chunk boundary: the final chunk is gone.
        let last = chunks - 1
        let lastData = try db.blob("SELECT data FROM attachment_chunk WHERE seq = ?", [.integer(last)])
        try db.prepare("DELETE FROM attachment_chunk WHERE seq = ?").run([.integer(last)])
        try expectIntegrityFailure("truncated")
        try db.prepare("INSERT INTO attachment_chunk (attachment_id, seq, data) SELECT id, ?, ? FROM attachment")
            .run([.integer(last), .blob(lastData)])

        // Metadata altered.
        let metadata = try db.blob("SELECT metadata FROM attachment")
        var altered = metadata
        altered[30] ^= 1
        try db.prepare("UPDATE attachment SET metadata = ?").run([.blob(altered)])
        let listed = try cli.run(["attachments", rx])
        #expect(listed.status == 76)
        try db.prepare("UPDATE attachment SET metadata = ?").run([.blob(metadata)])

        // Moved to another prescription.
        let other = try cli.add(CLIHarness.contactsArguments)
        try db.execute(
            "UPDATE attachment SET prescription_id = (SELECT id FROM prescription WHERE id LIKE '\(other)%')")
        #expect(try cli.run(["attachments", other]).status == 76)
        try db.execute("UPDATE attachment SET prescription_id = (SELECT id FROM prescription WHERE id LIKE '\(rx)%')")
        #expect(try cli.run(["extract", rx, id, "--out", out]).status == 0)
        #expect(FileManager.default.contents(atPath: out) == FileManager.default.contents(atPath: Self.photo))
    }

    @Test func previewWritesADownscaledPNG() throws {
        let (cli, rx) = try setUp()
        #expect(try cli.run(["attach", rx, Self.photo]).status == 0)
        #expect(try cli.run(["attach", rx, Self.pdf]).status == 0)
        for (name, out) in [
            ("png-prescription-photo-1200x1600.png", "photo-preview.png"),
            ("pdf-1.4-three-pages.pdf", "pdf-preview.png")
        ] {
            let r = try cli.run(["preview", rx, name, "--out", cli.path(out), "--width", "240"])
            #expect(r.status == 0, "\(r)")
            let data = try #require(FileManager.default.contents(atPath: cli.path(out)))
            #expect(data.starts(with: [0x89, 0x50, 0x4E, 0x47]))
            // IHDR width, big-endian at offset 16.
            let width = data[16..<20].reduce(0) { $0 << 8 | Int($1) }
            #expect(width == 240, "\(name)")
            // And it is itself a valid PNG: attach it.
            #expect(try cli.run(["attach", rx, cli.path(out)]).status == 0)
        }
        #expect(
            try cli.run(["preview", rx, "png-prescription-photo-1200x1600.png", "--out", cli.path("photo-preview.png")])
                .status == 73)
        #expect(
            try cli.run([
                "preview", rx, "png-prescription-photo-1200x1600.png", "--out", cli.path("x.png"), "--width", "5"
            ]).status == 64)
    }

    @Test func attachmentNamesAndContentAreNotInThePlainFile() throws {
        let (cli, rx) = try setUp()
        let reader = try Database(path: cli.vaultPath)
        _ = try reader.integer("SELECT count(*) FROM attachment")
        #expect(try cli.run(["attach", rx, Self.pdf, "--name", "Quintessa-eye-exam-scan.pdf"]).status == 0)
        let bytes = cli.vaultFileBytes()
        #expect(!bytes.contains("Quintessa"))
        #expect(!bytes.contains("eye-exam-scan"))
        #expect(!bytes.contains("%PDF-1.4"))
        #expect(!bytes.contains("/MediaBox"))
    }
}
