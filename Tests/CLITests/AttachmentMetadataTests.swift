import Foundation
import RxCrypto
import RxTestSupport
import Testing

/// PNG metadata through the binary: dropped from what is stored unless `--keep-metadata`, said on
/// standard error, and the stored file is what every later command (extract, export, backup and
/// restore) gives back. Plus the fourth round's refusals with the messages a person reads.
@Suite struct AttachmentMetadataTests {
    static func fixture(_ name: String) -> String { AttachmentTests.fixture(name) }

    func setUp() throws -> (CLIHarness, String) {
        let cli = try CLIHarness()
        try cli.initVault()
        return (cli, try cli.add(CLIHarness.glassesArguments))
    }

    @Test func aPNGIsStoredWithoutItsMetadataAndEveryCommandGivesBackWhatWasStored() throws {
        let (cli, rx) = try setUp()
        let file = Self.fixture("valid/png-exif-text-private.png")
        let original = Array(try Data(contentsOf: URL(fileURLWithPath: file)))
        #expect(pngChunkTypes(original).contains("eXIf"))

        let attached = try cli.run(["attach", rx, file])
        #expect(attached.status == 0, "\(attached)")
        #expect(
            attached.stderr.contains(
                "rxvault: stored the PNG without its metadata: eXIf, tEXt x2, tIME, prVt (--keep-metadata keeps it)"),
            "\(attached.stderr)")
        let id = attached.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let out = cli.path("stored.png")
        #expect(try cli.run(["extract", rx, id, "--out", out]).status == 0)
        let stored = Array(try Data(contentsOf: URL(fileURLWithPath: out)))
        #expect(pngChunkTypes(stored) == ["IHDR", "IDAT", "IEND"])
        #expect(!String(decoding: stored, as: UTF8.self).contains("Sam Rivera"))

