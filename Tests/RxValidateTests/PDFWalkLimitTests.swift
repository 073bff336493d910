import Foundation
import RxValidate
import Testing

/// The object walk's bounds (ValidationLimits): each one refuses a file that goes over it, with a
/// message saying which, and the defaults accept every valid fixture (FixtureVerdictTests).
@Suite struct PDFWalkLimitTests {
    static func fixture(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: FixtureVerdictTests.root.appendingPathComponent("Fixtures/attachments/\(name)")))
    }

    func refusal(_ bytes: [UInt8], _ limits: ValidationLimits) -> AttachmentRefusal? {
        do {
            _ = try AttachmentValidator.validate(bytes, limits: limits)
            return nil
        } catch { return error }
    }

    @Test func decodingStopsAtTheStreamLimit() throws {
        var limits = ValidationLimits()
        limits.maxPDFStreamBytes = 64
        let found = refusal(try Self.fixture("valid/pdf-1.5-flate-content.pdf"), limits)
        #expect(found?.reason == .limit)
        #expect(
            found?.message.hasPrefix("PDF has a stream that decompresses to more than 64 bytes (the stream in object")
                == true, "\(String(describing: found))")
    }

    @Test func decodingStopsAtTheWholeFileBudget() throws {
        var limits = ValidationLimits()
        limits.maxPDFDecodedBytes = 2000
        let found = refusal(try Self.fixture("valid/pdf-1.4-three-pages.pdf"), limits)
        #expect(found?.reason == .limit)
        #expect(
            found?.message == "PDF streams decompress to more than 2000 bytes in all", "\(String(describing: found))")
    }

    @Test func objectCountIsBounded() throws {
        var limits = ValidationLimits()
        limits.maxPDFObjects = 10
        let found = refusal(try Self.fixture("valid/pdf-1.7-object-streams.pdf"), limits)
        #expect(found?.message == "PDF has more than 10 objects")
    }

    @Test func everyRevisionCountsAgainstTheUpdateLimit() throws {
        var limits = ValidationLimits()
        limits.maxPDFRevisions = 1
        let found = refusal(try Self.fixture("valid/pdf-1.4-incremental-update.pdf"), limits)
        #expect(found?.message == "PDF has over 1 revisions (the file and its incremental updates)")
        limits.maxPDFRevisions = 2
        #expect(refusal(try Self.fixture("valid/pdf-1.4-incremental-update.pdf"), limits) == nil)
    }

    @Test func nestingIsBounded() throws {
        var limits = ValidationLimits()
        limits.maxPDFNesting = 2
        let found = refusal(try Self.fixture("valid/pdf-1.4-one-page-text.pdf"), limits)
        #expect(found?.reason == .limit)
        #expect(
            found?.message.hasPrefix("PDF nests arrays or dictionaries more than 2 deep") == true,
            "\(String(describing: found))")
    }

    /// A classic PDF from object bodies (object n is bodies[n - 1]; 1 is the catalog).
    static func pdf(_ bodies: [String]) -> [UInt8] { pdf(bytes: bodies.map { Array($0.utf8) }) }

    static func pdf(bytes bodies: [[UInt8]]) -> [UInt8] {
        var out = Array("%PDF-1.4\n".utf8)
        var offsets: [Int] = []
        for (index, body) in bodies.enumerated() {
            offsets.append(out.count)
            out += Array("\(index + 1) 0 obj\n".utf8) + body + Array("\nendobj\n".utf8)
        }
        let xref = out.count
        out += Array("xref\n0 \(bodies.count + 1)\n0000000000 65535 f \n".utf8)
        for offset in offsets {
            out += Array((String(repeating: "0", count: 10 - String(offset).count) + "\(offset) 00000 n \n").utf8)
        }
        out += Array("trailer\n<< /Size \(bodies.count + 1) /Root 1 0 R >>\nstartxref\n\(xref)\n%%EOF\n".utf8)
        return out
    }

    /// /Next arrays whose entries share their targets: 2^24 paths through 24 harmless actions.
    /// Each action is checked once, so this takes no time and the file is accepted; with a /URI
    /// at the end it is refused.
    @Test func sharedActionChainsAreCheckedOnce() throws {
        let levels = 24
        var bodies = [
            "<< /Type /Catalog /Pages 2 0 R /OpenAction 4 0 R >>",
            "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>"
        ]
        for level in 0..<levels {
            let next = 4 + level + 1
            bodies.append("<< /S /GoTo /D [3 0 R /Fit] /Next [\(next) 0 R \(next) 0 R] >>")
        }
        let started = Date()
        let harmless = refusal(Self.pdf(bodies + ["<< /S /GoTo /D [3 0 R /Fit] >>"]), ValidationLimits())
        #expect(Date().timeIntervalSince(started) < 5)
        #expect(harmless == nil, "\(String(describing: harmless))")
        let found = refusal(Self.pdf(bodies + ["<< /S /URI /URI (https://example.invalid/) >>"]), ValidationLimits())
        #expect(found?.message.hasPrefix("PDF opens a web address by itself") == true, "\(String(describing: found))")
    }

    /// One 4 MiB XFA stream (run-length encoded into 64 KiB) named 4000 times in the /XFA array:
    /// decoded once, not 4000 times (16 GB of output), and counted in the file's budget.
    @Test func anXFAStreamNamedManyTimesIsDecodedOnce() throws {
        var run = [UInt8]()
        for _ in 0..<32768 { run += [0x81, 0x20] } // 128 spaces each
        run.append(0x80)
        let refs = String(repeating: "(template) 4 0 R ", count: 4000)
        var bodies = [
            "<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [] /XFA [\(refs)] >> >>",
            "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>"
        ].map { Array($0.utf8) }
        bodies.append(
            Array("<< /Length \(run.count) /Filter /RunLengthDecode >>\nstream\n".utf8) + run
                + Array("\nendstream".utf8))
        let started = Date()
        let verdict = refusal(Self.pdf(bytes: bodies), ValidationLimits())
        #expect(Date().timeIntervalSince(started) < 5)
        #expect(verdict == nil, "\(String(describing: verdict))")
        var tight = ValidationLimits()
        tight.maxPDFDecodedBytes = 6 << 20 // the walk's own decode (4 MiB) and the XFA check's (4 MiB)
        #expect(refusal(Self.pdf(bytes: bodies), tight)?.message == "PDF streams decompress to more than 6 MiB in all")
    }

    /// An XFA script behind /RunLengthDecode, in 3-byte literal runs so the raw bytes never spell
    /// "<script": qpdf's general-purpose decode level leaves RunLength alone, so the walk decodes
    /// at the "specialized" level.
    @Test func anXFAScriptBehindRunLengthIsFound() throws {
        let xml = Array(
            "<template><subform><event><script contentType=\"application/x-javascript\">app.alert(1)</script></event></subform></template>"
                .utf8)
        var run = [UInt8]()
        for start in stride(from: 0, to: xml.count, by: 3) {
            let piece = xml[start..<min(start + 3, xml.count)]
            run += [UInt8(piece.count - 1)] + piece
        }
        run.append(0x80)
        #expect(firstIndex(of: Array("<script".utf8), in: run) == nil)
        let bodies =
            [
                "<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [] /XFA 4 0 R >> >>",
                "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>"
            ].map { Array($0.utf8) }
            + [
                Array("<< /Length \(run.count) /Filter /RunLengthDecode >>\nstream\n".utf8) + run
                    + Array("\nendstream".utf8)
            ]
        let found = refusal(Self.pdf(bytes: bodies), ValidationLimits())
        #expect(
            found?.message == "PDF contains JavaScript (a <script> element in the XFA form, in object 4)",
            "\(String(describing: found))")
    }

    func firstIndex(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        return (0...(haystack.count - needle.count)).first { Array(haystack[$0..<$0 + needle.count]) == needle }
    }

    /// A /Launch that only an earlier revision holds: the walk reads that revision too.
    @Test func earlierRevisionsAreWalked() throws {
        let found = refusal(try Self.fixture("invalid/pdf-launch-in-earlier-revision.pdf"), ValidationLimits())
        #expect(found?.reason == .activeContent)
        #expect(found?.message.contains("/Launch") == true)
    }
}
