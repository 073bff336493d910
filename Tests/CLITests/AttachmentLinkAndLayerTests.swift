import Foundation
import Testing

/// Through the binary: PDFs whose links lead to files by the document's base address or a
/// network path, whose layers show one reader other numbers than another, or that print by
/// themselves are refused, each with its rule's message; a web base address and layers that are
/// all on still pass.
@Suite struct AttachmentLinkAndLayerTests {
    static let opensFiles = "PDF has a link that opens a file on the reader's machine or network"
    static let differentContent = "PDF shows different content to different readers"

    @Test func eachClassIsRefusedWithItsRulesMessage() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let rx = try cli.add(CLIHarness.glassesArguments)
        let cases: [(String, String)] = [
            ("pdf-base-uri-file.pdf", "\(Self.opensFiles) (a file: /URI /Base in object 1)"),
            ("pdf-base-uri-smb.pdf", "\(Self.opensFiles) (a smb: /URI /Base in object 1)"),
            ("pdf-base-uri-javascript.pdf", "PDF contains JavaScript (a javascript: /URI /Base in object 1)"),
            ("pdf-network-path-link.pdf", "\(Self.opensFiles) (a //host/... network-path link in object "),
            ("pdf-backslash-link.pdf", "\(Self.opensFiles) (a \\\\host\\... network-path link in object "),
            (
                "pdf-ocg-off-layer.pdf",
                "\(Self.differentContent) (a layer hidden in the default view (/OFF) in object 1)"
            ),
            (
                "pdf-ocg-alternate-config.pdf",
                "\(Self.differentContent) (another configuration of its layers (/Configs)"
            ),
            (
                "pdf-ocg-print-usage.pdf",
                "\(Self.differentContent) (a layer shown or hidden by how the file is read (/Usage /Print)"
            ),
            (
                "pdf-ocg-print-autostate.pdf",
                "\(Self.differentContent) (layers switched when the file is viewed, printed or exported (/AS in the default view)"
            ),
            (
                "pdf-setocgstate-openaction.pdf",
                "\(Self.differentContent) (a /SetOCGState action, which switches layers,"
            ),
            (
                "pdf-named-print-openaction.pdf",
                "PDF prints by itself, without a click (a /Named /Print action in /OpenAction, in object 1)"
            )
        ]
        for (file, message) in cases {
            let r = try cli.run(["attach", rx, AttachmentTests.fixture("invalid/" + file)])
            #expect(r.status == 65, "\(file): \(r)")
            #expect(r.stderr.contains("rxvault: error: refused: \(message)"), "\(file): \(r.stderr)")
            #expect(r.stderr.contains("rxvault: hint: to keep only the pages, print it to a new PDF"), "\(file)")
        }
        #expect(try cli.run(["attachments", rx]).stderr.contains("no attachments"))
        for file in ["valid/pdf-base-uri-https.pdf", "valid/pdf-ocg-all-layers-on.pdf"] {
            let r = try cli.run(["attach", rx, AttachmentTests.fixture(file)])
            #expect(r.status == 0, "\(file): \(r)")
            #expect(!r.stderr.contains("warning"), "\(file): \(r.stderr)")
        }
    }
}
