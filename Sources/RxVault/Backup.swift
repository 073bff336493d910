import Foundation
import RxCrypto
import RxStore

#if canImport(Glibc)
import Glibc
#endif

/// Backups (DESIGN.md, "Backups"): a consistent snapshot of the vault file inside an age v1
/// file. The vault's own encryption stays inside: opening the age layer yields a vault, not
/// plaintext. With no recipient the age layer uses the vault's passphrase (scrypt), so the
/// passphrase alone restores it.
extension Vault {
    public struct BackupReport: Sendable {
        public let snapshotBytes: Int
        public let backupBytes: Int
    }

    /// Writes a backup through `output`, recording it in the audit log first (so the backup
    /// holds the record of itself). `scratch` is a private directory for the snapshot.
    public func backup(to recipients: [AgeFile.Recipient], scratch: String, output: @escaping ([UInt8]) throws(CryptoError) -> Void,
                       progress: (Int, Int) -> Void = { _, _ in }) throws -> BackupReport {
        try perform {
            try audit(AuditEvent(time: clock.timestamp(), actor: AuditEvent.ownerActor, action: .backup,
                                 detail: recipients.contains { if case .scrypt = $0 { return true } else { return false } }
                                    ? "age, passphrase" : "age, \(recipients.count) recipient(s)"))
        }
        let snapshot = scratch + "/snapshot.rxv"
        defer { unlink(snapshot) }
        do { try store.snapshot(to: snapshot) } catch { throw VaultError.from(error) }
        guard let handle = FileHandle(forReadingAtPath: snapshot) else { throw VaultError.cannotWrite("cannot read the snapshot") }
        defer { try? handle.close() }
        let total = Int((try? FileManager.default.attributesOfItem(atPath: snapshot)[.size] as? Int) ?? 0)
        var written = 0
        let counting: ([UInt8]) throws(CryptoError) -> Void = { bytes throws(CryptoError) in
            written += bytes.count
            try output(bytes)
        }
        let writer = try AgeFile.Writer(recipients: recipients, output: counting)
        var done = 0
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            try writer.write(Array(chunk))
            done += chunk.count
            progress(done, total)
        }
        try writer.finish()
        return BackupReport(snapshotBytes: total, backupBytes: written)
    }
}

/// Opening backups: decrypt into a private file, then check it as a vault.
public enum BackupFile {
    /// Decrypts the backup read through `read` into a new file at `path` (mode 0600).
    public static func decrypt(read: (inout [UInt8]) throws -> Int, key: AgeFile.Key, to path: String,
                               progress: (Int) -> Void = { _ in }) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw VaultError.cannotWrite("cannot create \(path): \(String(cString: strerror(errno)))") }
        var ok = false
        defer {
            close(fd)
            if !ok { unlink(path) }
        }
        var written = 0
        try AgeFile.decrypt(read: read, key: key) { bytes in
            var offset = 0
            while offset < bytes.count {
                let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { throw VaultError.cannotWrite("cannot write \(path): \(String(cString: strerror(errno)))") }
                offset += n
            }
            written += bytes.count
            progress(written)
        }
        guard fsync(fd) == 0 else { throw VaultError.cannotWrite("cannot write \(path)") }
        ok = true
    }

    /// What checking a decrypted backup found, and what the vault in it is: the report alone
    /// cannot tell the owner which vault a clean backup brings back.
    public struct Verification: Sendable {
        public let report: Vault.CheckReport
        /// The vault's id (hex), as `status` shows it.
        public let vaultID: String
        /// What the vault holds; nil when the vault is too damaged to count.
        public let counts: Vault.Counts?
        /// When the backup was made: the time of its own audit entry (a backup logs itself
        /// before the snapshot); nil if the log cannot be read.
        public let backedUp: String?
    }

    /// Opens the decrypted vault at `path` with `passphrase` and checks everything, every
    /// attachment chunk included (the caller decides what a finding means).
    public static func verify(path: String, passphrase: SecretBytes) throws(VaultError) -> Verification {
        let vault = try Vault.open(at: path, passphrase: passphrase)
        let report = try vault.check(readData: true)
        let backedUp = (try? vault.log())?.last { $0.event.action == .backup }?.event.time
        return Verification(report: report, vaultID: vault.header.vaultIDHex, counts: try? vault.counts(), backedUp: backedUp)
    }

    /// Puts a verified vault file in WAL mode (a snapshot is written in rollback-journal mode).
    public static func prepareForUse(path: String) throws(VaultError) {
        do {
            let database = try Database(path: path)
            try database.execute("PRAGMA journal_mode = WAL")
        } catch { throw VaultError.from(error) }
    }
}
