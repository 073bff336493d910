import Foundation
import Testing

/// `export --format pdf` through the binary: the printable copy shows every value (pdftotext),
/// is a PDF rxvault's own attachment checker accepts, renders to non-blank A4 pages (poppler's
/// pdftoppm), has one page per prescription, and a client prints what it was granted.
@Suite struct PrintTests {
    static let photo = AttachmentTests.photo

    /// Runs a poppler-utils tool (scripts/setup installs them); the test fails when it is missing.
    static func poppler(_ cli: CLIHarness, _ arguments: [String]) throws -> CLIHarness.Result {
        let tool = "/usr/bin/" + arguments[0]
        #expect(
            FileManager.default.isExecutableFile(atPath: tool),
            "\(tool) is missing: apt-get install poppler-utils (scripts/setup)")
        return try CLIHarness.spawn(
            [tool] + arguments.dropFirst(), environment: cli.environment, directory: cli.directory)
    }

    /// Width, height and dark-pixel count of a binary PGM (P5) as pdftoppm -gray writes it.
    static func inked(_ path: String) throws -> (Int, Int, Int) {
        let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var fields: [String] = []
        var at = 0
        while fields.count < 4 && at < data.count {
            while at < data.count && (data[at] == 0x20 || data[at] == 0x0A) { at += 1 }
            var field = ""
            while at < data.count && data[at] != 0x20 && data[at] != 0x0A {
                field.append(Character(UnicodeScalar(data[at])))
                at += 1
            }
            fields.append(field)
        }
        let width = Int(fields[1]) ?? 0
        let height = Int(fields[2]) ?? 0
        let pixels = data[(at + 1)...]
        #expect(fields[0] == "P5" && pixels.count == width * height)
        return (width, height, pixels.filter { $0 < 128 }.count)
    }

    @Test func aPrintableCopyShowsEveryValuePassesTheCheckerAndIsNotBlank() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let glasses = try cli.add(CLIHarness.glassesArguments)
        let contacts = try cli.add(CLIHarness.contactsArguments)
        #expect(try cli.run(["attach", glasses, Self.photo, "--name", "paper-copy.png"]).status == 0)

        let out = cli.path("rx.pdf")
        let exported = try cli.run(["export", glasses, contacts, "--format", "pdf", "--out", out])
        #expect(exported.status == 0, "\(exported)")
        #expect(exported.stderr.contains("exported 2 prescription(s)"), "\(exported)")

        let text = try Self.poppler(cli, ["pdftotext", "-layout", out, "-"])
        #expect(text.status == 0, "\(text)")
        let pages = text.stdout.split(separator: "\u{0C}").map(String.init)
        #expect(pages.count >= 2, "\(text)")
        let first = pages[0]
        let second = pages.count > 1 ? pages[1] : ""
        for value in [
            "Spectacle prescription", "Quintessa Marlowe", "born 1980-04-02", "Dr Ignatius Fairweather", "OPT-77123",
            "2026-03-01", "2028-03-01", "valid on 2026-06-15", "OD", "OS", "-2.25", "-0.75", "180", "+2.00", "-1.75",
            "-0.50",
            "170", "1.5 BI", "12.0", "63.5 mm far, 60.5 mm near", "Varifocal lenses preferred", "paper-copy.png",
            "1200x1600 px",
            "-2.625"
        ] {
            #expect(first.contains(value), "page 1 shows \(value):\n\(first)")
        }
        for value in [
            "Contact lens prescription", "Zylofocus Aquaclear", "-3.25", "8.6", "14.2", "-2.75", "-1.25", "8.7", "14.5",
            "2026-07-01", "expiring in 16 days on 2026-06-15", "Licence", "not recorded"
        ] {
            #expect(second.contains(value), "page 2 shows \(value):\n\(second)")
        }
        #expect(!second.contains("Varifocal"), "each page is its own prescription")

        // rxvault's own checker accepts it (an ordinary PDF: no scripts, no damage), two pages.
        let attached = try cli.run(["attach", contacts, out])
        #expect(attached.status == 0, "\(attached)")
        let list = try cli.json(try cli.run(["attachments", contacts, "--format", "json"]).stdout)
        let items = try #require(list["attachments"] as? [[String: Any]])
        #expect(items.first?["pages"] as? Int == 2, "\(items)")

        // poppler renders both pages as A4 (at 30 dpi: 595.28 x 841.89 pt is 249 x 351 pixels, rounded up) with ink on them.
        let rendered = try Self.poppler(cli, ["pdftoppm", "-gray", "-r", "30", out, cli.path("page")])
        #expect(rendered.status == 0, "\(rendered)")
        for page in ["page-1.pgm", "page-2.pgm"] {
            let (width, height, dark) = try Self.inked(cli.path(page))
            #expect((248...249).contains(width) && (350...351).contains(height), "\(page): \(width)x\(height)")
            #expect(dark > 800, "\(page) is blank or nearly: \(dark) dark pixels")
        }
    }

    @Test func aClientPrintsWhatItIsGranted() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let glasses = try cli.add(CLIHarness.glassesArguments)
        let contacts = try cli.add(CLIHarness.contactsArguments)
        let key = cli.path("shop.key")
        #expect(try cli.run(["client", "add", "lens-shop", "--generate", "--identity-out", key]).status == 0)
        #expect(try cli.run(["grant", "lens-shop", contacts, "--no-attachments"]).status == 0)

        let out = cli.path("shop.pdf")
        let exported = try cli.run(
            ["--identity", key, "export", "--format", "pdf", "--out", out],
            environment: ["RXVAULT_PASSPHRASE_FILE": nil])
        #expect(exported.status == 0, "\(exported)")
        let text = try Self.poppler(cli, ["pdftotext", "-layout", out, "-"])
        #expect(
            text.stdout.contains("Zylofocus Aquaclear") && text.stdout.contains("Contact lens prescription"), "\(text)")
        #expect(
            !text.stdout.contains("Varifocal") && !text.stdout.contains("Spectacle"), "only what was granted: \(text)")
        // The glasses prescription is not granted: asking for it is the same "no prescription" as a wrong id.
        let denied = try cli.run(
            ["--identity", key, "export", glasses, "--format", "pdf", "--out", cli.path("no.pdf")],
            environment: ["RXVAULT_PASSPHRASE_FILE": nil])
        #expect(denied.status == 67, "\(denied)")
    }
}
