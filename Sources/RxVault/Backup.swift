import Foundation
import RxCrypto
import RxStore

#if canImport(Glibc)
    import Glibc
#endif

/// Backups (DESIGN.md, "Backups"): a consistent snapshot of the vault file inside an age v1
/// file. The vault's own encryption stays inside: opening the age layer yields a vault, not
/// plaintext. By default the age layer opens with every way into the vault (`BackupWaysIn`):
/// any passphrase slot and any recovery code the vault has when the backup is made; recipients
/// may be added. A backup locked with a passphrase alone (`--passphrase-only`, age scrypt,
/// which must stand alone) opens with that passphrase only.
extension Vault {
    public struct BackupReport: Sendable {
        public let snapshotBytes: Int
        /// What went to the output (before any armor the caller adds).
        public let backupBytes: Int
        /// The vault's key slots the age layer opens with (empty: a passphrase or recipients alone).
        public let waysIn: [BackupWaysIn.Way]
        /// The snapshot's knowledge vector as stored (format 8; read from the snapshot, not
        /// verified): which writes the backup holds, so a fork can name it (`BackupMemory`).
        public var knowledge: KnowledgeVector? = nil
    }

    /// Writes a backup through `output`, recording it in the audit log first (so the backup
    /// holds the record of itself), at `time` (an ISO 8601 timestamp: the one its file is named
    /// after; the clock's now if nil). `scratch` is a private directory for the snapshot.
    /// `labelled` puts a BackupLabel in the header (not beside a passphrase); `waysIn` adds a
    /// stanza per key slot and the root key's (`BackupWaysIn`).
    public func backup(
        to recipients: [AgeFile.Recipient], waysIn: Bool = false, time: String? = nil, labelled: Bool = false,
        scratch: String, output: @escaping ([UInt8]) throws(CryptoError) -> Void,
        progress: (Int, Int) -> Void = { _, _ in }
    ) throws -> BackupReport {
        let keys = recipients.filter { !$0.isLabel }
        // A backup that would not restore must not be written: it would say "wrote" and protect
        // nothing. The vault is checked as `backup verify` and `restore` check the copy (every
        // attachment chunk included), before the audit entry, so a refused backup leaves no trace.
        let report = try check(readData: true)
        guard report.isClean else {
            let findings = report.stages.flatMap(\.errors)
            throw VaultError.integrity(
                "the vault does not pass 'rxvault check' (\(findings[0])\(findings.count > 1 ? "; \(findings.count - 1) more" : "")), so a backup of it would not restore; nothing was written. Run 'rxvault check' for every finding"
            )
        }
        var detail = ["age"]
        if keys.contains(where: \.isPassphrase) { detail.append("passphrase") }
        if waysIn { detail.append("slots " + header.slots.map { String($0.id) }.joined(separator: ", ")) }
        if !keys.contains(where: \.isPassphrase) && !keys.isEmpty { detail.append("\(keys.count) recipient(s)") }
        try perform { write in
            try audit(
                AuditEvent(
                    time: time ?? clock.timestamp(), actor: AuditEvent.ownerActor, action: .backup,
                    detail: detail.joined(separator: ", ")))
        }
        let snapshot = scratch + "/snapshot.rxv"
        defer { unlink(snapshot) }
        // The slots as the key ring verified them (after any upgrade the audit entry made).
        let slots = waysIn ? try verifiedHeader() : nil
        do { try store.snapshot(to: snapshot) } catch { throw VaultError.from(error) }
        let label = labelled ? time.flatMap(BackupTime.init(iso:)).map { (header.vaultIDHex, $0) } : nil
        return try BackupFile.encrypt(
            snapshot: snapshot, to: recipients,
            waysIn: try slots.map { slots throws(VaultError) in try read { try BackupFile.sameSlots(slots, in: store) }
            },
            label: label, output: output, progress: progress)
    }
}

/// What a backup is made from (`BackupFile.write`).
public enum BackupSource {
    /// The vault, opened: it is checked first, and the backup is recorded in its audit log.
    case vault(Vault)
    /// The vault's file, not opened (no secret at hand: recipients only): neither checked nor
    /// recorded in the audit log.
    case file(path: String, busyTimeoutMilliseconds: Int32)
}

