import Foundation
import RxTestSupport
import RxValidate
import Testing

/// Runs the validator in-process over every fixture with a known verdict: the project's own
/// (Fixtures/attachments/EXPECTED.tsv) and PngSuite (Fixtures/conformance/pngsuite/EXPECTED.tsv).
@Suite struct FixtureVerdictTests {
    static let root = Repository.root

    struct Case: CustomStringConvertible {
        let path: String
        let accept: Bool
        let reason: String
        var description: String { (path as NSString).lastPathComponent }
    }

    static func cases(table: URL, folderFor: (String, Bool) -> URL) throws -> [Case] {
        let text = try String(contentsOf: table, encoding: .utf8)
        return text.split(separator: "\n").dropFirst().compactMap { line in
            let cells = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard cells.count >= 2, cells[1] == "ACCEPT" || cells[1] == "REJECT" else { return nil }
            let accept = cells[1] == "ACCEPT"
            return Case(
                path: folderFor(cells[0], accept).appendingPathComponent(cells[0]).path, accept: accept,
                reason: cells.count > 2 ? cells[2] : "")
        }
    }

    func verdict(_ c: Case) throws -> Result<ValidatedAttachment, AttachmentRefusal> {
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: c.path)))
        do { return .success(try AttachmentValidator.validate(bytes, limits: ValidationLimits())) } catch {
            return .failure(error)
        }
    }

    @Test func projectFixtures() throws {
        let folder = Self.root.appendingPathComponent("Fixtures/attachments")
        // Paths in this table are relative to the table's folder ("valid/x.png").
        let cases = try Self.cases(table: folder.appendingPathComponent("EXPECTED.tsv")) { _, _ in folder }
        #expect(cases.filter(\.accept).count >= 20)
        #expect(cases.filter { !$0.accept }.count >= 60)
        for c in cases {
            switch (c.accept, try verdict(c)) {
            case (true, .failure(let refusal)): Issue.record("\(c) was refused: \(refusal.message)")
            case (false, .success): Issue.record("\(c) (\(c.reason)) was accepted")
            case (true, .success(let found)):
                #expect(
                    found.type
                        == (try Data(contentsOf: URL(fileURLWithPath: c.path)).starts(with: [0x89]) ? .png : .pdf),
                    "\(c)")
            case (false, .failure(let refusal)):
                #expect(!refusal.message.isEmpty)
                #expect(
                    Self.reasonMatches(c.reason, refusal),
                    "\(c) (\(c.reason)) refused as \(refusal.reason): \(refusal.message)")
            }
        }
    }

    /// The fixture table's reason keyword and the refusal agree on the kind of problem.
    static func reasonMatches(_ keyword: String, _ refusal: AttachmentRefusal) -> Bool {
        switch keyword {
        case "encrypted": return refusal.reason == .encrypted
        case "javascript", "launch", "xfa-javascript", "active-action", "rich-media", "auto-uri", "media", "uri-scheme",
            "xfa-action", "network-path", "reader-dependent", "auto-named":
            return refusal.reason == .activeContent
        case "embedded-file": return refusal.reason == .embeddedFile
        case "polyglot", "animated": return refusal.reason == .notPNGOrPDF
        case "bomb", "pixels", "chunk-too-large", "text-budget": return refusal.reason == .limit
        case "dimensions": return refusal.reason == .limit || refusal.reason == .corrupt
        case "not-png-or-pdf", "empty", "header", "signature": return refusal.reason == .notPNGOrPDF
        case "no-pages": return refusal.reason == .limit
        default: return refusal.reason == .corrupt || refusal.reason == .notPNGOrPDF
        }
    }

    @Test func pngSuite() throws {
        let folder = Self.root.appendingPathComponent("Fixtures/conformance/pngsuite")
        let table = folder.appendingPathComponent("EXPECTED.tsv")
        guard FileManager.default.fileExists(atPath: table.path) else {
            Issue.record("PngSuite not found at \(folder.path): the repository must hold Fixtures/conformance/pngsuite")
            return
        }
        let cases = try Self.cases(table: table) { _, _ in folder }
        #expect(cases.filter(\.accept).count == 161)
        #expect(cases.filter { !$0.accept }.count == 14)
        for c in cases {
            switch (c.accept, try verdict(c)) {
            case (true, .failure(let refusal)): Issue.record("PngSuite \(c) was refused: \(refusal.message)")
            case (false, .success): Issue.record("PngSuite \(c) was accepted")
            default: break
            }
        }
    }

    @Test func messagesSayWhatTheFileIs() throws {
        func message(_ bytes: [UInt8]) -> String {
            do {
                _ = try AttachmentValidator.validate(bytes, limits: ValidationLimits())
                return "accepted"
            } catch { return error.message }
        }
        #expect(message(Array("PK\u{03}\u{04}rest of a zip".utf8)) == "not a PNG or PDF (looks like a ZIP archive)")
        #expect(
            message(Array("<!DOCTYPE html><html></html>".utf8))
                == "not a PNG or PDF (looks like an HTML or XML document)")
        #expect(
            message(Array("Dear optician, my prescription is...\n".utf8)) == "not a PNG or PDF (looks like a text file)"
        )
        #expect(message([]) == "not a PNG or PDF (looks like an empty file)")
        #expect(message([0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10]) == "not a PNG or PDF (looks like a JPEG image)")
        let bomb = try Data(
            contentsOf: Self.root.appendingPathComponent("Fixtures/attachments/invalid/png-bomb-16384x16384.png"))
        #expect(message(Array(bomb)) == "image is 16384x16384: over the 50 megapixel limit")
        let crc = try Data(
            contentsOf: Self.root.appendingPathComponent("Fixtures/attachments/invalid/png-bad-idat-crc.png"))
        #expect(message(Array(crc)) == "PNG data is corrupt: CRC error in IDAT")
        let locked = try Data(
            contentsOf: Self.root.appendingPathComponent(
                "Fixtures/attachments/invalid/pdf-encrypted-aes256-user-password.pdf"))
        #expect(message(Array(locked)) == "PDF is password-protected")
        let big = [UInt8](repeating: 0x41, count: 2048)
        var limits = ValidationLimits()
        limits.maxBytes = 1024
        do {
            _ = try AttachmentValidator.validate(big, limits: limits)
            Issue.record("over the cap accepted")
        } catch {
            #expect(error.reason == .tooLarge)
            #expect(error.message == "file is 2 KiB: over the 1 KiB limit")
        }
    }

    @Test func everyTruncationOfAValidFileIsRefused() throws {
        // Cut a valid PNG and a valid PDF at every offset (PNG) or many offsets (PDF): never accepted.
        let png = Array(
            try Data(contentsOf: Self.root.appendingPathComponent("Fixtures/attachments/valid/png-adam7-rgb8.png")))
        for cut in 0..<png.count {
            #expect(throws: AttachmentRefusal.self) {
                try AttachmentValidator.validate(Array(png[0..<cut]), limits: ValidationLimits())
            }
        }
        let pdf = Array(
            try Data(
                contentsOf: Self.root.appendingPathComponent("Fixtures/attachments/valid/pdf-1.4-one-page-text.pdf")))
        for cut in stride(from: 0, to: pdf.count - 8, by: max(1, pdf.count / 60)) {
            #expect(throws: AttachmentRefusal.self, "cut at \(cut)") {
                try AttachmentValidator.validate(Array(pdf[0..<cut]), limits: ValidationLimits())
            }
        }
    }

    @Test func previewsAreValidPNGsOfTheRequestedWidth() throws {
        for name in ["png-prescription-photo-1200x1600.png", "pdf-1.4-one-page-text.pdf", "png-palette4-trns.png"] {
            let bytes = Array(
                try Data(contentsOf: Self.root.appendingPathComponent("Fixtures/attachments/valid/\(name)")))
            let preview = try PreviewRenderer.render(bytes, width: 300, limits: ValidationLimits())
            let checked = try AttachmentValidator.validate(preview, limits: ValidationLimits())
            #expect(checked.type == .png, "\(name)")
            let original = try AttachmentValidator.validate(bytes, limits: ValidationLimits())
            let expectedWidth = original.width.map { min($0, 300) } ?? 300
            #expect(checked.width == expectedWidth, "\(name)")
        }
    }
}
