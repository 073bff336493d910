import Foundation
import RxCrypto
import RxModel
import RxStore
import RxVault

/// Argon2id at libsodium's lowest cost (one pass over 8 KiB): for vaults in tests that are not
/// about the key-derivation cost. Every command that opens a vault derives its key once; at the
/// interactive preset (2 passes over 64 MiB) that was most of the suite's CPU time. A vault
/// records its KDF parameters in its header, so such a vault opens like any other; tests of the
/// presets themselves (`init --kdf`, `key add --kdf`, `passwd --kdf`, `status`) still make
/// their vaults with them.
public enum TestKDF {
    public static let fast = PasswordKDF(opsLimit: 1, memLimit: 8 << 10)
}

/// A secret from test text.
public func secret(_ text: String) -> SecretBytes {
    var bytes = Array(text.utf8)
    return SecretBytes(consuming: &bytes)
}

/// A throwaway vault in its own temporary directory, made with the fast KDF, for tests that
/// use the RxVault API in-process.
public final class TestVault: @unchecked Sendable {
    public let folder: TemporaryDirectory
    public var directory: URL { folder.url }
    public let path: String
    public let passphrase: SecretBytes
    public static let today = CalendarDate(iso: "2026-06-15")!

    public init(passphrase text: String = "correct horse battery staple", kdf: PasswordKDF = TestKDF.fast) throws {
        folder = try TemporaryDirectory(prefix: "rxvault-test")
        path = folder.path("vault.rxv")
        passphrase = RxTestSupport.secret(text)
        try Vault.create(at: path, passphrase: passphrase, kdf: kdf)
    }

    public static func secret(_ text: String) -> SecretBytes { RxTestSupport.secret(text) }

    public func open(_ passphrase: SecretBytes? = nil) throws -> Vault {
        try Vault.open(at: path, with: .passphrase(passphrase ?? self.passphrase), clock: .fixed(today: Self.today))
    }

    /// A second, raw connection to the same file, to play the attacker with write access.
    public func raw() throws -> Database { try Database(path: path) }

    public static func glasses(patient: String = "Ada Example", sphere: Int = -225) -> Prescription {
        Prescription(
            kind: .glasses, patient: Patient(name: patient), prescriber: Prescriber(name: "Dr Optic"),
            issued: CalendarDate(iso: "2026-01-10")!, expires: CalendarDate(iso: "2028-01-10")!,
            right: LensSpecification(sphere: Hundredths(raw: sphere), cylinder: Hundredths(raw: -75), axis: 180),
            left: LensSpecification(sphere: Hundredths(raw: -200)))
    }
}

/// Makes a new vault file at `path` (mode 0600, as `rxvault init` leaves it) protected by
/// `passphrase`, in-process: what `rxvault init` does, without a process and at the fast KDF.
public func createVault(at path: String, passphrase: String, kdf: PasswordKDF = TestKDF.fast) throws {
    try Vault.create(at: path, passphrase: secret(passphrase), kdf: kdf)
}

extension TestVault {
    /// A consistent copy of the file as it is now (`VACUUM INTO`), as a client keeping a copy,
    /// a sync tool or an older backup would hold it; returns its path.
    public func consistentCopy(_ name: String) throws -> String {
        let copy = folder.path(name)
        try raw().prepare("VACUUM INTO ?").run([.text(copy)])
        return copy
    }

    /// The attacker's connection (foreign keys off) with the file `old` attached as schema `old`.
    public func attacker(old: String) throws -> Database {
        let db = try raw()
        try db.execute("PRAGMA foreign_keys = OFF")
        try db.prepare("ATTACH DATABASE ? AS old").run([.text(old)])
        return db
    }

    /// A vault file made from `Fixtures/vaults/NAME.sql` in this vault's folder (mode 0600):
    /// the old formats are kept as SQL text, byte-for-byte the rows that version of rxvault wrote.
    public func fixtureVault(_ name: String) throws -> String {
        try loadVaultFixture(name, to: folder.path("\(name).rxv"))
    }
}

/// Makes the vault file `path` (mode 0600) from `Fixtures/vaults/NAME.sql`; returns `path`.
@discardableResult
public func loadVaultFixture(_ name: String, to path: String) throws -> String {
    try loadVault(sqlFile: Repository.fixture("vaults/\(name).sql"), to: path)
}

/// Makes the vault file `path` (mode 0600) from an SQL dump (the fixtures are text so that no
/// vault file is tracked); returns `path`.
@discardableResult
public func loadVault(sqlFile: String, to path: String) throws -> String {
    guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
        throw CocoaError(.fileWriteUnknown)
    }
    try Database(path: path).execute(try String(contentsOfFile: sqlFile, encoding: .utf8))
    return path
}
