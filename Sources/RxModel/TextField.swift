/// The one rule for free text rxvault stores and later prints: names (patient, prescriber,
/// brand, client), licence and contact, the note, attachment names.
///
/// Why both limits: Swift's `count` counts grapheme clusters, and one cluster can hold any number
/// of combining marks ("A" and 60,000 accents is one character), so a character limit alone
/// bounds nothing. The UTF-8 byte limit (4 bytes per allowed character, as much as any one
/// character needs) is the real bound; the character limit is the one people understand.
///
/// Why the refused characters: text is printed to terminals, tables, CSV files and file names.
/// Control characters can move the cursor or repaint the screen; bidirectional controls
/// (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F), zero-width characters (U+200B-U+200D,
/// U+2060, U+FEFF) and other invisible format characters (Unicode category Cf) make a name
/// print as something it is not (`scan\u{202E}fdp.exe` shows as `scanexe.pdf`); line and
/// paragraph separators (U+2028, U+2029) break a line where no line break shows.
public struct TextField: Sendable {
    /// Most characters (grapheme clusters) accepted.
    public let maxCharacters: Int
    /// Line breaks (`\n`) accepted (the note only).
    public let multiline: Bool

    /// Most UTF-8 bytes accepted: four per character.
    public var maxBytes: Int { 4 * maxCharacters }

    public init(maxCharacters: Int, multiline: Bool = false) {
        self.maxCharacters = maxCharacters
        self.multiline = multiline
    }

    /// Patient, prescriber and brand names, licence, contact.
    public static let name = TextField(maxCharacters: 200)
    /// The free-text note.
    public static let note = TextField(maxCharacters: 2000, multiline: true)
    /// A client app's name.
    public static let clientName = TextField(maxCharacters: 100)
    /// An attachment's name, which `extract` uses as a file name (`fileNameProblem` adds the rest).
    public static let fileName = TextField(maxCharacters: 200)

    /// Why `value` is not accepted (what is accepted, without repeating the value), or nil.
    /// Emptiness is the caller's business: some fields are optional.
    public func problem(with value: String) -> String? {
        if value.count > maxCharacters { return "at most \(maxCharacters) characters" }
        if value.utf8.count > maxBytes {
            return "at most \(maxCharacters) characters and \(maxBytes) bytes of UTF-8 (combining marks count)"
        }
        if value.unicodeScalars.contains(where: { !Self.isPrintable($0, multiline: multiline) }) {
            return multiline
                ? "control characters other than line breaks, and invisible formatting characters (bidirectional or zero-width), are not accepted"
                : "line breaks, control characters and invisible formatting characters (bidirectional or zero-width) are not accepted"
        }
        return nil
    }

    /// Whether `scalar` prints as itself: not a control character (except `\n` in multiline
    /// text), not an invisible format character (Cf: bidirectional controls, zero-width
    /// characters, the byte order mark, soft hyphen), not a line or paragraph separator.
    public static func isPrintable(_ scalar: Unicode.Scalar, multiline: Bool) -> Bool {
        switch scalar.properties.generalCategory {
        case .control: return multiline && scalar == "\n"
        case .format, .lineSeparator, .paragraphSeparator: return false
        default: return true
        }
    }
}

extension TextField {
    /// Why `name` cannot be an attachment's name, or nil. On top of the text rule: it becomes a
    /// file name in the current directory (`rxvault extract` without `--out`) and is printed as
    /// one, so no path separator, not `.` or `..`, no hidden file (leading dot), nothing a
    /// command line would read as an option (leading dash), no leading or trailing spaces.
    public static func attachmentNameProblem(_ name: String) -> String? {
        if name.isEmpty || name.unicodeScalars.allSatisfy(\.properties.isWhitespace) { return "must not be empty" }
        if let problem = fileName.problem(with: name) { return problem }
        if name.contains("/") || name.contains("\\") { return "must not contain '/' or '\\'" }
        if name.first == "." { return "must not start with '.'" }
        if name.first == "-" { return "must not start with '-'" }
        if name.unicodeScalars.first!.properties.isWhitespace || name.unicodeScalars.last!.properties.isWhitespace {
            return "must not start or end with a space"
        }
        return nil
    }
}
