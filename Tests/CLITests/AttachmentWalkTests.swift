import Foundation
import Testing

/// Every object of a PDF is walked (qpdf) and the checker runs in a seccomp sandbox.
/// Through the binary: what is refused and how the message names it, what still passes, and that
/// the sandbox really stops the child from creating a file or a socket.
@Suite struct AttachmentWalkTests {
    static func fixture(_ name: String) -> String { AttachmentTests.fixture(name) }

    func setUp() throws -> (CLIHarness, String) {
        let cli = try CLIHarness()
        try cli.initVault()
        return (cli, try cli.add(CLIHarness.glassesArguments))
    }

    @Test func whatOnlyAnObjectWalkFindsIsRefusedByName() throws {
        let (cli, rx) = try setUp()
        let cases: [(String, String)] = [
            ("invalid/pdf-xfa-javascript.pdf", "PDF contains JavaScript (a <script> element in the XFA form"),
            (
                "invalid/pdf-launch-page-aa-object-stream.pdf",
                "PDF contains a launch action that could start a program (a /Launch action in object"
            ),
            (
                "invalid/pdf-launch-annotation-aa-object-stream.pdf",
                "PDF contains a launch action that could start a program (a /Launch action in object"
            ),
            ("invalid/pdf-launch-in-earlier-revision.pdf", "PDF contains a launch action that could start a program"),
            (
                "invalid/pdf-importdata.pdf",
                "PDF contains an action that reads another file into its form (an /ImportData action"
            ),
            (
                "invalid/pdf-submitform.pdf",
                "PDF contains an action that sends form data to a server (a /SubmitForm action"
            ),
            ("invalid/pdf-gotor.pdf", "PDF contains an action that opens another PDF file (a /GoToR action"),
            ("invalid/pdf-gotoe.pdf", "PDF contains an action that opens an embedded PDF file (a /GoToE action"),
            ("invalid/pdf-richmedia.pdf", "PDF contains rich media (Flash or video) (a /RichMedia annotation"),
            ("invalid/pdf-embedded-files.pdf", "PDF has embedded files (an /EmbeddedFiles name tree"),
            (
                "invalid/pdf-file-attachment-annotation.pdf",
                "PDF has a file attached to it (a /FileAttachment annotation"
            ),
            (
                "invalid/pdf-uri-openaction.pdf",
                "PDF opens a web address by itself, without a click (a /URI action in /OpenAction"
            ),
            (
                "invalid/pdf-html-polyglot.pdf",
                "file is a PDF and an HTML page at once (it has <html> at byte 16, which makes a browser that sniffs take the file for an HTML page)"
            ),
            (
                "invalid/pdf-zip-after-eof.pdf",
                "file is a PDF and a ZIP archive at once (a ZIP reader opens the archive of 1 entry whose directory ends at byte"
            ),
            (
                "invalid/png-zip-after-iend.png",
                "file is a PNG and a ZIP archive at once (a ZIP reader opens the archive of 1 entry whose directory ends at byte 405)"
            ),
            ("invalid/pdf-page-tree-loop.pdf", "PDF is damaged")
        ]
        for (file, message) in cases {
            let r = try cli.run(["attach", rx, Self.fixture(file)])
            #expect(r.status == 65, "\(file): \(r)")
            #expect(r.stderr.contains("rxvault: error: refused: \(message)"), "\(file): \(r.stderr)")
        }
        #expect(try cli.run(["attachments", rx]).stderr.contains("no attachments"))
    }

