import Foundation
import RxTestSupport
import Testing

@testable import RxValidate

/// The polyglot rules by class (ActiveMarkup, ZipDirectory, PNGContent), on bytes made here:
/// each rule finds what it covers however it is written, and finds nothing in data that merely
/// has the letters (hex strings, XHTML form values), and markup that chance spelled in a PNG's
/// compressed image data is cut apart instead of refused (PNGImageDataSplit).
@Suite struct StructuralPolyglotTests {
    func markup(_ text: String, sniffed: Int = 0) -> ActiveMarkup.Found? {
        ActiveMarkup.find(in: Array(text.utf8), sniffedLength: sniffed)
    }

    @Test func htmlThatActsIsFoundHoweverItIsWritten() {
        let acting: [(String, String)] = [
            ("%<img src=x onerror=alert(1)>", "<img onerror=...>"),
            ("(<IMG SRC=x\tOnError = \"alert(1)\">)", "<img onerror=...>"),
            ("<meta http-equiv=refresh content=0;url=https://example.invalid/>", "<meta http-equiv=...>"),
            ("<svg/onload=alert(1)>", "<svg>"),
            ("<ScRiPt>alert(1)</script>", "<script>"),
            ("<iframe srcdoc='x'>", "<iframe>"),
            ("<a href=\"&#106;ava&#x09;script&colon;alert(1)\">", "<a href=javascript:...>"),
            ("<a href=\"  &#0000106;avascript:x\">", "<a href=javascript:...>"),
            ("<form action=vbscript:x>", "<form action=vbscript:...>"),
            ("<a href='data:text/html,<b>x</b>'>", "<a href=data:text/html...>"),
            ("<!-- x --!><img src=x onerror=y>", "<img onerror=...>"),
            ("<body onload=alert(1)>", "<body onload=...>")
        ]
        for (text, what) in acting {
            #expect(markup(text)?.what == what, "\(text)")
        }
    }

