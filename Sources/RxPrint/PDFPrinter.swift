import CPoppler

/// Draws `PrintedPage`s as an A4 PDF with cairo (linked through poppler-glib), one page each.
///
/// Text is set with cairo's own text API in DejaVu Sans (fontconfig's choice when it is not
/// installed); cairo embeds the font subset with a ToUnicode map, so the text can be searched,
/// copied and read by `pdftotext`. The file has no scripts, links, forms or attachments: it is
/// an ordinary PDF that rxvault's own attachment checker accepts.
public enum PDFPrinter {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// A4 in points, and the margins.
    static let width = 595.28, height = 841.89, margin = 56.0
    static let font = "DejaVu Sans"

    public static func pdf(_ pages: [PrintedPage], title: String, created: String?) throws(Failure) -> [UInt8] {
        let sink = Sink()
        let write: cairo_write_func_t = { closure, data, length in
            guard let closure, let data else { return CAIRO_STATUS_WRITE_ERROR }
            Unmanaged<Sink>.fromOpaque(closure).takeUnretainedValue().bytes.append(
                contentsOf: UnsafeBufferPointer(start: data, count: Int(length)))
            return CAIRO_STATUS_SUCCESS
        }
        guard
            let surface = cairo_pdf_surface_create_for_stream(
                write, Unmanaged.passUnretained(sink).toOpaque(), width, height)
        else {
            throw Failure(description: "cannot start the PDF")
        }
        cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_TITLE, title)
        cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_CREATOR, "rxvault")
        if let created { cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_CREATE_DATE, created) }
        guard let cr = cairo_create(surface) else {
            cairo_surface_destroy(surface)
            throw Failure(description: "cannot draw the PDF")
        }
        for page in pages {
            draw(page, on: cr)
            cairo_show_page(cr)
        }
        let drawn = cairo_status(cr)
        cairo_destroy(cr)
        cairo_surface_finish(surface)
        let finished = cairo_surface_status(surface)
        cairo_surface_destroy(surface)
        guard drawn == CAIRO_STATUS_SUCCESS, finished == CAIRO_STATUS_SUCCESS else {
            throw Failure(
                description:
                    "cairo could not write the PDF: \(String(cString: cairo_status_to_string(drawn != CAIRO_STATUS_SUCCESS ? drawn : finished)))"
            )
        }
        return sink.bytes
    }

    final class Sink { var bytes: [UInt8] = [] }

    // MARK: Layout

    static func setFont(_ cr: OpaquePointer, size: Double, bold: Bool = false) {
        cairo_select_font_face(
            cr, font, CAIRO_FONT_SLANT_NORMAL, bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL)
        cairo_set_font_size(cr, size)
    }

    static func advance(_ cr: OpaquePointer, _ text: String) -> Double {
        var extents = cairo_text_extents_t()
        cairo_text_extents(cr, text, &extents)
        return extents.x_advance
    }

    static func show(_ cr: OpaquePointer, _ text: String, x: Double, y: Double) {
        cairo_move_to(cr, x, y)
        cairo_show_text(cr, text)
    }

    static func grey(_ cr: OpaquePointer, _ level: Double) { cairo_set_source_rgb(cr, level, level, level) }

    /// `text` cut into lines no wider than `width` at spaces (a word longer than a line is cut).
    static func wrap(_ cr: OpaquePointer, _ text: String, width: Double) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ", omittingEmptySubsequences: false).map(String.init) {
            let candidate = line.isEmpty ? word : line + " " + word
            if advance(cr, candidate) <= width || line.isEmpty && advance(cr, word) <= width {
                line = candidate
                continue
            }
            if !line.isEmpty { lines.append(line) }
            var rest = word
            while advance(cr, rest) > width, rest.count > 1 {
                var cut = rest.count - 1
                while cut > 1 && advance(cr, String(rest.prefix(cut))) > width { cut -= 1 }
                lines.append(String(rest.prefix(cut)))
                rest = String(rest.dropFirst(cut))
            }
            line = rest
        }
        if !line.isEmpty || lines.isEmpty { lines.append(line) }
        return lines
    }

    static func draw(_ page: PrintedPage, on cr: OpaquePointer) {
        let left = margin
        let right = width - margin
        let usable = right - left
        var y = margin + 18

        grey(cr, 0)
        setFont(cr, size: 20, bold: true)
        show(cr, page.title, x: left, y: y)
        y += 18
        grey(cr, 0.35)
        setFont(cr, size: 9.5)
        show(cr, page.subtitle, x: left, y: y)
        y += 10
        cairo_set_line_width(cr, 1)
        cairo_move_to(cr, left, y)
        cairo_line_to(cr, right, y)
        cairo_stroke(cr)
        y += 22

        // Fields: labels in a column as wide as the widest, values wrapped beside them.
        setFont(cr, size: 11, bold: true)
        let labelWidth = (page.fields.map { advance(cr, $0.label) }.max() ?? 0) + 14
        for field in page.fields {
            grey(cr, 0.3)
            setFont(cr, size: 11, bold: true)
            show(cr, field.label, x: left, y: y)
            grey(cr, 0)
            setFont(cr, size: 11)
            for line in wrap(cr, field.value, width: usable - labelWidth) {
                show(cr, line, x: left + labelWidth, y: y)
                y += 16
            }
        }
        y += 14
        y = drawGrid(page.grid, on: cr, left: left, width: usable, top: y) + 22

        for section in page.sections {
            grey(cr, 0)
            setFont(cr, size: 12, bold: true)
            show(cr, section.heading, x: left, y: y)
            y += 17
            setFont(cr, size: 10.5)
            for text in section.lines {
                for line in wrap(cr, text, width: usable) {
                    guard y < height - margin - 30 else { break }
                    show(cr, line, x: left, y: y)
                    y += 14.5
                }
            }
            y += 12
        }

        grey(cr, 0.4)
        setFont(cr, size: 8.5)
        var footerY = height - margin + 10
        for line in wrap(cr, page.footer, width: usable).reversed() {
            show(cr, line, x: left, y: footerY)
            footerY -= 11
        }
    }

    /// The grid with a header row and rules; the font shrinks (to 6 pt) until every column fits.
    /// Returns the y below it.
    static func drawGrid(_ grid: PrintedPage.Grid, on cr: OpaquePointer, left: Double, width: Double, top: Double)
        -> Double
    {
        let padding = 8.0
        var size = 10.5
        var widths: [Double] = []
        while true {
            widths = grid.headers.indices.map { column in
                setFont(cr, size: size, bold: true)
                var widest = advance(cr, grid.headers[column])
                setFont(cr, size: size)
                for row in grid.rows where column < row.count { widest = max(widest, advance(cr, row[column])) }
                return widest + 2 * padding
            }
            if widths.reduce(0, +) <= width || size <= 6 { break }
            size -= 0.5
        }
        // Spare room goes to the columns evenly, so the grid spans the page.
        let spare = max(0, width - widths.reduce(0, +)) / Double(max(1, widths.count))
        widths = widths.map { $0 + spare }
        let rowHeight = size * 2
        var y = top
        cairo_set_source_rgb(cr, 0.93, 0.93, 0.93)
        cairo_rectangle(cr, left, y, widths.reduce(0, +), rowHeight)
        cairo_fill(cr)
        func drawRow(_ cells: [String], bold: Bool) {
            grey(cr, 0)
            setFont(cr, size: size, bold: bold)
            var x = left
            for (column, cell) in cells.enumerated() where column < widths.count {
                show(cr, cell, x: x + padding, y: y + rowHeight * 0.68)
                x += widths[column]
            }
            y += rowHeight
            grey(cr, 0.6)
            cairo_set_line_width(cr, 0.6)
            cairo_move_to(cr, left, y)
            cairo_line_to(cr, left + widths.reduce(0, +), y)
            cairo_stroke(cr)
        }
        drawRow(grid.headers, bold: true)
        for row in grid.rows { drawRow(row, bold: false) }
        return y
    }
}
