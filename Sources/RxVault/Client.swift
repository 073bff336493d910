import Foundation
import RxCrypto
import RxModel

/// A client app as the owner sees it.
public struct ClientSummary: Sendable, Equatable {
    public let id: ClientID
    public let name: String
    public let recipient: AgeRecipient
    /// When it was registered (ISO 8601, UTC).
    public let added: String
    /// Format 8: the write that registered it (`WriteStamp`); nil for clients registered before.
    public var stamp: WriteStamp? = nil
}

/// The owner-only part of a client row, sealed under the owner-info key.
struct ClientInfo: Codable {
    var schema: Int
    var name: String
    var added: String
    /// Format 3: the client's X25519 public key (64 hex digits), no longer in the clear.
    var publicKey: String?
    /// Format 8: the write that registered it (`WriteStamp.text`).
    var by: String? = nil
}

/// A grant as the owner sees it.
public struct GrantSummary: Sendable {
    public let id: GrantID
    public let client: ClientSummary
    public let prescriptionID: PrescriptionID
    public let granted: String
    /// Last day the grant works (inclusive); nil for no end.
    public let expires: CalendarDate?
    public let includesAttachments: Bool
    /// Whether the grant carries the patient's measurements (format 6; `GrantInfo.measurements`).
    public var includesMeasurements: Bool = false
    /// When the client last read this prescription, from the audit log.
    public var lastRead: String?
    /// Format 8: the write that made the grant (`WriteStamp`; kept when its terms change or it is
    /// sealed again); nil for grants made before.
    public var stamp: WriteStamp? = nil
    /// Format 8: the write that last changed its terms, when not the one that made it.
    public var termsStamp: WriteStamp? = nil
    /// The write its terms are from: what a merge compares (`GrantInfo.terms`).
    var termsSetBy: WriteStamp? { termsStamp ?? stamp }

    public func isActive(on today: CalendarDate) -> Bool { expires.map { today <= $0 } ?? true }
}

/// The end a grant command asks for, when it states one.
public enum GrantExpiry: Sendable, Equatable {
    /// The last day the grant works (inclusive).
    case until(CalendarDate)
    /// No end: the grant works until revoked.
    case never
}

/// What a grant allows: until when, and whether attachments and the patient's measurements are
/// included.
public struct GrantTerms: Sendable, Equatable {
    /// Last day the grant works (inclusive); nil for no end.
    public var expires: CalendarDate?
    public var attachments: Bool
    /// The patient's myopia-management measurements, as they are whenever the grant is sealed
    /// (format 6). Never included unless asked for.
    public var measurements: Bool = false
}

/// What a grant command did to one prescription's grant.
public struct GrantOutcome: Sendable, Equatable, CustomStringConvertible {
    public let prescriptionID: PrescriptionID
    /// The terms before (nil: there was no live grant).
    public let before: GrantTerms?
    public let after: GrantTerms
    public var changed: Bool { before != after }

    /// "new grant until 2026-12-31", "now until 2026-12-31 (was 2026-11-30)", "now with
    /// attachments (was without)", "unchanged (no end, with attachments)". Names no client and
    /// no patient: it goes to the audit log as is.
    public var description: String {
        func end(_ day: CalendarDate?) -> String { day.map { "until \($0)" } ?? "no end" }
        guard let before else {
            return "new grant " + (after.expires.map { "until \($0)" } ?? "with no end")
                + (after.attachments ? "" : ", without attachments")
                + (after.measurements ? ", with the patient's measurements" : "")
        }
        guard changed else {
            return "unchanged (\(end(after.expires)), \(after.attachments ? "with" : "without") attachments"
                + (after.measurements ? ", with measurements)" : ")")
        }
        var parts: [String] = []
        if before.expires != after.expires {
            // "(was 2026-11-30)" next to a new date, "(was until 2026-11-30)" next to no end.
            let was = before.expires.map { after.expires == nil ? "until \($0)" : "\($0)" } ?? "no end"
            parts.append((after.expires.map { "now until \($0)" } ?? "now with no end") + " (was \(was))")
        }
        if before.attachments != after.attachments {
            parts.append(
                after.attachments ? "now with attachments (was without)" : "now without attachments (was with)")
        }
        if before.measurements != after.measurements {
            parts.append(
                after.measurements
                    ? "now with the patient's measurements (was without)"
                    : "now without the patient's measurements (was with)")
        }
        return parts.joined(separator: ", ")
    }
}

