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

    /// Opens the decrypted vault at `path` with `passphrase` and checks everything, every
    /// attachment chunk included. Returns the report (the caller decides what a finding means).
    public static func verify(path: String, passphrase: SecretBytes) throws(VaultError) -> Vault.CheckReport {
        let vault = try Vault.open(at: path, passphrase: passphrase)
        return try vault.check(readData: true)
    }

    /// Puts a verified vault file in WAL mode (a snapshot is written in rollback-journal mode).
    public static func prepareForUse(path: String) throws(VaultError) {
        do {
            let database = try Database(path: path)
            try database.execute("PRAGMA journal_mode = WAL")
        } catch { throw VaultError.from(error) }
    }
}
