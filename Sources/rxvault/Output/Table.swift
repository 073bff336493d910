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

    /// Columns that may leave the row for lines of their own beneath it when the table is wider
    /// than the terminal: the eyes' lens columns (one line per eye, `stacked`), dates, times.
    struct Overflow {
        let columns: [Int]
        /// Each column on its own line ("  OD  -2.25 -0.75 x180"), else the group on one line.
        var stacked = false
    }

    /// A table as `style` wants it: cells of rows with a tone in colour (only the `tinted`
    /// columns), and, when it has a width and the table is wider, the `overflow` groups moved
    /// out of the row, in order, onto lines beneath it until the row fits. Nothing is cut:
    /// names stay whole, and a truncated power would read as another power.
    static func render(
        headers: [String], rows: [[String]], tones: [Tone?] = [], tinted: Set<Int> = [],
        overflow: [Overflow] = [], style: TableStyle
    ) -> String {
        let body = rows.map { $0.map(displayable) }
        let all = [headers] + body
        let gap = 2
        func width(of columns: [Int]) -> Int {
            columns.map { column in all.map { $0[column].count }.max() ?? 0 }.reduce(0, +)
                + gap * max(0, columns.count - 1)
        }
        var shown = Array(headers.indices)
        var moved: [Overflow] = []
        if let limit = style.width {
            for group in overflow where width(of: shown) > limit {
                shown.removeAll { group.columns.contains($0) }
                moved.append(group)
            }
        }
        let widths = Dictionary(
            uniqueKeysWithValues: shown.map { column in (column, all.map { $0[column].count }.max() ?? 0) })
        var lines: [String] = []
        for (index, row) in all.enumerated() {
            let tone = index == 0 ? nil : (index - 1 < tones.count ? tones[index - 1] : nil)
            func coloured(_ column: Int, _ text: String) -> String {
                guard let tone, style.colour, tinted.contains(column) else { return text }
                return tone.escape + text + TableStyle.reset
            }
            lines.append(
                shown.enumerated().map { position, column in
                    let cell = row[column]
                    // Colour only the text, not the padding: a terminal shows trailing colour otherwise.
                    let padding = position == shown.count - 1 ? 0 : max(0, widths[column]! - cell.count)
                    return coloured(column, cell) + String(repeating: " ", count: padding)
                }.joined(separator: "  ").trailingSpacesDropped)
            guard index > 0 else { continue }
            for group in moved {
                if group.stacked {
                    let labelWidth = group.columns.map { headers[$0].count }.max() ?? 0
                    for column in group.columns {
                        let label = headers[column]
                        lines += continuation(
                            "    " + label + String(repeating: " ", count: labelWidth - label.count) + "  "
                                + coloured(column, row[column]), width: style.width)
                    }
                } else {
                    lines += continuation(
                        "    "
                            + group.columns.map { "\(headers[$0].lowercased()) \(coloured($0, row[$0]))" }.joined(
                                separator: "  "), width: style.width)
                }
            }
        }
        return lines.joined(separator: "\n")
    }

    /// A line beneath a row, as one or more lines within `width`: free text (a note, a detail)
    /// is wrapped at spaces and continued further in; a line with colour is left whole.
    static func continuation(_ line: String, width: Int?) -> [String] {
        guard let width, line.count > width, !line.contains("\u{1B}") else { return [line] }
        var lines: [String] = []
        var current = ""
        for word in line.split(separator: " ", omittingEmptySubsequences: false) {
            let candidate = current.isEmpty ? String(word) : current + " " + word
            if candidate.count > width && !current.trimmingCharacters(in: .whitespaces).isEmpty {
                lines.append(current)
                current = "      " + word
            } else {
                current = candidate
            }
        }
        lines.append(current)
        return lines
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

extension String {
    /// Without the spaces at the end (a row whose last cells are empty).
    var trailingSpacesDropped: String {
        var text = Substring(self)
        while text.last == " " { text = text.dropLast() }
        return String(text)
    }
}
