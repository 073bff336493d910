/// One page of a printable document, as text: what is on it, not how it is drawn. The CLI fills
/// it from a prescription (`export --format pdf`); `PDFPrinter` lays it out with cairo.
public struct PrintedPage: Sendable, Equatable {
    /// A grid of cells with a header row, drawn with rules (the per-eye values).
    public struct Grid: Sendable, Equatable {
        public var headers: [String]
        public var rows: [[String]]
        public init(headers: [String], rows: [[String]]) {
            self.headers = headers
            self.rows = rows
        }
    }

    /// A heading and its lines of text (notes, attachments), each wrapped to the page.
    public struct Section: Sendable, Equatable {
        public var heading: String
        public var lines: [String]
        public init(heading: String, lines: [String]) {
            self.heading = heading
            self.lines = lines
        }
    }

    public var title: String
    public var subtitle: String
    /// Label and value pairs (patient, prescriber, dates), one per line.
    public var fields: [(label: String, value: String)]
    public var grid: Grid
    public var sections: [Section]
    public var footer: String

    public init(
        title: String, subtitle: String, fields: [(label: String, value: String)], grid: Grid, sections: [Section],
        footer: String
    ) {
        self.title = title
        self.subtitle = subtitle
        self.fields = fields
        self.grid = grid
        self.sections = sections
        self.footer = footer
    }

    public static func == (a: PrintedPage, b: PrintedPage) -> Bool {
        a.title == b.title && a.subtitle == b.subtitle && a.fields.map(\.label) == b.fields.map(\.label)
            && a.fields.map(\.value) == b.fields.map(\.value) && a.grid == b.grid && a.sections == b.sections
            && a.footer == b.footer
    }
}
