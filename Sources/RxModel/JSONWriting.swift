/// rxvault's one JSON writer: exports (rxvault JSON, FHIR) and the CLI's JSON output.
///
/// Foundation's JSONEncoder and JSONSerialization go through generic containers, boxed numbers
/// and (JSONSerialization) a locale-aware key sort for every value; on an export of 100,000
/// prescriptions that was most of the time. This writes bytes directly, in exactly the form
/// JSONEncoder writes with `[.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]` (or without
/// `.prettyPrinted`): `"key" : value`, two-space indents, keys in UTF-8 byte order, strings
/// escaped as JSONEncoder escapes them, a Double as its shortest form without a trailing `.0`
/// (docs/format.md, "How rxvault writes JSON"). Tests compare it with JSONEncoder's output.
///
/// Containers are written with `beginObject`/`key`/`endObject` and `beginArray`/`element`/
/// `endArray`; a caller that writes keys in sorted order itself (the prescription) needs no tree.
public struct JSONWriter {
    public enum Style: Sendable {
        /// No whitespace (JSONEncoder without `.prettyPrinted`).
        case compact
        /// JSONEncoder's `.prettyPrinted` form, an empty container included (`[`, a blank line, `]`).
        case pretty
        /// Pretty, but an empty container written `[]` / `{}` (the CLI's `--format json`).
        case prettyShortEmpty
    }

    public var bytes: [UInt8]
    public let style: Style
    /// `/` written `\/` (JSONEncoder without `.withoutEscapingSlashes`): only for names made
    /// that way before this writer existed (FHIR Practitioner ids).
    public let escapeSlashes: Bool
    private var pretty: Bool { style != .compact }
    /// Indent level of the container being written.
    private var level: Int
    /// For each open container: whether it has had a member yet.
    private var started: [Bool] = []

    /// `level`: the indentation the first container opens at (an entry nested in an array two
    /// levels deep starts at 2, as if it had been written inside them).
    public init(style: Style, level: Int = 0, capacity: Int = 1024, escapeSlashes: Bool = false) {
        self.style = style
        self.escapeSlashes = escapeSlashes
        self.level = level
        bytes = []
        bytes.reserveCapacity(capacity)
        started.reserveCapacity(16)
    }

    /// Empties the bytes (keeping their storage) to write the next document.
    public mutating func reset(level: Int = 0) {
        bytes.removeAll(keepingCapacity: true)
        started.removeAll(keepingCapacity: true)
        self.level = level
    }

    // MARK: - Containers

    public mutating func beginObject() { open(UInt8(ascii: "{")) }
    public mutating func endObject() { close(UInt8(ascii: "}")) }
    public mutating func beginArray() { open(UInt8(ascii: "[")) }
    public mutating func endArray() { close(UInt8(ascii: "]")) }

    /// Starts an object member: call in sorted key order, then write its value.
    public mutating func key(_ key: String) {
        separate()
        string(key)
        if pretty {
            bytes.append(0x20)
            bytes.append(UInt8(ascii: ":"))
            bytes.append(0x20)
        } else {
            bytes.append(UInt8(ascii: ":"))
        }
    }

    /// Starts an array element: then write its value.
    public mutating func element() { separate() }

    private mutating func open(_ bracket: UInt8) {
        bytes.append(bracket)
        started.append(false)
        level += 1
    }

    private mutating func separate() {
        if started[started.count - 1] { bytes.append(UInt8(ascii: ",")) } else { started[started.count - 1] = true }
        newline()
    }

    private mutating func close(_ bracket: UInt8) {
        let hadMembers = started.removeLast()
        level -= 1
        if hadMembers {
            newline()
        } else if style == .pretty {
            // JSONEncoder's empty container: a newline after the opening bracket and one before the closing one.
            bytes.append(0x0A)
            newline()
        }
        bytes.append(bracket)
    }

    private mutating func newline() {
        guard pretty else { return }
        bytes.append(0x0A)
        for _ in 0..<(2 * level) { bytes.append(0x20) }
    }

    /// Spaces for `level`, where a nested document's first line starts.
    public mutating func indent() {
        for _ in 0..<(2 * level) { bytes.append(0x20) }
    }

    // MARK: - Values

    public mutating func null() { bytes += [0x6E, 0x75, 0x6C, 0x6C] }

    public mutating func bool(_ value: Bool) {
        if value { bytes += [0x74, 0x72, 0x75, 0x65] } else { bytes += [0x66, 0x61, 0x6C, 0x73, 0x65] }
    }

    public mutating func int(_ value: Int) {
        if value < 0 {
            bytes.append(UInt8(ascii: "-"))
            // Int.min has no positive counterpart: its magnitude as UInt.
            digits(value.magnitude)
        } else {
            digits(UInt(value))
        }
    }

    private mutating func digits(_ value: UInt) {
        if value < 10 {
            bytes.append(0x30 + UInt8(value))
            return
        }
        var scratch: (UInt64, UInt64, UInt64) = (0, 0, 0) // 24 bytes: enough for 20 digits
        var v = value
        var count = 0
        withUnsafeMutableBytes(of: &scratch) { buffer in
            while v > 0 {
                buffer[23 - count] = 0x30 + UInt8(v % 10)
                v /= 10
                count += 1
            }
            bytes.append(contentsOf: buffer[(24 - count)...])
        }
    }

    /// A Double as JSONEncoder writes it: Swift's shortest round-trip form, `.0` dropped.
    /// JSON has no NaN or infinity; callers never hold one (`Hundredths` cannot be one).
    public mutating func double(_ value: Double) { bytes += Self.text(value).utf8 }

    static func text(_ value: Double) -> String {
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        return text
    }

