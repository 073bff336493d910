/// A small JSON reader: bytes to a tree of values (`JSONTree`), and `JSONObjectReader` to map
/// one object's members to Swift values with the same rules, and the same `DecodingError`s,
/// as Foundation's `JSONDecoder` with rxvault's `Codable` definitions.
///
/// Why not `JSONDecoder`: every export, list and search opens each prescription version's
/// sealed content, and decoding it through `JSONDecoder` was a fifth of an export's time
/// This reader is several times faster; `Prescription(json:)` maps its tree by hand,
/// and differential tests (RxModelTests `JSONReadingTests`) hold it to the `Codable` path:
/// what one accepts the other accepts, with the same value; what one refuses the other refuses.
///
/// Strict RFC 8259: no comments, no trailing commas, no leading zeros or `+`, no raw control
/// characters in strings, valid UTF-8 and surrogate pairs only, nothing after the value but
/// whitespace; as `JSONDecoder`, one trailing comma before `}` or `]` is accepted, and an
/// object's repeated key reads as its first value.
public indirect enum JSONTree: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(JSONNumber)
    case string(String)
    case array([JSONTree])
    case object([JSONMember])

    /// Parses a whole document.
    public init(parsing bytes: some Collection<UInt8>) throws(JSONReadError) {
        let direct = bytes.withContiguousStorageIfAvailable { buffer in
            var parser = JSONParser(buffer)
            return Result { () throws(JSONReadError) in try parser.document() }
        }
        let result =
            direct
            ?? Array(bytes).withUnsafeBufferPointer { buffer in
                var parser = JSONParser(buffer)
                return Result { () throws(JSONReadError) in try parser.document() }
            }
        self = try result.get()
    }

    /// Parses a whole document in raw memory (decrypted content).
    public init(parsing buffer: UnsafeRawBufferPointer) throws(JSONReadError) {
        var parser = JSONParser(buffer.assumingMemoryBound(to: UInt8.self))
        self = try parser.document()
    }

    /// What kind of value it is, for messages.
    var kindName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

/// One member of a JSON object, in document order.
public struct JSONMember: Sendable, Equatable {
    public let key: String
    public let value: JSONTree
}

/// A JSON number, read as `JSONDecoder` reads one: as a `Double`, and as an `Int` when it is a
/// whole number that fits (`2`, and also `2.0` and `2e0`, which `JSONDecoder` takes for an Int).
public struct JSONNumber: Sendable, Equatable {
    /// The number as written (for messages).
    public let text: String
    public let double: Double
    /// Nil when the number is not a whole number that fits in an Int.
    public let integer: Int?
}

/// Where a document is not JSON.
public struct JSONReadError: Error, Sendable, CustomStringConvertible {
    /// Byte offset of the problem.
    public let offset: Int
    public let problem: String
    /// The key an object has twice, when that is the problem. JSON leaves such a document's
    /// meaning to the reader (RFC 8259, 4: some take the first, some the last), so two readers
    /// of one file could disagree on a prescription's status: it is refused, never guessed.
    public var duplicateKey: String? = nil
    public var description: String { "\(problem) at byte \(offset)" }
}

/// A coding-path element, so errors name where they are exactly as `JSONDecoder`'s do.
public struct JSONPathKey: CodingKey, Sendable {
    public let stringValue: String
    public let intValue: Int?
    public init(stringValue: String) {
        self.stringValue = stringValue
        intValue = nil
    }
    public init(intValue: Int) {
        stringValue = "Index \(intValue)"
        self.intValue = intValue
    }
    public init(_ key: String) { self.init(stringValue: key) }
}

// MARK: - Mapping values

/// One JSON value at a coding path, read into Swift values by `JSONDecoder`'s rules: `null` is a
/// missing value for a required one and absent for an optional one; a wrong type is a
/// `typeMismatch`; numbers become `Hundredths` and dates `CalendarDate` with the `Codable`
/// messages.
public struct JSONValueReader: Sendable {
    public let tree: JSONTree
    /// The path is made only when needed (an error, a nested object): a member's reader holds its
    /// parent's path and its own key, so reading a field allocates nothing.
    let parent: [JSONPathKey]
    let key: JSONPathKey?

