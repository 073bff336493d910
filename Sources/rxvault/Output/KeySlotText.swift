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

    /// The same as JSON (`key list` and `status`, docs/format.md).
    static func costJSON(_ kdf: PasswordKDF?) -> [String: Any] {
        guard let kdf else {
            return ["algorithm": RecoveryKDF.algorithmName, "codeBits": RecoveryCode.secretLength * 8]
        }
        return [
            "algorithm": PasswordKDF.algorithmName, "preset": kdf.preset?.rawValue ?? "custom",
            "opsLimit": kdf.opsLimit, "memLimitBytes": kdf.memLimit
        ]
    }
}