/// The owner-only part of a grant row.
struct GrantInfo: Codable {
    var schema: Int
    var granted: String
    var expires: CalendarDate?
    var attachments: Bool
    /// Format 3: the prescription the grant is for, no longer in the clear.
    var prescription: String?
    /// Format 6: the grant carries its patient's measurements (absent: it does not, so rows
    /// written before keep their bytes).
    var measurements: Bool?
    /// Format 8: the write that made the grant (`WriteStamp.text`).
    var by: String? = nil
    /// Format 8: the write that last changed its terms (end, attachments, measurements) when
    /// that was not the write that made it. A merge tells a widening the other copy never saw
    /// from a narrowing made beside it by this (absent: `by`).
    var terms: String? = nil
}

extension GrantInfo {
    /// A grant's terms and stamps as they are, to seal it again (new keys, a new version).
    init(keeping grant: GrantSummary) {
        self.init(
            schema: 1, granted: grant.granted, expires: grant.expires, attachments: grant.includesAttachments,
            measurements: grant.includesMeasurements ? true : nil, by: grant.stamp?.text,
            terms: grant.termsStamp?.text)
    }
}

/// What a grant seals to the client: which grant it is and the keys it may use. The context
/// (grant, client, prescription, version, expiry) travels inside the sealed box, because sealed
/// boxes carry no associated data: a box copied to another row is recognised as out of place.
///
/// Layout (binary, so keys never pass through a String): 4-byte big-endian length of the context
/// JSON, the JSON, the prescription version's 32-byte data key, then one 32-byte key per
/// attachment listed in the context, in that order.
struct GrantKeys {
    struct Context: Codable, Equatable {
        var schema: Int
        var grant: String
        var client: String
        var prescription: String
        var version: Int
        var expires: CalendarDate?
        var attachments: [String]
        /// Format 4: the prescription's patient (record id, name, birth date) as the owner last
        /// sealed it; the prescription's content names the patient by id only.
        var patient: Patient? = nil
        /// Format 6, when the grant includes them: the patient's measurements as the owner last
        /// sealed them (every change to them re-seals the grant), oldest first.
        var measurements: [StoredMeasurement]? = nil
    }

    var context: Context
    var dataKey: SecretBytes
    var attachmentKeys: [SecretBytes]

    func encoded() throws -> SecretBytes {
        let json = Array(try JSONEncoderSorted.encode(context))
        let total = 4 + json.count + 32 * (1 + attachmentKeys.count)
        let out = SecretBytes(zeroedCount: total)
        out.withUnsafeMutableBytes { o in
            let n = UInt32(json.count)
            o[0] = UInt8(n >> 24)
            o[1] = UInt8(n >> 16 & 0xff)
            o[2] = UInt8(n >> 8 & 0xff)
            o[3] = UInt8(n & 0xff)
            for (i, b) in json.enumerated() { o[4 + i] = b }
            var offset = 4 + json.count
            for key in [dataKey] + attachmentKeys {
                key.withUnsafeBytes { k in for i in 0..<32 { o[offset + i] = k[i] } }
                offset += 32
            }
        }
        return out
    }

    static func decode(_ plain: SecretBytes) -> GrantKeys? {
        plain.withUnsafeBytes { p -> GrantKeys? in
            guard p.count >= 4 else { return nil }
            let n = Int(p[0]) << 24 | Int(p[1]) << 16 | Int(p[2]) << 8 | Int(p[3])
            guard n >= 2, p.count >= 4 + n + 32,
                let context = try? JSONDecoderStrict.decode(Context.self, from: Array(p[4..<(4 + n)])),
                p.count == 4 + n + 32 * (1 + context.attachments.count)
            else { return nil }
            var keys: [SecretBytes] = []
            for i in 0...context.attachments.count {
                let start = 4 + n + 32 * i
                keys.append(SecretBytes(copying: UnsafeRawBufferPointer(rebasing: p[start..<(start + 32)])))
            }
            return GrantKeys(context: context, dataKey: keys[0], attachmentKeys: Array(keys.dropFirst()))
        }
    }
}

enum JSONEncoderSorted {
    static func encode<T: Encodable>(_ value: T) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(value)
    }
}

enum JSONDecoderStrict {
    static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        try JSONDecoder().decode(type, from: Data(bytes))
    }
}
