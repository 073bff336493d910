import Foundation
import RxCrypto
import RxStore

/// The patient rows in 256 buckets, by the first byte of the id (the buckets of the search index
/// and the manifest), with one hash each (DESIGN.md, "Patients"; docs/format.md,
/// "Format 4: patient buckets").
///
/// The state root pins the whole set of patient rows with one hash (`VaultState.patientsHash`),
/// so checking one patient against it meant reading every row's id and MAC: 100,000 rows to show
/// one prescription. These hashes let a reader check only its patient's bucket. They live in their
/// own MAC'd row rather than in the root, bound to the patients hash they were computed with:
/// the owner computes both from the same rows in the same write, so bucket hashes whose patients
/// hash is the verified root's are the buckets of the current set, and any others (rolled back,
/// or left behind by an older rxvault that changed patients without knowing of them) are not
/// used (the whole set is checked instead, as before). Keeping the root as it was keeps the vault
/// readable and writable by an older rxvault in format 4, with no "newer format" step.
struct PatientBuckets: Equatable {
    static let count = SearchIndex.bucketCount

    /// The `VaultState.patientsHash` of the rows these buckets were computed from.
    var patientsHash: [UInt8]
    /// SHA-256 of each bucket's rows (`hash(bucket:rows:)`), also for an empty bucket.
    var hashes: [[UInt8]]

    /// The buckets of `rows` (every patient row's id and MAC, in id order, as
    /// `RecordStore.patientMACs()` gives them), with their patients hash.
    init(rows: [(id: PatientID, mac: [UInt8])], patientsHash: [UInt8]) {
        var grouped = Array(repeating: [(id: PatientID, mac: [UInt8])](), count: Self.count)
        for row in rows {
            if let bucket = Self.bucket(ofRowID: row.id.hex) { grouped[bucket].append(row) }
        }
        self.patientsHash = patientsHash
        hashes = grouped.enumerated().map { Self.hash(bucket: $0.offset, rows: $0.element) }
    }

    init(patientsHash: [UInt8], hashes: [[UInt8]]) {
        self.patientsHash = patientsHash
        self.hashes = hashes
    }

    /// The two lower-case hex digits every id of `bucket` starts with (what the range query asks).
    static func prefix(_ bucket: Int) -> String { String(format: "%02x", bucket) }

    /// The bucket a stored row's id falls in: the one whose `prefix` it starts with, byte for byte,
    /// as the store's range query selects (an id that starts otherwise is in no bucket: only the
    /// whole-set hash covers it; every id the owner writes is lower-case hex).
    static func bucket(ofRowID id: String) -> Int? {
        let bytes = Array(id.utf8.prefix(2))
        guard bytes.count == 2, let high = hexDigit(bytes[0]), let low = hexDigit(bytes[1]) else { return nil }
        return high << 4 | low
    }

    private static func hexDigit(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return Int(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return Int(byte - UInt8(ascii: "a")) + 10
        default: return nil
        }
    }

    /// SHA-256 of `rxvault/v4 patient-bucket` ‖ u64 bucket ‖ each row's id and MAC in id order
    /// (`AssociatedData` framing). The bucket number is in it so that a bucket's rows cannot stand
    /// for another's.
    static func hash(bucket: Int, rows: [(id: PatientID, mac: [UInt8])]) -> [UInt8] {
        var fields: [AssociatedData.Field] = [.int(bucket)]
        fields.reserveCapacity(1 + 2 * rows.count)
        for row in rows { fields += [.text(row.id.hex), .bytes(row.mac)] }
        return SHA256.hash(AssociatedData.build(.patientBucket, fields))
    }

    /// `32 patients hash | 256 × 32 bucket hashes`.
    func encoded() -> [UInt8] {
        var out = patientsHash
        out.reserveCapacity(32 * (1 + Self.count))
        for hash in hashes { out += hash }
        return out
    }

    static func decode(_ bytes: [UInt8]) -> PatientBuckets? {
        guard bytes.count == 32 * (1 + count) else { return nil }
        return PatientBuckets(
            patientsHash: Array(bytes[0..<32]),
            hashes: (1...count).map { Array(bytes[32 * $0..<32 * ($0 + 1)]) })
    }

    /// What the owner's MAC covers: the vault id and the encoding.
    func macMessage(vaultID: [UInt8]) -> [UInt8] {
        AssociatedData.build(.patientBuckets, [.bytes(vaultID), .bytes(encoded())])
    }
}