    /// A hundredths value as the JSON number JSONEncoder writes for its `doubleValue`
    /// (`-2.25`, `14.2`, `3`), made from the whole number of hundredths without a Double.
    /// Below a million the shortest form of `raw / 100` is its decimal text: two numbers with
    /// at most two decimals differ by 0.01, far more than a Double's spacing there.
    public mutating func number(_ value: Hundredths) {
        let raw = value.raw
        guard raw.magnitude < 100_000_000 else {
            double(value.doubleValue)
            return
        }
        if raw < 0 { bytes.append(UInt8(ascii: "-")) }
        let magnitude = UInt(raw.magnitude)
        digits(magnitude / 100)
        let fraction = magnitude % 100
        guard fraction != 0 else { return }
        bytes.append(UInt8(ascii: "."))
        bytes.append(0x30 + UInt8(fraction / 10))
        if fraction % 10 != 0 { bytes.append(0x30 + UInt8(fraction % 10)) }
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// A string, escaped as JSONEncoder escapes with `.withoutEscapingSlashes`: `\"`, `\\`,
    /// `\b`, `\f`, `\n`, `\r`, `\t`, other control characters as `\u00xx`; everything else
    /// (slashes, DEL, all of Unicode) as its UTF-8 bytes.
    public mutating func string(_ value: String) {
        bytes.append(0x22)
        var text = value
        text.withUTF8 { utf8 in
            var mark = 0
            for (i, byte) in utf8.enumerated()
            where byte < 0x20 || byte == 0x22 || byte == 0x5C || (byte == 0x2F && escapeSlashes) {
                if mark < i { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[mark..<i])) }
                mark = i + 1
                bytes.append(0x5C)
                switch byte {
                case 0x22, 0x5C, 0x2F: bytes.append(byte)
                case 0x08: bytes.append(UInt8(ascii: "b"))
                case 0x0C: bytes.append(UInt8(ascii: "f"))
                case 0x0A: bytes.append(UInt8(ascii: "n"))
                case 0x0D: bytes.append(UInt8(ascii: "r"))
                case 0x09: bytes.append(UInt8(ascii: "t"))
                default: bytes += [UInt8(ascii: "u"), 0x30, 0x30, Self.hex[Int(byte >> 4)], Self.hex[Int(byte & 15)]]
                }
            }
            if mark < utf8.count { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[mark...])) }
        }
        bytes.append(0x22)
    }

    /// Text that is already JSON (a value written by another writer of the same style).
    public mutating func raw(_ json: [UInt8]) { bytes += json }

    /// A whole value tree (members sorted by key).
    public mutating func value(_ value: JSONValue) {
        switch value {
        case .null: null()
        case .bool(let b): bool(b)
        case .number(let n): bytes += n.utf8
        case .string(let s): string(s)
        case .array(let items):
            beginArray()
            for item in items {
                element()
                self.value(item)
            }
            endArray()
        case .object(let members):
            beginObject()
            for (key, item) in JSONValue.sorted(members) {
                self.key(key)
                self.value(item)
            }
            endObject()
        }
    }

    /// `value` written alone.
    public static func bytes(_ value: JSONValue, style: Style) -> [UInt8] {
        var writer = JSONWriter(style: style)
        writer.value(value)
        return writer.bytes
    }
}

/// A JSON value to write: what a caller builds when it needs to assemble or change a document
/// before writing it (FHIR resources with kept elements merged in, the CLI's documents).
public indirect enum JSONValue: Sendable {
    case null
    case bool(Bool)
    /// A number already written as JSON (`-2.25`, `180`).
    case number(String)
    case string(String)
    case array([JSONValue])
    /// Members in any order: written sorted by key (UTF-8 byte order, as JSONEncoder sorts).
    case object([(String, JSONValue)])

    public static func int(_ value: Int) -> JSONValue { .number(String(value)) }

    /// A Double as JSONEncoder writes it.
    public static func double(_ value: Double) -> JSONValue { .number(JSONWriter.text(value)) }

    public static func hundredths(_ value: Hundredths) -> JSONValue {
        var writer = JSONWriter(style: .compact, capacity: 16)
        writer.number(value)
        return .number(String(decoding: writer.bytes, as: UTF8.self))
    }

    /// An object from key-value pairs (`nil` values left out).
    public static func fields(_ pairs: KeyValuePairs<String, JSONValue?>) -> JSONValue {
        .object(pairs.compactMap { pair in pair.value.map { (pair.key, $0) } })
    }

    /// The member `key` of an object (nil for anything else); setting nil removes it.
    public subscript(key: String) -> JSONValue? {
        get {
            guard case .object(let members) = self else { return nil }
            return members.first { $0.0 == key }?.1
        }
        set {
            guard case .object(var members) = self else { return }
            self = .null // members is now the only reference: changed in place
            if let index = members.firstIndex(where: { $0.0 == key }) {
                if let newValue { members[index].1 = newValue } else { members.remove(at: index) }
            } else if let newValue {
                members.append((key, newValue))
            }
            self = .object(members)
        }
    }

    public var arrayItems: [JSONValue]? {
        if case .array(let items) = self { return items }
        return nil
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    static func sorted(_ members: [(String, JSONValue)]) -> [(String, JSONValue)] {
        var pairs = members
        var inOrder = true
        for i in pairs.indices.dropFirst() where !pairs[i - 1].0.utf8.lexicographicallyPrecedes(pairs[i].0.utf8) {
            inOrder = false
            break
        }
        if !inOrder { pairs.sort { $0.0.utf8.lexicographicallyPrecedes($1.0.utf8) } }
        return pairs
    }
}
