import RxCrypto

/// Builds the associated data that binds each ciphertext to its place (DESIGN.md, "Key hierarchy").
///
/// Fields are length-prefixed (4-byte big-endian length, then bytes), so no two different field
/// lists encode to the same bytes. The first field names the purpose, so a wrapped key can never
/// be opened as content or the other way round.
enum AssociatedData {
    enum Purpose: String {
        case rootKey = "rxvault/v1 root-key"
        case dataKey = "rxvault/v1 data-key"
        case content = "rxvault/v1 content"
        case attachmentKey = "rxvault/v1 attachment-key"
        case attachmentMetadata = "rxvault/v1 attachment-metadata"
        case attachmentChunk = "rxvault/v1 attachment-chunk"
        case clientInfo = "rxvault/v1 client-info"
        case clientRow = "rxvault/v1 client-row"
        case grantInfo = "rxvault/v1 grant-info"
        case grantRow = "rxvault/v1 grant-row"
        case versionRow = "rxvault/v1 version-row"
        case attachmentRow = "rxvault/v1 attachment-row"
        case searchIndex = "rxvault/v1 search-index"
        case exportBinding = "rxvault/v1 export-binding"
        case exportPatients = "rxvault/v1 export-patients"
        case auditClientKey = "rxvault/v1 audit-client-key"
        case auditClientEntry = "rxvault/v1 audit-client-entry"
        case stateRoot = "rxvault/v2 state-root"
        case clientSet = "rxvault/v2 client-set"
        case clientLookup = "rxvault/v3 client-lookup"
        case grantReference = "rxvault/v3 grant-reference"
        case manifestBucket = "rxvault/v3 manifest-bucket"
        case patientInfo = "rxvault/v4 patient-info"
        case patientRow = "rxvault/v4 patient-row"
        case patientSet = "rxvault/v4 patient-set"
        case patientBucket = "rxvault/v4 patient-bucket"
        case patientBuckets = "rxvault/v4 patient-buckets"
        case keySlot = "rxvault/v4 key-slot"
        case keySlotInfo = "rxvault/v4 key-slot-info"
        case recoveryKey = "rxvault/v4 recovery-key"
        case keyRing = "rxvault/v4 key-ring"
    }

    enum Field {
        case bytes([UInt8])
        case text(String)
        case integer(UInt64)

        /// A signed number (a version, a counter, a bucket, a slot: read from the file or counted
        /// from one) as its two's-complement bits: the same bytes as `integer` for every value
        /// rxvault writes, and for a negative one, which it never writes, bytes no key ever
        /// authenticated, so it fails to verify instead of trapping in a conversion.
        static func int(_ value: Int) -> Field { .integer(UInt64(bitPattern: Int64(value))) }
    }

    static func build(_ purpose: Purpose, _ fields: [Field]) -> [UInt8] {
        var out: [UInt8] = []
        func append(_ bytes: [UInt8]) {
            let n = UInt32(bytes.count)
            out += [UInt8(n >> 24), UInt8(n >> 16 & 0xff), UInt8(n >> 8 & 0xff), UInt8(n & 0xff)]
            out += bytes
        }
        append(Array(purpose.rawValue.utf8))
        for field in fields {
            switch field {
            case .bytes(let b): append(b)
            case .text(let t): append(Array(t.utf8))
            case .integer(let i): append((0..<8).reversed().map { UInt8(truncatingIfNeeded: i >> (8 * UInt64($0))) })
            }
        }
        return out
    }

    /// An attachment's place: which vault, which attachment, which prescription it belongs to.
    static func attachment(_ purpose: Purpose, vaultID: [UInt8], id: String, prescriptionID: String) -> [UInt8] {
        build(purpose, [.bytes(vaultID), .text("attachment"), .text(id), .text(prescriptionID)])
    }

    /// A stored object's place: which vault, which kind of object, which id, which version.
    static func object(_ purpose: Purpose, vaultID: [UInt8], type: String, id: String, version: Int) -> [UInt8] {
        build(purpose, [.bytes(vaultID), .text(type), .text(id), .int(version)])
    }
}
