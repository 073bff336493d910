import Foundation
import RxCrypto
import RxModel
import RxStore

@testable import RxVault

/// A throwaway vault in its own temporary directory, made with the fast KDF preset.
final class TestVault {
    let directory: URL
    let path: String
    let passphrase: SecretBytes
    static let today = CalendarDate(iso: "2026-06-15")!

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("rxvault-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent("vault.rxv").path
        passphrase = TestVault.secret("correct horse battery staple")
        try Vault.create(at: path, passphrase: passphrase, kdf: PasswordKDF(preset: .interactive))
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    static func secret(_ text: String) -> SecretBytes {
        var bytes = Array(text.utf8)
        return SecretBytes(consuming: &bytes)
    }

    func open(_ passphrase: SecretBytes? = nil) throws -> Vault {
        try Vault.open(at: path, with: .passphrase(passphrase ?? self.passphrase), clock: .fixed(today: Self.today))
    }

    /// A second, raw connection to the same file, to play the attacker with write access.
    func raw() throws -> Database { try Database(path: path) }

    static func glasses(patient: String = "Ada Example", sphere: Int = -225) -> Prescription {
        Prescription(
            kind: .glasses, patient: Patient(name: patient), prescriber: Prescriber(name: "Dr Optic"),
            issued: CalendarDate(iso: "2026-01-10")!, expires: CalendarDate(iso: "2028-01-10")!,
            right: LensSpecification(sphere: Hundredths(raw: sphere), cylinder: Hundredths(raw: -75), axis: 180),
            left: LensSpecification(sphere: Hundredths(raw: -200)))
    }
}

extension Database {
    func set(_ column: String, of id: String, version: Int, to bytes: [UInt8]) throws {
        try prepare("UPDATE prescription_version SET \(column) = ? WHERE prescription_id = ? AND version = ?")
            .run([.blob(bytes), .text(id), .integer(Int64(version))])
    }
}
