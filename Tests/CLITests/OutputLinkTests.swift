import Foundation
import Testing

/// A symbolic link where an output file goes is never written through (WriteTarget,
/// SafeFileWriter): without --force it is refused (73) and nothing is written anywhere, dangling
/// or not; with --force the link itself is replaced by the file, and what it pointed to is left
/// as it was. A vault's own path (`restore`, `init`) still follows its link: RestoreTargetTests.
@Suite struct OutputLinkTests {
    /// Each command that writes an output file the user names, with `OUT` where the path goes,
    /// and the file name's ending the command needs (`trend` draws by extension).
    static func writers(_ id: String) -> [(arguments: [String], ending: String)] {
        [
            (["export", "--format", "json", "--out", "OUT"], ".json"),
            (["export", "--format", "pdf", "--out", "OUT"], ".pdf"),
            (["extract", id, "photo.png", "--out", "OUT"], ".png"),
            (["preview", id, "photo.png", "--out", "OUT"], ".png"),
            (["backup", "OUT"], ".age"),
            (["trend", "Quintessa Marlowe", "--out", "OUT"], ".svg"),
            (["client", "add", "shop", "--generate", "--identity-out", "OUT"], ".key")
        ]
    }

    static let untouched = "the file the link points to\n"

    struct Links {
        let link: String
        let linked: String
        let dangling: String
        let missing: String
    }

    /// A link to an existing file and a dangling one, for writer number `n`.
    static func links(_ cli: CLIHarness, _ n: Int, ending: String) throws -> Links {
        try FileManager.default.createDirectory(atPath: cli.path("elsewhere"), withIntermediateDirectories: true)
        let linked = try cli.write(untouched, to: "elsewhere/file-\(n)\(ending)")
        let links = Links(
            link: cli.path("link-\(n)\(ending)"), linked: linked, dangling: cli.path("dangling-\(n)\(ending)"),
            missing: cli.path("elsewhere/missing-\(n)\(ending)"))
        try FileManager.default.createSymbolicLink(atPath: links.link, withDestinationPath: linked)
        try FileManager.default.createSymbolicLink(atPath: links.dangling, withDestinationPath: links.missing)
        return links
    }

    static func kind(_ path: String) -> mode_t {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_mode & S_IFMT : 0
    }

    func setUp() throws -> (CLIHarness, String) {
        let cli = try CLIHarness()
        try cli.initVault()
        let id = try cli.add(CLIHarness.glassesArguments)
        #expect(try cli.run(["attach", id, AttachmentTests.photo, "--name", "photo.png"]).status == 0)
        return (cli, id)
    }

    static func with(_ arguments: [String], _ out: String) -> [String] { arguments.map { $0 == "OUT" ? out : $0 } }

    @Test func aLinkIsRefusedWithoutForceAndNothingIsWrittenThroughIt() throws {
        let (cli, id) = try setUp()
        for (n, writer) in Self.writers(id).enumerated() {
            let links = try Self.links(cli, n, ending: writer.ending)
            let r = try cli.run(Self.with(writer.arguments, links.link))
            #expect(r.status == 73, "\(writer.arguments): \(r)")
            #expect(
                r.stderr.contains(
                    "rxvault: error: \(links.link) is a symbolic link; rxvault does not write through links"),
                "\(writer.arguments): \(r.stderr)")
            #expect(r.stderr.contains("rxvault: hint: pass --force to replace the link itself"), "\(r.stderr)")
            #expect(try String(contentsOfFile: links.linked, encoding: .utf8) == Self.untouched, "\(writer.arguments)")
            #expect(Self.kind(links.link) == S_IFLNK)

            let dangling = try cli.run(Self.with(writer.arguments, links.dangling))
            #expect(dangling.status == 73, "\(writer.arguments): \(dangling)")
            #expect(
                dangling.stderr.contains(
                    "\(links.dangling) is a symbolic link to a file that does not exist; rxvault does not write through links"
                ), "\(writer.arguments): \(dangling.stderr)")
            #expect(!FileManager.default.fileExists(atPath: links.missing), "\(writer.arguments) created the target")
            #expect(Self.kind(links.dangling) == S_IFLNK)
        }
        // No client was registered with a key nobody holds.
        #expect(!(try cli.run(["client", "list"]).stdout.contains("shop")))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: cli.directory.path).filter {
            $0.contains(".rxvault-")
        }
        #expect(leftovers.isEmpty, "temporary files were left: \(leftovers)")
    }

    @Test func forceReplacesTheLinkNotWhatItPointsTo() throws {
        let (cli, id) = try setUp()
        // `client add` has no --force: a new identity never replaces anything.
        for (n, writer) in Self.writers(id).enumerated() where writer.arguments[0] != "client" {
            let links = try Self.links(cli, n, ending: writer.ending)
            for out in [links.link, links.dangling] {
                let r = try cli.run(Self.with(writer.arguments, out) + ["--force"])
                #expect(r.status == 0, "\(writer.arguments) \(out) --force: \(r)")
                #expect(Self.kind(out) == S_IFREG, "\(writer.arguments): \(out) is still a link")
                let mode = try FileManager.default.attributesOfItem(atPath: out)[.posixPermissions] as? Int
                #expect(mode == 0o600, "\(writer.arguments)")
            }
            #expect(try String(contentsOfFile: links.linked, encoding: .utf8) == Self.untouched, "\(writer.arguments)")
            #expect(!FileManager.default.fileExists(atPath: links.missing), "\(writer.arguments) created the target")
        }
        // What was written is whole: the backup verifies, the export reads as one.
        #expect(try cli.run(["backup", "verify", cli.path("link-4.age")]).status == 0)
        #expect(try String(contentsOfFile: cli.path("link-0.json"), encoding: .utf8).contains("rxvault/export/v1"))
    }

    /// A link to a folder is a folder, as the folder itself is: refused, with or without --force.
    @Test func aLinkToAFolderIsRefusedAsAFolder() throws {
        let (cli, _) = try setUp()
        try FileManager.default.createDirectory(atPath: cli.path("folder"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: cli.path("folder-link"), withDestinationPath: "folder")
        for force in [[], ["--force"]] {
            let r = try cli.run(["export", "--format", "json", "--out", cli.path("folder-link")] + force)
            #expect(r.status == 73 && r.stderr.contains("is a directory"), "\(force): \(r)")
        }
        #expect(Self.kind(cli.path("folder-link")) == S_IFLNK)
        #expect(try FileManager.default.contentsOfDirectory(atPath: cli.path("folder")).isEmpty)
    }
}
