import CPNG
import CPoppler
import Testing

/// The attachment validators build on libpng and poppler-glib. These checks prove both libraries
/// link and run on this machine (the module maps, pkg-config flags and the extra gio link that
/// poppler needs for its stream loader), before any validator code depends on them.
@Suite struct CLibraryTests {
    @Test func libpngIsVersion16() {
        let version = png_access_version_number()
        #expect(version >= 10_600 && version < 10_700, "libpng \(version)")
    }

    @Test func popplerOpensADocumentFromAMemoryStream() throws {
        // A minimal one-page PDF, loaded the way the validator must (GMemoryInputStream +
        // new_from_stream; the from_data loader crashes on encrypted documents).
        let pdf = Self.minimalPDF()
        let bytes = pdf.withUnsafeBytes { g_bytes_new($0.baseAddress, gsize($0.count)) }
        defer { g_bytes_unref(bytes) }
        let stream = g_memory_input_stream_new_from_bytes(bytes)
        defer { g_object_unref(stream) }
        var error: UnsafeMutablePointer<GError>?
        let document = poppler_document_new_from_stream(stream, goffset(pdf.count), nil, nil, &error)
        #expect(error == nil)
        let doc = try #require(document)
        defer { g_object_unref(UnsafeMutableRawPointer(doc)) }
        #expect(poppler_document_get_n_pages(doc) == 1)
        #expect(String(cString: poppler_get_version()).hasPrefix("2"))
    }

    /// Builds a valid PDF with a correct xref table.
    static func minimalPDF() -> [UInt8] {
        let objects = [
            "<< /Type /Catalog /Pages 2 0 R >>",
            "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>"
        ]
        var text = "%PDF-1.4\n"
        var offsets: [Int] = []
        for (i, body) in objects.enumerated() {
            offsets.append(text.utf8.count)
            text += "\(i + 1) 0 obj\n\(body)\nendobj\n"
        }
        let xref = text.utf8.count
        text += "xref\n0 \(objects.count + 1)\n0000000000 65535 f \n"
        for offset in offsets {
            text += String(repeating: "0", count: 10 - String(offset).count) + "\(offset) 00000 n \n"
        }
        text += "trailer\n<< /Size \(objects.count + 1) /Root 1 0 R >>\nstartxref\n\(xref)\n%%EOF\n"
        return Array(text.utf8)
    }
}