    @Test func refusalsSayHowToGetAnAcceptableFile() throws {
        let (cli, rx) = try setUp()
        let damaged = try cli.run(["attach", rx, Self.fixture("invalid/pdf-bad-xref-offsets.pdf")])
        #expect(damaged.status == 65)
        #expect(
            damaged.stderr.contains("rxvault: hint: to repair it, print it to a new PDF, or run `qpdf in.pdf out.pdf`"),
            "\(damaged.stderr)")
        let active = try cli.run(["attach", rx, Self.fixture("invalid/pdf-embedded-files.pdf")])
        #expect(
            active.stderr.contains("rxvault: hint: to keep only the pages, print it to a new PDF"), "\(active.stderr)")
    }

    @Test func linksObjectStreamsAndUpdatesStillPass() throws {
        let (cli, rx) = try setUp()
        for file in [
            "valid/pdf-uri-link.pdf", "valid/pdf-goto-link.pdf", "valid/pdf-1.5-object-streams-incremental.pdf",
            "valid/pdf-1.7-object-streams.pdf", "valid/pdf-1.4-incremental-update.pdf"
        ] {
            let r = try cli.run(["attach", rx, Self.fixture(file)])
            #expect(r.status == 0, "\(file): \(r)")
            #expect(!r.stderr.contains("warning"), "\(file): \(r.stderr)")
        }
    }

    @Test func statusSaysWhichSandboxTheCheckerRunsIn() throws {
        let (cli, _) = try setUp()
        let text = try cli.run(["status"])
        #expect(
            text.stdout.split(separator: "\n").contains {
                $0.hasPrefix("file checker ") && $0.hasSuffix(" seccomp sandbox and resource limits")
            },
            "\(text.stdout)")
        let json = try cli.json(try cli.run(["status", "--format", "json"]).stdout)
        #expect(json["attachmentSandbox"] as? String == "seccomp")
    }

    /// What an exploited parser would do: leave a file behind, or reach the network. Resource
    /// limits alone let the child create the (empty) file; the seccomp filter refuses the open.
    @Test func theSandboxStopsTheChildFromCreatingFilesOrSockets() throws {
        let (cli, rx) = try setUp()
        let target = cli.path("escaped-by-the-parser")
        let create = try cli.run(
            ["attach", rx, AttachmentTests.photo], environment: ["RXVAULT_PARSER_FAULT": "create-file:\(target)"])
        #expect(create.status == 65, "\(create)")
        #expect(create.stderr.contains("fault test: could not create"), "\(create.stderr)")
        #expect(create.stderr.contains("Operation not permitted"), "\(create.stderr)")
        #expect(!FileManager.default.fileExists(atPath: target))

        let socket = try cli.run(["attach", rx, AttachmentTests.photo], environment: ["RXVAULT_PARSER_FAULT": "socket"])
        #expect(socket.status == 65, "\(socket)")
        #expect(
            socket.stderr.contains("fault test: could not open a socket: Operation not permitted"), "\(socket.stderr)")
    }

    /// Where the kernel refuses the filter the checker still runs, under its resource limits, and
    /// both `attach` and `status` say so.
    @Test func withoutTheSandboxTheCheckerWarns() throws {
        let (cli, rx) = try setUp()
        let attach = try cli.run(
            ["attach", rx, AttachmentTests.photo], environment: ["RXVAULT_PARSER_FAULT": "no-sandbox"])
        #expect(attach.status == 0, "\(attach)")
        #expect(
            attach.stderr.contains(
                "rxvault: warning: the file checker ran with resource limits only (no sandbox: turned off by RXVAULT_PARSER_FAULT for a test)"
            ),
            "\(attach.stderr)")
        let status = try cli.run(["status"], environment: ["RXVAULT_PARSER_FAULT": "no-sandbox"])
        #expect(status.stdout.contains("resource limits only (no sandbox: turned off"), "\(status.stdout)")
        let json = try cli.json(
            try cli.run(["status", "--format", "json"], environment: ["RXVAULT_PARSER_FAULT": "no-sandbox"]).stdout)
        #expect(json["attachmentSandbox"] as? String == "rlimits-only")
    }

    /// The fault hooks are compiled into debug builds only: the release binary a user installs
    /// (the one `scripts/test` runs) keeps its sandbox whatever RXVAULT_PARSER_FAULT says, warns
    /// of nothing, and its write path takes no pause.
    @Test func theReleaseBinaryIgnoresTheFaultHooks() throws {
        let (cli, rx) = try setUp()
        let release = CLIHarness.binary
        try #require(
            release != CLIHarness.builtBesideTests,
            "run with RXVAULT_BIN set to the release binary (scripts/test does) to test it")
        var env = cli.environment
        env["RXVAULT_PARSER_FAULT"] = "no-sandbox"
        env["RXVAULT_TEST_WRITE_PAUSE_MS"] = "60000"
        let attach = try CLIHarness.spawn(
            [release, "attach", rx, AttachmentTests.photo], environment: env, directory: cli.directory, timeout: 30)
        #expect(attach.status == 0, "\(attach)")
        #expect(!attach.stderr.contains("warning"), "\(attach.stderr)")
        #expect(!attach.stderr.contains("pausing"), "\(attach.stderr)")
        let status = try CLIHarness.spawn(
            [release, "status", "--format", "json"], environment: env, directory: cli.directory)
        #expect(try cli.json(status.stdout)["attachmentSandbox"] as? String == "seccomp", "\(status)")
        // The same hook still works where it belongs: the debug build beside the tests.
        let debug = try CLIHarness.spawn(
            [CLIHarness.builtBesideTests, "status", "--format", "json"], environment: env, directory: cli.directory)
        #expect(try cli.json(debug.stdout)["attachmentSandbox"] as? String == "rlimits-only", "\(debug)")
    }

    /// Previews run in the same sandbox: rendering a PDF (fontconfig reads its files) still works.
    @Test func previewsWorkInsideTheSandbox() throws {
        let (cli, rx) = try setUp()
        let id = try cli.run(["attach", rx, Self.fixture("valid/pdf-1.4-one-page-text.pdf")]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let out = cli.path("preview.png")
        let preview = try cli.run(["preview", rx, id, "--out", out])
        #expect(preview.status == 0, "\(preview)")
        #expect(FileManager.default.contents(atPath: out)?.starts(with: [0x89, 0x50, 0x4E, 0x47]) == true)
    }
}
