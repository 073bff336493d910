import Foundation

/// Plain-text tables for the terminal: columns padded to their widest cell, two spaces apart.
enum Table {
    /// What the vault prints comes from the vault, whose content might have been written by
    /// someone else: control and invisible format characters are shown as U+FFFD, never sent
    /// to the terminal.
    static func displayable(_ text: String) -> String {
        guard
            text.unicodeScalars.contains(where: {
                $0.properties.generalCategory == .control || $0.properties.generalCategory == .format
            })
        else {
            return text
        }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            let category = scalar.properties.generalCategory
            out.append(category == .control || category == .format ? "\u{FFFD}" : scalar)
        }
        return String(out)
    }

    static func render(headers: [String], rows: [[String]]) -> String {
        render(headers: headers, rows: rows, style: .plain)
    }

    /// A table as `style` wants it: cells of rows with a tone in colour (only the `tinted`
    /// columns), and, when it has a width, the widest of the `shrinkable` columns (free text:
    /// names) cut with an ellipsis until the table fits. Values (ids, dates, lens powers) are
    /// never cut: a truncated power would read as another power.
    static func render(
        headers: [String], rows: [[String]], tones: [Tone?] = [], tinted: Set<Int> = [],
        shrinkable: Set<Int> = [], style: TableStyle
    ) -> String {
        var all = [headers] + rows.map { $0.map(displayable) }
        var widths = headers.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        if let limit = style.width {
            let gap = 2 * max(0, headers.count - 1)
            // The header's own width is the least a column keeps (and at least 4: "Sam…").
            while widths.reduce(0, +) + gap > limit {
                guard
                    let widest = shrinkable.filter({ widths[$0] > max(4, headers[$0].count) }).max(by: {
                        widths[$0] < widths[$1]
                    })
                else { break }
                let floor = max(4, headers[widest].count)
                widths[widest] = max(floor, widths[widest] - (widths.reduce(0, +) + gap - limit))
                for row in all.indices where all[row][widest].count > widths[widest] {
                    all[row][widest] = String(all[row][widest].prefix(widths[widest] - 1)) + "…"
                }
            }
        }
        return all.enumerated().map { index, row in
            let tone = index == 0 ? nil : (index - 1 < tones.count ? tones[index - 1] : nil)
            return row.enumerated().map { column, cell in
                let padded =
                    column == row.count - 1
                    ? cell : cell + String(repeating: " ", count: max(0, widths[column] - cell.count))
                guard let tone, style.colour, tinted.contains(column) else { return padded }
                // Colour only the text, not the padding: a terminal shows trailing colour otherwise.
                let trailing = padded.count - cell.count
                return tone.escape + cell + TableStyle.reset + String(repeating: " ", count: trailing)
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }

    /// `key  value` lines with the keys aligned.
    static func keyValue(_ pairs: [(String, String)]) -> String {
        let width = pairs.map(\.0.count).max() ?? 0
        return pairs.map { $0.0 + String(repeating: " ", count: width - $0.0.count) + "  " + displayable($0.1) }.joined(
            separator: "\n")
    }
}

/// RFC 4180 CSV. Text a spreadsheet would run as a formula (=, +, -, @ at the start of a free-text
/// field) is prefixed with a single quote, since prescription exports end up in spreadsheets.
enum CSV {
    static func line(_ cells: [String]) -> String {
        var out: [UInt8] = []
        append(cells, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// `line(cells)` and a newline, appended as UTF-8 (exports write 200,000 rows).
    static func append(_ cells: [String], to out: inout [UInt8]) {
        for (i, cell) in cells.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            // A cell without any of these bytes has none of the characters either: as it is.
            if !cell.utf8.contains(where: { $0 == 0x2C || $0 == 0x22 || $0 == 0x0A || $0 == 0x0D }) {
                out += cell.utf8
            } else if cell.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) {
                out += ("\"" + cell.replacingOccurrences(of: "\"", with: "\"\"") + "\"").utf8
            } else {
                out += cell.utf8
            }
        }
    }

    /// Neutralises formula injection in free text (names, brand, note). Numbers are written as numbers.
    static func text(_ value: String?) -> String {
        guard let value, let first = value.first else { return "" }
        return "=+-@\t\r".contains(first) ? "'" + value : value
    }
}
