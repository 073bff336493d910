import ArgumentParser
import Foundation
import RxCrypto
import RxVault

/// How a slot's key is derived, in a few words.
enum KeySlotText {
    static func cost(_ kdf: PasswordKDF?) -> String {
        guard let kdf else { return "recovery code (\(RecoveryCode.secretLength * 8) bits, BLAKE2b)" }
        return "\(kdf.preset?.rawValue ?? "custom") (ops \(kdf.opsLimit), \(kdf.memLimit >> 20) MiB)"
    }
}

/// The cost of one way in, as `key list` and `status` print it in JSON (docs/format.md): a
/// passphrase slot's Argon2id settings, or a recovery code's size.
struct KeySlotCost: Encodable {
    let algorithm: String
    var preset: String?
    var opsLimit: UInt64?
    var memLimitBytes: UInt64?
    var codeBits: Int?

    init(_ kdf: PasswordKDF?) {
        guard let kdf else {
            algorithm = RecoveryKDF.algorithmName
            codeBits = RecoveryCode.secretLength * 8
            return
        }
        algorithm = PasswordKDF.algorithmName
        preset = kdf.preset?.rawValue ?? "custom"
        opsLimit = kdf.opsLimit
        memLimitBytes = kdf.memLimit
    }

    /// The same members for a document built as a dictionary (`key list`).
    func jsonObject() throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: JSONEncoder().encode(self)) as? [String: Any] ?? [:]
    }
}
