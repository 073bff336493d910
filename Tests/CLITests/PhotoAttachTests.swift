import Foundation
import Testing

/// `attach` with a phone photo, through the binary: a JPEG or HEIC is converted to PNG in the
/// isolated child, the PNG is what is stored (named .png), its metadata is gone, it is upright
/// and scaled, and what cannot be decoded is refused with the reason and exit 65.
@Suite struct PhotoAttachTests {
    static let photos = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/photos")
    static func photo(_ name: String) -> String { photos.appendingPathComponent(name).path }

    func setUp() throws -> (CLIHarness, String) {
        let cli = try CLIHarness()
        try cli.initVault()
        return (cli, try cli.add(CLIHarness.glassesArguments))
    }

    /// The one attachment's JSON entry.
    func attachment(_ cli: CLIHarness, _ rx: String) throws -> [String: Any] {
        let json = try cli.json(try cli.run(["attachments", rx, "--format", "json"]).stdout)
        let items = try #require(json["attachments"] as? [[String: Any]])
        return try #require(items.last)
    }

    static func contains(_ data: Data, _ needle: [UInt8]) -> Bool { data.range(of: Data(needle)) != nil }

    @Test(arguments: [("phone-gps.jpg", "JPEG"), ("phone-gps.heic", "HEIC")])
    func aPhoneSavedPhotoIsStoredAsAPNGWithoutItsLocation(_ name: String, _ format: String) throws {
        let (cli, rx) = try setUp()
        let original = try #require(FileManager.default.contents(atPath: Self.photo(name)))
        #expect(Self.contains(original, Array("WGS-84".utf8)), "the fixture carries GPS tags")
        let r = try cli.run(["attach", rx, Self.photo(name)])
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr.contains("rxvault: converted from \(format) (640x480) to a 640x480 PNG"), "\(r)")
        #expect(r.stderr.contains("its metadata (EXIF, GPS position, camera) was not kept"), "\(r)")
        let id = r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(id.count == 8, "only the id on stdout: \(r)")

        let item = try attachment(cli, rx)
        #expect(
            item["name"] as? String
                == name.replacingOccurrences(of: name.hasSuffix(".heic") ? ".heic" : ".jpg", with: ".png"))
        #expect(item["mimeType"] as? String == "image/png")
        #expect(item["width"] as? Int == 640 && item["height"] as? Int == 480)

        // What is stored: a PNG with only IHDR, IDAT and IEND, and nothing of the EXIF block.
        let out = cli.path("stored.png")
        let extracted = try cli.run(["extract", rx, id, "--out", out])
        #expect(extracted.status == 0, "\(extracted)")
        let stored = try #require(FileManager.default.contents(atPath: out))
        #expect(stored.starts(with: [0x89, 0x50, 0x4E, 0x47]))
        for trace in [
            "Exif", "eXIf", "tEXt", "iTXt", "zTXt", "GPS", "WGS-84", "RxvaultTestCam", "Phone 12 Fixture", "2026:03:01"
        ] {
            #expect(!Self.contains(stored, Array(trace.utf8)), "found \(trace) in the stored file")
        }
        #expect(
            !Self.contains(stored, [0, 0, 0x0A, 0x38, 0, 0, 0, 100]),
            "found the GPS latitude's rational in the stored file")
        // Nor anywhere in the vault file: the original was never stored, not even encrypted.
        #expect(try cli.run(["check"]).status == 0)
    }

    @Test func aTwelveMegapixelPhotoIsScaledDownUnlessFullSize() throws {
        let (cli, rx) = try setUp()
        let scaled = try cli.run(["attach", rx, Self.photo("phone-12mp.jpg")])
        #expect(scaled.status == 0, "\(scaled)")
        #expect(scaled.stderr.contains("converted from JPEG (4032x3024) to a 2048x1536 PNG"), "\(scaled)")
        #expect(scaled.stderr.contains("scaled down (--full-size keeps every pixel)"), "\(scaled)")
        let small = try attachment(cli, rx)
        #expect(small["width"] as? Int == 2048 && small["height"] as? Int == 1536)

        let full = try cli.run(["attach", rx, Self.photo("phone-12mp.jpg"), "--full-size", "--name", "full.png"])
        #expect(full.status == 0, "\(full)")
        #expect(full.stderr.contains("to a 4032x3024 PNG"), "\(full)")
        let large = try attachment(cli, rx)
        #expect(large["width"] as? Int == 4032 && large["height"] as? Int == 3024)
        #expect((large["size"] as? Int ?? 0) > (small["size"] as? Int ?? .max))
    }

    @Test func aSidewaysPhotoIsTurnedUpright() throws {
        let (cli, rx) = try setUp()
        let r = try cli.run(["attach", rx, "-", "--name", "upright.png"], stdinFile: Self.photo("orientation-6.jpg"))
        #expect(r.status == 0, "\(r)")
        #expect(
            r.stderr.contains("converted from JPEG (64x32) to a 32x64 PNG, turned upright (EXIF orientation 6)"), "\(r)"
        )
        let item = try attachment(cli, rx)
        #expect(item["name"] as? String == "upright.png" && item["width"] as? Int == 32 && item["height"] as? Int == 64)
    }

    @Test func whatCannotBeDecodedIsRefusedWithTheReason() throws {
        let (cli, rx) = try setUp()
        let cases: [(String, String)] = [
            ("truncated.jpg", "rxvault: error: refused: JPEG photo: JPEG data is corrupt: Premature end of JPEG file"),
            (
                "huge-declared.jpg",
                "rxvault: error: refused: JPEG photo: JPEG image is 60000x60000: over the 16384-pixel side limit"
            ),
            ("truncated.heic", "rxvault: error: refused: HEIC photo: HEIC data is corrupt: ")
        ]
        for (name, message) in cases {
            let r = try cli.run(["attach", rx, Self.photo(name)])
            #expect(r.status == 65, "\(name): \(r)")
            #expect(r.stderr.hasPrefix(message), "\(name): \(r)")
            #expect(!r.stderr.contains("\n\n"), "one message: \(r)")
        }
        // Nothing was stored, and the refusal asked for no passphrase (none was needed yet).
        let none = try cli.run(["attachments", rx])
        #expect(none.stderr.contains("has no attachments"), "\(none)")
        let noPassphrase = try cli.run(
            ["attach", rx, Self.photo("truncated.jpg"), "--no-input"], environment: ["RXVAULT_PASSPHRASE_FILE": nil])
        #expect(noPassphrase.status == 65, "\(noPassphrase)")
    }

    @Test func theConverterRunsInTheSandboxedChild() throws {
        let (cli, rx) = try setUp()
        // A crash in the decoder is the child's: the vault process reports a refusal.
        let r = try cli.run(["attach", rx, Self.photo("phone-gps.jpg")], environment: ["RXVAULT_PARSER_FAULT": "crash"])
        #expect(r.status == 65, "\(r)")
        #expect(r.stderr.contains("the file checker crashed on this file"), "\(r)")
    }
}