        // The listing's size and hash are the stored file's, and the same file again is a duplicate.
        let listed = try cli.run(["attachments", rx, "--format", "json"])
        let json = try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any]
        let first = (json?["attachments"] as? [[String: Any]])?.first
        #expect(first?["size"] as? Int == stored.count, "\(listed.stdout)")
        let hash = SHA256()
        hash.update(stored)
        #expect(first?["sha256"] as? String == hash.finalHex())
        #expect(try cli.run(["attach", rx, file]).status == 73)

        // Backup and restore give back the stored bytes.
        let backup = cli.path("vault.age")
        #expect(try cli.run(["backup", backup]).status == 0)
        let restored = cli.path("restored.rxv")
        let restore = try cli.run(["restore", backup, "--to", restored])
        #expect(restore.status == 0, "\(restore)")
        let again = cli.path("again.png")
        #expect(try cli.run(["extract", rx, id, "--out", again, "--vault", restored]).status == 0)
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: again))) == stored)
        #expect(try cli.run(["check"]).status == 0)
    }

    /// A scan whose compressed image data happens to spell HTML (as one 30 MiB scan in a few
    /// hundred does) is stored with that data cut apart, said on standard error, and every later
    /// command gives back what was stored.
    @Test func aPNGWhoseImageDataSpellsMarkupIsStoredCutApart() throws {
        let (cli, rx) = try setUp()
        var generator = SeededGenerator(seed: 11)
        var rows = (0..<8).map { _ in (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) } }
        rows[5].replaceSubrange(2..<23, with: Array("<svg onload=alert(1)>".utf8))
        let original = storedPNG(width: 32, rows: rows)
        let file = cli.path("scan.png")
        try Data(original).write(to: URL(fileURLWithPath: file))

        let attached = try cli.run(["attach", rx, file, "--keep-metadata"])
        #expect(attached.status == 0, "\(attached)")
        #expect(attached.stderr.contains("rxvault: cut the PNG's image data into one more chunk at"), "\(attached)")
        let id = attached.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let backup = cli.path("vault.age")
        #expect(try cli.run(["backup", backup]).status == 0)
        let restored = cli.path("restored.rxv")
        #expect(try cli.run(["restore", backup, "--to", restored]).status == 0)
        for vault in [cli.vaultPath, restored] {
            let out = cli.path("out-\(vault.hashValue).png")
            #expect(try cli.run(["extract", rx, id, "--out", out, "--vault", vault]).status == 0)
            let stored = Array(try Data(contentsOf: URL(fileURLWithPath: out)))
            #expect(pngImageData(stored) == pngImageData(original))
            #expect(pngChunkTypes(stored).filter { $0 == "IDAT" }.count >= 2)
            #expect(!String(decoding: stored, as: UTF8.self).contains("<svg"))
        }
        #expect(try cli.run(["check"]).status == 0)
    }

    @Test func keepMetadataStoresThePNGByteForByteAndChecksWhatItKeeps() throws {
        let (cli, rx) = try setUp()
        let plain = Self.fixture("valid/png-ancillary-chunks.png")
        let attached = try cli.run(["attach", rx, plain, "--keep-metadata"])
        #expect(attached.status == 0, "\(attached)")
        #expect(!attached.stderr.contains("without its metadata"))
        let id = attached.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let out = cli.path("kept.png")
        #expect(try cli.run(["extract", rx, id, "--out", out]).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == Data(contentsOf: URL(fileURLWithPath: plain)))

        // Kept metadata is stored metadata: HTML a browser acts on in a text chunk is refused.
        let withMarkup = try cli.run(["attach", rx, Self.fixture("valid/png-exif-text-private.png"), "--keep-metadata"])
        #expect(withMarkup.status == 65, "\(withMarkup)")
        #expect(
            withMarkup.stderr.contains(
                "rxvault: error: refused: file is a PNG and an HTML page at once (it has <img onerror=...> markup at byte"
            ),
            "\(withMarkup.stderr)")
    }

    /// What `--keep-metadata` stored travels whole: an export imported into another vault gives
    /// back the same bytes, importing it again adds nothing, and both vaults pass `check`.
    @Test func keptMetadataSurvivesExportAndImportAndImportingAgainAddsNothing() throws {
        let (cli, rx) = try setUp()
        let plain = Self.fixture("valid/png-ancillary-chunks.png")
        let kept = try cli.run(["attach", rx, plain, "--keep-metadata"])
        #expect(kept.status == 0, "\(kept)")
        let stripped = try cli.run(["attach", rx, Self.fixture("valid/png-exif-text-private.png")])
        #expect(stripped.status == 0, "\(stripped)")
        let file = cli.path("all.json")
        #expect(try cli.run(["export", "--format", "json", "--out", file]).status == 0)

        let other = try CLIHarness()
        try other.initVault()
        for _ in 0..<2 {
            let imported = try other.run(["import", file])
            #expect(imported.status == 0, "\(imported)")
        }
        let listed = try other.json(try other.run(["list", "--format", "json"]).stdout)
        let id = try #require((listed["prescriptions"] as? [[String: Any]])?.first?["id"] as? String)
        let attachments = try other.json(try other.run(["attachments", id, "--format", "json"]).stdout)
        let items = try #require(attachments["attachments"] as? [[String: Any]])
        #expect(items.count == 2, "importing again adds nothing: \(items)")
        let keptID = try #require(items.first { $0["name"] as? String == "png-ancillary-chunks.png" }?["id"] as? String)
        let out = other.path("kept.png")
        #expect(try other.run(["extract", id, keptID, "--out", out]).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == Data(contentsOf: URL(fileURLWithPath: plain)))
        #expect(try cli.run(["check"]).status == 0)
        #expect(try other.run(["check"]).status == 0)
    }

    @Test func theFourthRoundIsRefusedWithMessagesThatSayWhatAndWhere() throws {
        let (cli, rx) = try setUp()
        let cases: [(String, String)] = [
            (
                "invalid/png-apng-frame-bomb.png",
                "an animated PNG (APNG: acTL chunk at byte 33, 2 frames) is not accepted: only still images are"
            ),
            (
                "invalid/png-ztxt-budget-3x7mib.png",
                "PNG has text and profile chunks that decompress to over 8 MiB together (2 chunks by the zTXt at byte"
            ),
            ("invalid/png-private-chunk-jpeg.png", "PNG carries another file: its private chunk jpEg at byte"),
            (
                "invalid/png-pdf-in-private-chunk.png",
                "file is a PNG and a PDF at once (a PDF header at byte 41, where PDF readers look for one)"
            ),
            (
                "invalid/png-private-chunk-zip.png",
                "file is a PNG and a ZIP archive at once (a ZIP reader opens the archive of 1 entry whose directory ends at byte"
            ),
            (
                "invalid/pdf-zip-in-stream.pdf",
                "file is a PDF and a ZIP archive at once (a ZIP reader opens the archive of 1 entry"
            ),
            (
                "invalid/pdf-html-img-onerror.pdf",
                "file is a PDF and an HTML page at once (it has <img onerror=...> markup at byte"
            ),
            (
                "invalid/pdf-html-meta-refresh.pdf",
                "file is a PDF and an HTML page at once (it has <meta http-equiv=...> markup at byte"
            ),
            (
                "invalid/pdf-html-entity-javascript-url.pdf",
                "file is a PDF and an HTML page at once (it has <a href=javascript:...> markup at byte"
            )
        ]
        for (file, message) in cases {
            let r = try cli.run(["attach", rx, Self.fixture(file)])
            #expect(r.status == 65, "\(file): \(r)")
            #expect(r.stderr.contains("rxvault: error: refused: \(message)"), "\(file): \(r.stderr)")
        }
        // Acrobat's rich-text form value (XHTML that does nothing) is no longer taken for a page.
        let form = try cli.run(["attach", rx, Self.fixture("valid/pdf-acrobat-rich-text-field.pdf")])
        #expect(form.status == 0, "\(form)")
        #expect(try cli.run(["attachments", rx]).stdout.contains("pdf-acrobat-rich-text-field.pdf"))
    }
}
