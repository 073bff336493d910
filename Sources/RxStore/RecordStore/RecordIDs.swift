/// The id of a row rxvault writes: 128 random bits, stored and shown as 32 lower-case hex digits.
///
/// Random (not a counter) so ids reveal nothing about how many records exist or in which order
/// they were added. Each kind of row has its own type (`PrescriptionID`, `AttachmentID`,
/// `ClientID`, `GrantID`, `PatientID`), so that the store's API cannot be handed one kind where
/// another belongs, and a row read back carries ids already checked (`StoredRow.id`).
///
/// The value is kept as its hex digits: that is how every engine's columns hold it, how RxVault
/// keys its tables and what people type (any unique prefix of at least 4 digits; `RecordID`).
public protocol RecordIdentifier: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// 32 lower-case hex digits.
    var hex: String { get }
    /// Wraps `hex`, which the caller has checked is 32 lower-case hex digits (`init?(hex:)` checks).
    init(checkedHex hex: String)
}

extension RecordIdentifier {
    /// The id `hex` spells, nil unless it is 32 lower-case hex digits.
    public init?(hex: String) {
        guard hex.utf8.count == RecordID.length, RecordID.isHex(hex) else { return nil }
        self.init(checkedHex: hex)
    }

    /// The id of 16 bytes (random ones, for a new row).
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == RecordID.byteCount else { return nil }
        let digits = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = []
        hex.reserveCapacity(RecordID.length)
        for byte in bytes { hex += [digits[Int(byte >> 4)], digits[Int(byte & 0x0f)]] }
        self.init(checkedHex: String(decoding: hex, as: UTF8.self))
    }

    /// The 16 bytes the digits spell (`init?(bytes:)` the other way).
    public var bytes: [UInt8] {
        func nibble(_ c: UInt8) -> UInt8 { c <= UInt8(ascii: "9") ? c - UInt8(ascii: "0") : c - UInt8(ascii: "a") + 10 }
        let digits = Array(hex.utf8)
        return stride(from: 0, to: digits.count, by: 2).map { nibble(digits[$0]) << 4 | nibble(digits[$0 + 1]) }
    }

    /// The first 8 digits, as ids are shown (like git; `RecordID.shortForms` where two share them).
    public var short: String { String(hex.prefix(RecordID.shortLength)) }
    public var description: String { hex }
    public static func < (a: Self, b: Self) -> Bool { a.hex < b.hex }

    /// The shortest display form of each id that is unique among `ids` (at least 8 digits).
    public static func shortForms(_ ids: [Self]) -> [Self: String] { RecordID.shortForms(ids) }
}

/// A prescription: its versions, attachments, grants and index entry all name it.
public struct PrescriptionID: RecordIdentifier {
    public let hex: String
    public init(checkedHex hex: String) { self.hex = hex }
}

/// An attachment of a prescription (its chunks name it).
public struct AttachmentID: RecordIdentifier {
    public let hex: String
    public init(checkedHex hex: String) { self.hex = hex }
}

/// A client app the owner added (its grants name it).
public struct ClientID: RecordIdentifier {
    public let hex: String
    public init(checkedHex hex: String) { self.hex = hex }
}

/// A grant: one client's access to one prescription.
public struct GrantID: RecordIdentifier {
    public let hex: String
    public init(checkedHex hex: String) { self.hex = hex }
}

/// A patient record (format 4). Prescriptions name it inside their sealed content only.
public struct PatientID: RecordIdentifier {
    public let hex: String
    public init(checkedHex hex: String) { self.hex = hex }
}

/// What every kind of id shares: its length, how it is shown and how a typed prefix is read.
public enum RecordID {
    public static let byteCount = 16
    /// Hex digits in an id.
    public static let length = 32
    public static let shortLength = 8
    /// The fewest digits accepted as a prefix of an id.
    public static let minimumPrefixLength = 4

    /// Whether `s` is lower-case hex digits only (of any length: an id or a prefix of one).
    public static func isHex(_ s: String) -> Bool {
        s.utf8.allSatisfy {
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0)
        }
    }

    /// The shortest display form of each id that is unique among `ids` (at least 8 digits).
    public static func shortForms<ID: RecordIdentifier>(_ ids: [ID]) -> [ID: String] {
        let sorted = ids.sorted()
        var forms: [ID: String] = [:]
        for (i, id) in sorted.enumerated() {
            var needed = shortLength
            for neighbour in [i > 0 ? sorted[i - 1] : nil, i + 1 < sorted.count ? sorted[i + 1] : nil].compactMap({ $0 }
            ) {
                let common = zip(id.hex.utf8, neighbour.hex.utf8).prefix { $0 == $1 }.count
                needed = max(needed, common + 1)
            }
            forms[id] = String(id.hex.prefix(needed))
        }
        return forms
    }
}