    @Test func markupThatDoesNothingByItselfIsLeftAlone() {
        let inert = [
            "<< /Type /Page /Parent 2 0 R >>", "/ID [<a0b1c2d3e4f5> <A0B1C2D3E4F5>]", "<ab cd ef>",
            "<?xml version=\"1.0\"?><body xmlns=\"http://www.w3.org/1999/xhtml\"><p dir=\"ltr\" style=\"font-size:10pt\">Sam</p></body>",
            "<template xmlns=\"http://www.xfa.org/schema/xfa-template/3.3/\"><subform name=\"f\"/></template>",
            "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF/></x:xmpmeta>", "<a href=\"https://example.org/\">x</a>",
            "<p class=one>text</p>", "</script>"
        ]
        for text in inert { #expect(markup(text) == nil, "\(text)") }
    }

    @Test func theSniffingRuleReadsOnlyTheStartAndSkipsHexStrings() {
        #expect(markup("%PDF-1.4\n%<html>\n", sniffed: 1445)?.sniffed == true)
        #expect(markup("%PDF-1.4\n%<!-- x -->\n", sniffed: 1445)?.what == "<!-->")
        #expect(markup("%PDF-1.4\n<a 0b 1c>\n", sniffed: 1445) == nil)
        let late = String(repeating: " ", count: 1500) + "<html>"
        #expect(markup(late, sniffed: 1445) == nil)
        #expect(ActiveMarkup.pdfHeaderLength(Array("%PDF-1.4\n%\u{e2}\n1 0 obj\n<html>".utf8)) == 17)
    }

    /// Random bytes spell acting markup rarely (about once in 8 billion bytes by the rules'
    /// arithmetic; none in 1 GiB counted once), so 8 MiB of them hold none here; the PNG case
    /// below covers what chance does spell.
    @Test func randomBytesAreNotTakenForMarkupOrAnArchive() {
        var generator = SeededGenerator(seed: 23)
        for _ in 0..<4 {
            let bytes = (0..<(2 << 20)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(ActiveMarkup.find(in: bytes) == nil)
            #expect(ZipDirectory.find(in: bytes) == nil)
        }
    }

    @Test func aZipIsFoundByItsDirectoryAnywhereAndNotByItsSignatureAlone() throws {
        let zip = Array(
            try Data(contentsOf: URL(fileURLWithPath: Repository.fixture("attachments/invalid/pdf-really-zip.pdf"))))
        let inside = Array("%PDF-1.4\nstream\n".utf8) + zip + Array("\nendstream\ntrailer\n%%EOF\n".utf8)
        let found = ZipDirectory.find(in: inside)
        #expect(found?.entries == 1)
        // The end record's signature without a central directory where it points: chance bytes.
        var chance =
            Array("data".utf8) + [0x50, 0x4B, 0x05, 0x06] + [UInt8](repeating: 1, count: 18) + Array("more".utf8)
        #expect(ZipDirectory.find(in: chance) == nil)
        // An empty archive lists nothing.
        chance = [0x50, 0x4B, 0x05, 0x06] + [UInt8](repeating: 0, count: 18)
        #expect(ZipDirectory.find(in: chance) == nil)
    }

    @Test func keptMetadataIsCheckedAndDroppedMetadataIsGone() throws {
        let bytes = Array(
            try Data(
                contentsOf: URL(fileURLWithPath: Repository.fixture("attachments/valid/png-exif-text-private.png"))))
        let dropped = try AttachmentValidator.check(bytes, limits: ValidationLimits())
        #expect(dropped.droppedMetadata == ["eXIf", "tEXt x2", "tIME", "prVt"])
        #expect(PNGChunks.read(dropped.stored).map(\.type) == ["IHDR", "IDAT", "IEND"])
        #expect(try AttachmentValidator.validate(dropped.stored, limits: ValidationLimits()).type == .png)
        #expect(throws: AttachmentRefusal.self) {
            try AttachmentValidator.check(bytes, limits: ValidationLimits(), keepMetadata: true)
        }
        let plain = Array(
            try Data(contentsOf: URL(fileURLWithPath: Repository.fixture("attachments/valid/png-ancillary-chunks.png")))
        )
        let kept = try AttachmentValidator.check(plain, limits: ValidationLimits(), keepMetadata: true)
        #expect(kept.stored == plain && kept.droppedMetadata.isEmpty)
        let stripped = try AttachmentValidator.check(plain, limits: ValidationLimits())
        #expect(PNGChunks.read(stripped.stored).map(\.type) == ["IHDR", "gAMA", "pHYs", "IDAT", "IEND"])
    }

    /// A PNG of noise with markup in its image data, as chance (or a stored deflate block) puts
    /// it: what is stored has the same image data cut into more IDAT chunks, and no markup; a
    /// file that needs more cuts than chance ever makes is refused as before.
    @Test func markupThatChanceSpelledInImageDataIsCutApartNotRefused() throws {
        var generator = SeededGenerator(seed: 7)
        var rows = (0..<16).map { _ in (0..<64).map { _ in UInt8.random(in: 0...255, using: &generator) } }
        rows[0].replaceSubrange(3..<6, with: Array("<b ".utf8)) // the sniffed start
        rows[9].replaceSubrange(10..<31, with: Array("<svg onload=alert(1)>".utf8))
        let png = storedPNG(width: 64, rows: rows)
        #expect(ActiveMarkup.find(in: png)?.sniffed == true)

        let checked = try AttachmentValidator.check(png, limits: ValidationLimits())
        #expect((2...PNGImageDataSplit.maxSplits).contains(checked.imageDataSplits), "\(checked.imageDataSplits)")
        #expect(ActiveMarkup.find(in: checked.stored) == nil)
        #expect(
            pngChunkTypes(checked.stored)
                == ["IHDR"] + Array(repeating: "IDAT", count: checked.imageDataSplits + 1) + ["IEND"])
        #expect(pngImageData(checked.stored) == pngImageData(png))
        #expect(checked.stored.count == png.count + 12 * checked.imageDataSplits)
        let again = try AttachmentValidator.check(checked.stored, limits: ValidationLimits())
        #expect(again.stored == checked.stored && again.imageDataSplits == 0)
        // Kept metadata or not, the image data is cut the same way.
        let kept = try AttachmentValidator.check(png, limits: ValidationLimits(), keepMetadata: true)
        #expect(kept.stored == checked.stored)

        for row in 2..<14 { rows[row].replaceSubrange(0..<5, with: Array("<svg>".utf8)) }
        let made = storedPNG(width: 64, rows: rows)
        #expect(throws: AttachmentRefusal.self) { try AttachmentValidator.check(made, limits: ValidationLimits()) }
    }

