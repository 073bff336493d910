import Foundation
import Testing

/// The hidden `_parse-untrusted` command (the isolated file checker rxvault runs as its own
/// child) takes its limits on the command line. A negative, zero or absurd one is refused (64)
/// before it is applied: `--cpu-seconds=-1` used to trap (SIGILL) converting it to an rlimit.
@Suite struct ParserChildArgumentTests {
    /// rxvault's own limits (ValidationLimits' defaults), as the parent sends them.
    /// As JSON text, so values beyond what JSONSerialization keeps exact (UInt64.max) go as written.
    static let limits: [(String, String)] = [
        ("maxBytes", "33554432"), ("maxImageSide", "16384"), ("maxPixels", "50000000"), ("maxChunkBytes", "8388608"),
        ("maxPages", "100"),
        ("maxPagePoints", "14400"), ("checkRenderPixels", "200"), ("maxPDFObjects", "200000"),
        ("maxPDFRevisions", "64"),
        ("maxPDFNesting", "100"), ("maxPDFStreamBytes", "268435456"), ("maxPDFDecodedBytes", "1073741824")
    ]

    static func arguments(
        mode: String = "validate", cpu: String = "20", memory: String = "2147483648", width: String = "300",
        limit: (String, String)? = nil
    ) throws -> [String] {
        let json =
            "{"
            + Self.limits.map { key, value in "\"\(key)\": \(key == limit?.0 ? limit!.1 : value)" }.joined(
                separator: ", ") + "}"
        return [
            "_parse-untrusted", "--mode", mode, "--limits", json, "--preview-width=\(width)", "--cpu-seconds=\(cpu)",
            "--memory-bytes=\(memory)"
        ]
    }

    @Test(arguments: [
        ("cpu", "-1"), ("cpu", "0"), ("cpu", "9223372036854775807"), ("memory", "-5"), ("memory", "0"),
        ("memory", "9223372036854775807"),
        ("width", "0"), ("width", "4294967295")
    ])
    func absurdResourceLimitsAreRefused(which: String, value: String) throws {
        let cli = try CLIHarness()
        let arguments = try Self.arguments(
            mode: which == "width" ? "preview" : "validate", cpu: which == "cpu" ? value : "20",
            memory: which == "memory" ? value : "2147483648", width: which == "width" ? value : "300")
        let r = try cli.run(arguments, stdinFile: AttachmentTests.photo)
        #expect(!r.signalled && r.status == 64, "\(which) \(value): \(r)")
        #expect(r.stderr.hasPrefix("rxvault: error: _parse-untrusted: "), "\(which) \(value): \(r)")
        #expect(r.stdout.isEmpty, "the child ran: \(r)")
    }

    @Test(arguments: [
        ("maxBytes", "-1"), ("maxBytes", "9223372036854775807"), ("maxImageSide", "0"),
        ("maxPixels", "18446744073709551615"),
        ("maxChunkBytes", "-1"), ("maxPages", "-1"), ("maxPagePoints", "1e308"), ("maxPagePoints", "-1.5"),
        ("checkRenderPixels", "2147483647"), ("maxPDFObjects", "0"), ("maxPDFRevisions", "-1"),
        ("maxPDFNesting", "2147483647"), ("maxPDFStreamBytes", "0"), ("maxPDFDecodedBytes", "18446744073709551615")
    ])
    func absurdValidationLimitsAreRefused(key: String, value: String) throws {
        let cli = try CLIHarness()
        let r = try cli.run(try Self.arguments(limit: (key, value)), stdinFile: AttachmentTests.photo)
        #expect(!r.signalled && r.status == 64, "\(key) \(value): \(r)")
        #expect(r.stderr.contains("--limits: \(key)"), "\(key) \(value): \(r)")
        #expect(r.stdout.isEmpty, "the child ran: \(r)")
    }

    /// What rxvault itself sends still gets a verdict; tighter limits are fine.
    @Test func rxvaultsOwnLimitsStillWork() throws {
        let cli = try CLIHarness()
        for arguments in [
            try Self.arguments(), try Self.arguments(limit: ("maxPages", "1")),
            try Self.arguments(mode: "preview", width: "16")
        ] {
            let r = try cli.run(arguments, stdinFile: AttachmentTests.photo)
            #expect(r.status == 0 && r.stdout.hasPrefix("{"), "\(arguments): \(r)")
            #expect(!r.stdout.contains("refusal"), "\(arguments): \(r)")
        }
    }
}
