import Foundation
import RxTestSupport
import Testing

/// The README's short tour, run as written: a reader copies it into a shell, so every line of it
/// must work, in order, on a fresh vault (sh -e; rxvault on PATH; the passphrase from a file, as
/// a reader who set up `RXVAULT_PASSPHRASE_FILE` has it; a scan.png in the folder).
@Suite struct ReadmeTourTests {
    static let root = Repository.root

    /// The first `sh` block after the heading, as the README has it.
    static func block(after heading: String, in file: String) throws -> String {
        let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
        let start = try #require(text.range(of: "\n\(heading)\n"), "\(file) has no \(heading)").upperBound
        let opened = try #require(text.range(of: "```sh\n", range: start..<text.endIndex)).upperBound
        let closed = try #require(text.range(of: "\n```", range: opened..<text.endIndex)).lowerBound
        return String(text[opened..<closed])
    }

    /// The README routes: what rxvault is, install, the two commands, the tour, links. Guides
    /// and reference live in docs/ and the man pages, so it stays short enough to read at once.
    @Test func theReadmeStaysShort() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false).count
        #expect(
            lines <= 250, "README.md has \(lines) lines; move tasks to docs/guide.md, reference to docs/reference.md")
    }

    @Test func theTourRunsAsWritten() throws {
        let tour = try Self.block(after: "## A short tour", in: "README.md")
        let cli = try CLIHarness()
        let scans = Self.root.appendingPathComponent("Fixtures/attachments/valid")
        let png = try #require(
            try FileManager.default.contentsOfDirectory(atPath: scans.path).sorted().first { $0.hasSuffix(".png") })
        try FileManager.default.copyItem(atPath: scans.appendingPathComponent(png).path, toPath: cli.path("scan.png"))
        let bin = cli.path("bin")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: bin + "/rxvault", withDestinationPath: CLIHarness.binary)
        var environment = cli.environment
        environment["PATH"] = bin + ":/usr/bin:/bin"
        let ran = try CLIHarness.spawn(
            ["/bin/sh", "-e", "-c", tour], environment: environment, directory: cli.directory)
        #expect(ran.status == 0, "README tour:\n\(tour)\n\(ran)")

        // It did what its comments say: two prescriptions and the glasses' renewal (the old
        // glasses superseded by it), one attachment, a grant, a backup.
        let list = try cli.run(["list", "--format", "json"])
        let listed = try cli.json(list.stdout)["prescriptions"] as? [[String: Any]] ?? []
        #expect(listed.count == 3, "\(list)")
        #expect(listed.filter { $0["status"] as? String == "superseded" }.count == 1, "\(list)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: cli.path("backups")).count == 1)
        #expect(try cli.run(["grants"]).stdout.contains("lens-shop"))
        // The client's file opens with its key (Debian's age) and holds what it was granted only.
        let opened = try CLIHarness.spawn(
            ["/usr/bin/age", "-d", "-i", cli.path("lens-shop.key"), cli.path("for-lens-shop.age")],
            environment: cli.environment, directory: cli.directory)
        #expect(opened.status == 0, "\(opened)")
        let bundle = try cli.json(opened.stdout)
        #expect(bundle["resourceType"] as? String == "Bundle")
        let kinds = (bundle["entry"] as? [[String: Any]] ?? []).compactMap {
            ($0["resource"] as? [String: Any])?["resourceType"] as? String
        }
        #expect(kinds.filter { $0 == "VisionPrescription" }.count == 1, "only the granted glasses: \(kinds)")
        #expect(!opened.stdout.contains("Acuvue"), "the contacts prescription was not granted")
    }
}
