import ArgumentParser
import Foundation
import RxCrypto
import RxModel
import RxPrint
import RxValidate
import RxVault

extension PrescriptionKind: ExpressibleByArgument {}

extension CylinderForm: ExpressibleByArgument {}

extension RecordStatus: ExpressibleByArgument {}

/// `--eye right` (or `od`), `--eye left` (or `os`).
extension Eye: ExpressibleByArgument {
    public init?(argument: String) {
        switch argument.lowercased() {
        case "right", "od": self = .right
        case "left", "os": self = .left
        default: return nil
        }
    }

    public static var allValueStrings: [String] { ["right", "left"] }
}

extension PasswordKDF.Preset: ExpressibleByArgument {}
