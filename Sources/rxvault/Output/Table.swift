/// Plain-text tables for the terminal: columns padded to their widest cell, two spaces apart.
enum Table {
    /// What the vault prints comes from the vault, whose content might have been written by
    /// someone else: control and invisible format characters are shown as U+FFFD, never sent
    /// to the terminal.
    static func displayable(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0.properties.generalCategory == .format }) else {
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
        let all = [headers] + rows.map { $0.map(displayable) }
        let widths = headers.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[column] - cell.count)
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }

    /// `key  value` lines with the keys aligned.
    static func keyValue(_ pairs: [(String, String)]) -> String {
        let width = pairs.map(\.0.count).max() ?? 0
        return pairs.map { $0.0 + String(repeating: " ", count: width - $0.0.count) + "  " + displayable($0.1) }.joined(separator: "\n")
    }
}

/// RFC 4180 CSV. Text a spreadsheet would run as a formula (=, +, -, @ at the start of a free-text
/// field) is prefixed with a single quote, since prescription exports end up in spreadsheets.
enum CSV {
    static func line(_ cells: [String]) -> String {
        cells.map { cell in
            cell.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" })
                ? "\"" + cell.replacingOccurrences(of: "\"", with: "\"\"") + "\""
                : cell
        }.joined(separator: ",")
    }

    /// Neutralises formula injection in free text (names, brand, note). Numbers are written as numbers.
    static func text(_ value: String?) -> String {
        guard let value, let first = value.first else { return "" }
        return "=+-@\t\r".contains(first) ? "'" + value : value
    }
}

import Foundation
