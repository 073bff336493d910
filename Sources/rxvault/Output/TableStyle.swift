import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a row's status says at a glance: expired or withdrawn in red, expiring soon in yellow.
enum Tone {
    case expired
    case expiring

    var escape: String { self == .expired ? "\u{1B}[31m" : "\u{1B}[33m" }
}

/// How tables are drawn for where stdout goes (docs/guide.md, "Colour and width").
///
/// Colour only on a terminal, never with NO_COLOR set (to anything but the empty string, as
/// no-color.org says) or TERM=dumb: a pipe, a file or a script gets plain text. Width only on a
/// terminal: the window's columns (TIOCGWINSZ), else $COLUMNS; `--wide` (or output that is not a
/// terminal) shows every cell whole, so scripts never see an ellipsis.
struct TableStyle {
    var colour: Bool
    var width: Int?

    static let plain = TableStyle(colour: false, width: nil)
    static let reset = "\u{1B}[0m"

    static func forStandardOutput(wide: Bool) -> TableStyle {
        guard isatty(STDOUT_FILENO) == 1 else { return .plain }
        let environment = Environment.values
        let noColour = !(environment["NO_COLOR"] ?? "").isEmpty || environment["TERM"] == "dumb"
        return TableStyle(colour: !noColour, width: wide ? nil : terminalColumns(environment))
    }

    /// The terminal's width in columns; nil when it cannot be told.
    static func terminalColumns(_ environment: [String: String]) -> Int? {
        var size = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        if let text = environment["COLUMNS"], let columns = Int(text), columns > 0 { return columns }
        return nil
    }
}