    /// A cut moves every byte after it 12 bytes on: a ZIP directory placed 12 bytes before where
    /// its end record points comes to sit there. What is stored is checked for an archive again.
    @Test func aCutThatWouldLineUpAZipDirectoryIsRefused() throws {
        var rows = [[UInt8]](repeating: [UInt8](repeating: 0x20, count: 16), count: 2)
        rows[0].replaceSubrange(2..<7, with: Array("<svg>".utf8))
        let png = storedPNG(width: 16, rows: rows)
        let iend = png.count - 12
        // An extra IDAT chunk: a central directory signature at `directory`, the end record 100
        // bytes later saying the directory starts at `directory + 12`.
        let directory = iend + 8 + 4
        var extra = [UInt8](repeating: 0, count: 4) + [0x50, 0x4B, 0x01, 0x02] + [UInt8](repeating: 0, count: 96)
        let start = UInt32(directory + 12)
        extra += [0x50, 0x4B, 0x05, 0x06, 0, 0, 0, 0, 1, 0, 1, 0, 46, 0, 0, 0]
        extra += (0..<4).map { UInt8(truncatingIfNeeded: start >> (8 * $0)) } + [0, 0]
        let crafted = Array(png[..<iend]) + pngChunk("IDAT", extra) + png[iend...]
        #expect(ZipDirectory.find(in: crafted) == nil)
        let hit = try #require(ActiveMarkup.find(in: crafted))
        #expect(PNGImageDataSplit.split(crafted, after: hit.offset).map { ZipDirectory.find(in: $0) != nil } == true)
        #expect {
            try AttachmentValidator.checkStructure(crafted, type: .png, limits: ValidationLimits(), keepMetadata: true)
        } throws: { error in
            (error as? AttachmentRefusal)?.message.contains("ZIP archive") == true
        }
    }

    /// A file at the size limit whose cut would take it past the limit is refused as too large,
    /// not stored bigger than the vault allows.
    @Test func aCutThatWouldPassTheSizeLimitIsRefused() throws {
        var rows = [[UInt8]](repeating: [UInt8](repeating: 0x20, count: 16), count: 2)
        rows[1].replaceSubrange(4..<9, with: Array("<svg>".utf8))
        let png = storedPNG(width: 16, rows: rows)
        let roomy = try AttachmentValidator.checkStructure(
            png, type: .png, limits: ValidationLimits(maxBytes: png.count + 12), keepMetadata: true)
        #expect(roomy.splits == 1 && roomy.stored.count == png.count + 12)
        #expect {
            try AttachmentValidator.checkStructure(
                png, type: .png, limits: ValidationLimits(maxBytes: png.count), keepMetadata: true)
        } throws: { error in
            (error as? AttachmentRefusal)?.reason == .tooLarge
        }
    }

    /// Markup outside the image data is never cut: a private chunk's is refused.
    @Test func markupOutsideTheImageDataIsStillRefused() throws {
        let png = storedPNG(width: 4, rows: [[1, 2, 3, 4]])
        let iend = png.count - 12
        let marked = Array(png[..<iend]) + pngChunk("tEXt", Array("Comment\0<svg onload=x>".utf8)) + png[iend...]
        #expect(throws: AttachmentRefusal.self) {
            try AttachmentValidator.check(marked, limits: ValidationLimits(), keepMetadata: true)
        }
        #expect(PNGImageDataSplit.split(marked, after: iend + 16) == nil)
    }
}
