import RxCrypto

/// The id of a prescription or an attachment: 128 random bits as 32 lower-case hex digits.
///
/// Random (not a counter) so ids reveal nothing about how many records exist or in which
/// order they were added. Shown short, like git: the first 8 digits, longer where two ids share
/// them; any unique prefix of at least 4 digits is accepted.
public struct RecordID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let hex: String

    public static let length = 32
    public static let shortLength = 8
    public static let minimumPrefixLength = 4

    public init?(hex: String) {
        guard hex.count == Self.length, Self.isHex(hex) else { return nil }
        self.hex = hex
    }

    public static func random() -> RecordID {
        RecordID(hex: randomBytes(16).map { String($0, radix: 16).padding(2) }.joined())!
    }

    public var short: String { String(hex.prefix(Self.shortLength)) }
    public var description: String { hex }
    public static func < (a: RecordID, b: RecordID) -> Bool { a.hex < b.hex }

    /// Normalises what a person typed as an id or prefix: lower case, hex only, long enough.
    public static func prefix(from text: String) throws(VaultError) -> String {
        let lowered = text.lowercased()
        guard (minimumPrefixLength...length).contains(lowered.count), isHex(lowered) else { throw .malformedID(text) }
        return lowered
    }

    /// The shortest display form of each id that is unique among `ids` (at least 8 digits).
    public static func shortForms(_ ids: [RecordID]) -> [RecordID: String] {
        let sorted = ids.sorted()
        var forms: [RecordID: String] = [:]
        for (i, id) in sorted.enumerated() {
            var needed = shortLength
            for neighbour in [i > 0 ? sorted[i - 1] : nil, i + 1 < sorted.count ? sorted[i + 1] : nil].compactMap({ $0 }) {
                let common = zip(id.hex, neighbour.hex).prefix { $0 == $1 }.count
                needed = max(needed, common + 1)
            }
            forms[id] = String(id.hex.prefix(needed))
        }
        return forms
    }

    static func isHex(_ s: String) -> Bool {
        s.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }
    }
}

extension String {
    func padding(_ length: Int) -> String { String(repeating: "0", count: Swift.max(0, length - count)) + self }
}

public typealias PrescriptionID = RecordID
public typealias AttachmentID = RecordID