    public init(_ tree: JSONTree, path: [JSONPathKey] = []) {
        self.tree = tree
        parent = path
        key = nil
    }

    init(_ tree: JSONTree, parent: [JSONPathKey], key: JSONPathKey) {
        self.tree = tree
        self.parent = parent
        self.key = key
    }

    /// Where the value is: `JSONDecoder`'s coding path.
    public var path: [JSONPathKey] { key.map { parent + [$0] } ?? parent }

    func mismatch(_ type: Any.Type) -> DecodingError {
        if case .null = tree {
            return .valueNotFound(
                type,
                .init(
                    codingPath: path, debugDescription: "Cannot get value of type \(type) -- found null value instead"))
        }
        return .typeMismatch(
            type,
            .init(codingPath: path, debugDescription: "Expected to decode \(type) but found \(tree.kindName) instead."))
    }

    public func corrupted(_ text: String) -> DecodingError {
        .dataCorrupted(.init(codingPath: path, debugDescription: text))
    }

    public func string() throws(DecodingError) -> String {
        guard case .string(let s) = tree else { throw mismatch(String.self) }
        return s
    }

    public func bool() throws(DecodingError) -> Bool {
        guard case .bool(let b) = tree else { throw mismatch(Bool.self) }
        return b
    }

    /// `JSONDecoder`'s refusal of a number that does not fit the type asked for (`1e400` for a
    /// Double, `2.5` for an Int): it names no path.
    static let numberDoesNotFit = DecodingError.dataCorrupted(
        .init(codingPath: [], debugDescription: "The given data was not valid JSON."))

    public func double() throws(DecodingError) -> Double {
        guard case .number(let n) = tree else { throw mismatch(Double.self) }
        guard n.double.isFinite else { throw Self.numberDoesNotFit }
        return n.double
    }

    public func int() throws(DecodingError) -> Int {
        guard case .number(let n) = tree else { throw mismatch(Int.self) }
        guard let i = n.integer else { throw Self.numberDoesNotFit }
        return i
    }

    /// As `Hundredths`' `Codable` reads it: a number with at most two decimals.
    public func hundredths() throws(DecodingError) -> Hundredths {
        let number = try double()
        guard let value = Hundredths(exactly: number) else {
            throw corrupted("\(number) is not a number with at most two decimals")
        }
        return value
    }

    /// As `CalendarDate`'s `Codable` reads it: `YYYY-MM-DD`.
    public func date() throws(DecodingError) -> CalendarDate {
        let text = try string()
        guard let date = CalendarDate(iso: text) else {
            throw corrupted("'\(text)': \(CalendarDate.problem(iso: text) ?? "not a date")")
        }
        return date
    }

    /// A `String`-backed enum, with the message of its synthesized `Decodable`.
    public func raw<T: RawRepresentable>(_ type: T.Type) throws(DecodingError) -> T where T.RawValue == String {
        let text = try string()
        guard let value = T(rawValue: text) else {
            throw corrupted("Cannot initialize \(T.self) from invalid String value \(text)")
        }
        return value
    }

    public func object() throws(DecodingError) -> JSONObjectReader {
        guard case .object(let members) = tree else {
            if case .null = tree {
                throw DecodingError.valueNotFound(
                    [String: Any].self,
                    .init(
                        codingPath: path,
                        debugDescription: "Cannot get keyed decoding container -- found null value instead"))
            }
            throw mismatch([String: Any].self)
        }
        return JSONObjectReader(members: members, path: path)
    }

    public func array() throws(DecodingError) -> [JSONValueReader] {
        guard case .array(let elements) = tree else {
            if case .null = tree {
                throw DecodingError.valueNotFound(
                    [Any].self,
                    .init(
                        codingPath: path,
                        debugDescription: "Cannot get unkeyed decoding container -- found null value instead"))
            }
            throw mismatch([Any].self)
        }
        let path = self.path
        return elements.enumerated().map {
            JSONValueReader($0.element, parent: path, key: JSONPathKey(intValue: $0.offset))
        }
    }