extension BackupFile {
    /// Writes a backup of `source` to `recipients` (and, with `waysIn`, to every key slot of
    /// the vault: `BackupWaysIn`) through `output`, made at `time` (what its file is named
    /// after). A backup without a passphrase stanza is labelled with the vault and the time, in
    /// a stanza of its own (`BackupLabel`), so a folder of them can be listed without a key; one
    /// locked with a passphrase alone is not (age allows nothing beside scrypt).
    public static func write(
        _ source: BackupSource, to recipients: [AgeFile.Recipient], waysIn: Bool, time: BackupTime, scratch: String,
        output: @escaping ([UInt8]) throws(CryptoError) -> Void,
        progress: (Int, Int) -> Void = { _, _ in }
    ) throws -> Vault.BackupReport {
        let labelled = !recipients.contains(where: \.isPassphrase)
        switch source {
        case .vault(let vault):
            return try vault.backup(
                to: recipients, waysIn: waysIn, time: time.iso, labelled: labelled, scratch: scratch, output: output,
                progress: progress)
        case .file(let path, let busyTimeoutMilliseconds):
            return try backupWithoutPassphrase(
                at: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds, to: recipients, waysIn: waysIn,
                labelTime: labelled ? time : nil, scratch: scratch, output: output, progress: progress)
        }
    }

    /// A backup of the vault at `path` made without its passphrase: to age recipients and the
    /// vault's key slots, which need no secret to encrypt to, so a timer or cron job can back up
    /// with no secret on the machine. The vault is not opened, so the backup is not in its audit
    /// log (the log's entries are MAC'd with a key only the passphrase unlocks), and the slots
    /// and audit public key it is encrypted to are the file's as they are, unverified: an
    /// altered file can make such a backup fail to open (`backup verify` tells), never open to
    /// anyone the file itself would not. The snapshot is taken the same way (one read
    /// transaction, safe while others write).
    public static func backupWithoutPassphrase(
        at path: String, busyTimeoutMilliseconds: Int32, to recipients: [AgeFile.Recipient], waysIn: Bool,
        labelTime: BackupTime?, scratch: String, output: @escaping ([UInt8]) throws(CryptoError) -> Void,
        progress: (Int, Int) -> Void = { _, _ in }
    ) throws -> Vault.BackupReport {
        guard !recipients.contains(where: \.isPassphrase) else {
            throw VaultError.invalidInput("a backup with a passphrase needs the vault opened")
        }
        let (store, header) = try VaultHeader.openStore(at: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        let snapshot = scratch + "/snapshot.rxv"
        defer { unlink(snapshot) }
        do { try store.snapshot(to: snapshot) } catch { throw VaultError.from(error) }
        return try encrypt(
            snapshot: snapshot, to: recipients, waysIn: waysIn ? try sameSlots(header, in: store) : nil,
            label: labelTime.map { (header.vaultIDHex, $0) }, output: output, progress: progress)
    }

    /// `header`, if the store's key slots are still the ones it holds after the snapshot was
    /// taken: the ways into the age layer are then the ways into the vault inside it. A `key
    /// add`, `key remove` or `passwd` in between is refused (run the backup again).
    static func sameSlots(_ header: VaultHeader, in store: any RecordStore) throws -> VaultHeader {
        let now: VaultHeader
        do { now = try VaultHeader(store.header(), slots: store.keySlots()) } catch { throw VaultError.wrap(error) }
        guard now.keyWrappingDigest == header.keyWrappingDigest else {
            throw VaultError.refused(
                "the vault's key slots changed while it was being backed up ('key add', 'key remove' or 'passwd' ran at the same time), so the backup's ways in might not be the vault's; nothing was written: run the backup again"
            )
        }
        return header
    }

    /// Streams the snapshot file through the age writer into `output`, with a BackupLabel of
    /// `label` (vault id, time) and the snapshot's size first among the stanzas, then the ways
    /// into `waysIn`'s vault, then the recipients.
    static func encrypt(
        snapshot: String, to recipients: [AgeFile.Recipient], waysIn: VaultHeader?, label: (String, BackupTime)?,
        output: @escaping ([UInt8]) throws(CryptoError) -> Void, progress: (Int, Int) -> Void
    ) throws -> Vault.BackupReport {
        guard let handle = FileHandle(forReadingAtPath: snapshot) else {
            throw VaultError.cannotWrite("cannot read the snapshot")
        }
        defer { try? handle.close() }
        var info = stat()
        guard fstat(handle.fileDescriptor, &info) == 0 else { throw VaultError.cannotWrite("cannot read the snapshot") }
        let total = Int(info.st_size)
        var recipients = (waysIn.map(BackupWaysIn.stanzas(for:)) ?? []) + recipients
        if let (vaultID, time) = label {
            let stanza = BackupLabel(vaultID: vaultID, time: time, snapshotBytes: total)
            recipients.insert(.label(type: BackupLabel.stanzaType, arguments: stanza.arguments), at: 0)
        }
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
        return Vault.BackupReport(
            snapshotBytes: total, backupBytes: written,
            waysIn: waysIn?.slots.map { BackupWaysIn.Way(slot: $0.id, kind: $0.kind) } ?? [],
            knowledge: (try? PeekedVault.peek(at: snapshot))?.knowledge)
    }
}

/// Opening backups: decrypt into a private file, then check it as a vault.
public enum BackupFile {
    /// The scrypt work factor of a backup locked with the vault's own passphrase: the memory
    /// the vault's Argon2id asks of a guesser (2^logN KiB), never above age's default (18,
    /// 256 MiB, the moderate preset's memory) nor below 10. Whoever holds such a backup is then
    /// no better placed to guess the passphrase than whoever holds the vault file: a default
    /// vault's backups are age's default, an interactive one's 64 MiB (16), and a vault made
    /// below the presets (the test suite's, through the library) costs milliseconds to back up.
    public static func scryptWorkFactor(for header: VaultHeader) -> Int {
        // The costliest passphrase slot, not the header's own settings: slot 1 may have been
        // removed (its old costs stay) or be cheaper than the slot whose passphrase this is, and
        // too high a cost never weakens a backup.
        let costliest = header.slots.compactMap(\.kdf).max { $0.memLimit < $1.memLimit } ?? header.kdf
        return scryptWorkFactor(matching: costliest)
    }

