import Foundation
import Testing
import RxValidate

/// The object walk's bounds (ValidationLimits): each one refuses a file that goes over it, with a
/// message saying which, and the defaults accept every valid fixture (FixtureVerdictTests).
@Suite struct PDFWalkLimitTests {
    static func fixture(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: FixtureVerdictTests.root.appendingPathComponent("Fixtures/attachments/\(name)")))
    }

    func refusal(_ bytes: [UInt8], _ limits: ValidationLimits) -> AttachmentRefusal? {
        do { _ = try AttachmentValidator.validate(bytes, limits: limits); return nil } catch { return error }
    }

    @Test func decodingStopsAtTheStreamLimit() throws {
        var limits = ValidationLimits()
        limits.maxPDFStreamBytes = 64
        let found = refusal(try Self.fixture("valid/pdf-1.5-flate-content.pdf"), limits)
        #expect(found?.reason == .limit)
        #expect(found?.message.hasPrefix("PDF has a stream that decompresses to more than") == true, "\(String(describing: found))")
    }

    @Test func decodingStopsAtTheWholeFileBudget() throws {
        var limits = ValidationLimits()
        limits.maxPDFDecodedBytes = 2000
        let found = refusal(try Self.fixture("valid/pdf-1.4-three-pages.pdf"), limits)
        #expect(found?.reason == .limit)
        #expect(found?.message.hasPrefix("PDF streams decompress to more than") == true, "\(String(describing: found))")
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
        #expect(found?.message.hasPrefix("PDF nests arrays or dictionaries more than 2 deep") == true, "\(String(describing: found))")
    }

    /// A /Launch that only an earlier revision holds: the walk reads that revision too.
    @Test func earlierRevisionsAreWalked() throws {
        let found = refusal(try Self.fixture("invalid/pdf-launch-in-earlier-revision.pdf"), ValidationLimits())
        #expect(found?.reason == .activeContent)
        #expect(found?.message.contains("/Launch") == true)
    }
}