    /// Any value, as `FHIRValue`'s `Codable` reads it (a whole number is an integer). A number
    /// too large for a Double is refused, as there.
    public func fhirValue() throws(DecodingError) -> FHIRValue {
        if let value = Self.fhirValue(tree) { return value }
        // Only on the rare refusal: find where the number is, for the message.
        func unrepresentable(_ tree: JSONTree, _ path: [JSONPathKey]) -> ([JSONPathKey], String)? {
            switch tree {
            case .number(let n) where n.integer == nil && !n.double.isFinite: return (path, n.text)
            case .array(let a):
                for (i, e) in a.enumerated() {
                    if let found = unrepresentable(e, path + [JSONPathKey(intValue: i)]) { return found }
                }
            case .object(let members):
                for m in members {
                    if let found = unrepresentable(m.value, path + [JSONPathKey(m.key)]) { return found }
                }
            default: break
            }
            return nil
        }
        let (at, text) = unrepresentable(tree, path) ?? (path, "?")
        throw .typeMismatch(
            FHIRValue.self, .init(codingPath: at, debugDescription: "Number \(text) is not representable in Swift."))
    }

    /// Nil when a number in it is too large for a Double.
    static func fhirValue(_ tree: JSONTree) -> FHIRValue? {
        switch tree {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .number(let n):
            if let i = n.integer { return .integer(i) }
            return n.double.isFinite ? .number(n.double) : nil
        case .string(let s): return .string(s)
        case .array(let a):
            var values: [FHIRValue] = []
            values.reserveCapacity(a.count)
            for element in a {
                guard let value = fhirValue(element) else { return nil }
                values.append(value)
            }
            return .array(values)
        case .object(let members):
            var o: [String: FHIRValue] = [:]
            o.reserveCapacity(members.count)
            for member in members {
                guard let value = fhirValue(member.value) else { return nil }
                o[member.key] = value
            }
            return .object(o)
        }
    }

    /// An object of FHIR values (`[String: FHIRValue]`).
    public func fhirObject() throws(DecodingError) -> [String: FHIRValue] {
        guard case .object = tree else { throw mismatch([String: FHIRValue].self) }
        guard case .object(let o) = try fhirValue() else { return [:] }
        return o
    }
}

/// One JSON object's members, looked up by key as a `KeyedDecodingContainer` does.
public struct JSONObjectReader: Sendable {
    public let members: [JSONMember]
    public let path: [JSONPathKey]

    public init(members: [JSONMember], path: [JSONPathKey]) {
        self.members = members
        self.path = path
    }

    /// The member's value (the first, when a key is repeated, as `JSONDecoder` reads it), nil when absent.
    public func member(_ key: String) -> JSONTree? {
        for m in members where m.key == key { return m.value }
        return nil
    }

    /// The value at `key`; throws `keyNotFound` when absent.
    public func required(_ key: String) throws(DecodingError) -> JSONValueReader {
        guard let value = member(key) else {
            throw .keyNotFound(
                JSONPathKey(key), .init(codingPath: path, debugDescription: "No value associated with key \(key)."))
        }
        return JSONValueReader(value, parent: path, key: JSONPathKey(key))
    }

    /// The value at `key`; nil when absent or null (as `decodeIfPresent`).
    public func optional(_ key: String) -> JSONValueReader? {
        guard let value = member(key) else { return nil }
        if case .null = value { return nil }
        return JSONValueReader(value, parent: path, key: JSONPathKey(key))
    }

    /// A `dataCorruptedError(forKey:in:)`.
    public func corrupted(_ key: String, _ text: String) -> DecodingError {
        .dataCorrupted(.init(codingPath: path + [JSONPathKey(key)], debugDescription: text))
    }
}