    /// The work factor for one Argon2id cost (the rule above).
    public static func scryptWorkFactor(matching kdf: PasswordKDF) -> Int {
        var logN = 0
        while logN < AgeFile.defaultScryptLogN, UInt64(1024) << UInt64(logN + 1) <= kdf.memLimit { logN += 1 }
        return max(10, logN)
    }

    /// Decrypts the backup read through `read` into a new file at `path` (mode 0600).
    public static func decrypt(
        read: (inout [UInt8]) throws -> Int, key: AgeFile.Key, to path: String,
        progress: (Int) -> Void = { _ in }
    ) throws {
        try writePrivateFile(path, progress: progress) { write in
            try AgeFile.decrypt(read: read, key: key) { bytes in try write(bytes[...]) }
        }
    }

    /// Writes what `produce` hands its writer into a new file at `path`, mode 0600 from its first
    /// byte, synced; the file is removed if anything fails (a part-written vault is never left).
    static func writePrivateFile(
        _ path: String, progress: (Int) -> Void,
        _ produce: (_ write: (ArraySlice<UInt8>) throws -> Void) throws -> Void
    ) throws {
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw VaultError.cannotWrite("cannot create \(path): \(String(cString: strerror(errno)))")
        }
        var ok = false
        defer {
            close(fd)
            if !ok { unlink(path) }
        }
        var written = 0
        try withoutActuallyEscaping(progress) { progress in
            try produce { bytes in
                var offset = 0
                while offset < bytes.count {
                    let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
                    if n < 0 && errno == EINTR { continue }
                    guard n > 0 else {
                        throw VaultError.cannotWrite("cannot write \(path): \(String(cString: strerror(errno)))")
                    }
                    offset += n
                }
                written += bytes.count
                progress(written)
            }
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

    /// Opens the decrypted vault at `path` with `key` and checks everything, every attachment
    /// chunk included (the caller decides what a finding means). The vault inside a backup keeps
    /// the key slots it had the day the backup was made: the passphrase of that day opens it, and
    /// so does a recovery code added before then (one added later does not).
    public static func verify(path: String, with key: VaultKey) throws(VaultError) -> Verification {
        try verify(Vault.open(at: path, with: key))
    }

    static func verify(_ vault: Vault) throws(VaultError) -> Verification {
        let report = try vault.check(readData: true)
        let backedUp = (try? vault.log())?.last { $0.event.action == .backup }?.event.time
        return Verification(
            report: report, vaultID: vault.header.vaultIDHex, counts: try? vault.counts(), backedUp: backedUp)
    }

    /// Puts a verified vault file in WAL mode (a snapshot is written in rollback-journal mode).
    public static func prepareForUse(path: String) throws(VaultError) {
        do { try SQLiteRecordStore.prepareSnapshotForUse(at: path) } catch { throw VaultError.from(error) }
    }
}

extension BackupFile {
    /// Copies a vault file read through `read` into a new file at `path` (mode 0600): a backup
    /// someone already decrypted with age (`age -d ... | rxvault restore -`) is checked and put
    /// in place like one rxvault decrypts.
    public static func copy(read: (inout [UInt8]) throws -> Int, to path: String, progress: (Int) -> Void = { _ in })
        throws
    {
        try writePrivateFile(path, progress: progress) { write in
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            while case let n = try read(&buffer), n > 0 { try write(buffer[0..<n]) }
        }
    }
}
