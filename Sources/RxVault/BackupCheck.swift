import Foundation
import RxCrypto

#if canImport(Glibc)
    import Glibc
#endif

#if canImport(Glibc)
    import Glibc
#endif

/// Opening one backup of a folder with the keys given, and checking it as `backup verify` does,
/// plus that its name (and label) agree with what is inside (`backup list --verify`, `backup
/// prune --verify`). The outcome says which: a backup that is damaged or not what its name says
/// (`failed`), one the keys given do not open (`wrongKey`), one no key was given for
/// (`notChecked`). Each key goes where the header says it can open: a passphrase backup takes the
/// age passphrase given, else the vault's passphrase (never a recovery code); one with key slots
/// the vault's key; one to recipients the identities.
public struct BackupCheck: Sendable {
    public enum Outcome: Sendable {
        case ok(BackupFile.Verification)
        case failed(String)
        case wrongKey(String)
        case notChecked(String)

        public var isOK: Bool { if case .ok = self { return true } else { return false } }
        /// "ok", "FAILED: why", "not opened: why", "not checked: why".
        public var text: String {
            switch self {
            case .ok: return "ok"
            case .failed(let why): return "FAILED: \(why)"
            case .wrongKey(let why): return "not opened: \(why)"
            case .notChecked(let why): return "not checked: \(why)"
            }
        }
    }

    let vaultKey: VaultKey
    let agePassphrase: SecretBytes?
    let identities: [AgeIdentity]?

    /// `vaultKey`: the vault's passphrase or recovery code; `agePassphrase`: for backups made
    /// with an age passphrase of their own; `identities`: for backups to recipients.
    public init(vaultKey: VaultKey, agePassphrase: SecretBytes?, identities: [AgeIdentity]?) {
        self.vaultKey = vaultKey
        self.agePassphrase = agePassphrase
        self.identities = identities
    }

    /// Checks one backup, decrypting it into a private folder made (and removed) under
    /// `scratch`.
    public func check(_ entry: BackupFolder.Entry, in scratch: String) -> Outcome {
        if let problem = entry.problem { return .failed(problem) }
        let key: AgeFile.Key
        switch entry.kind {
        case .passphrase?:
            guard let passphrase = agePassphrase ?? vaultKey.passphrase else {
                return .wrongKey(
                    "opens only with the passphrase the vault had on \(entry.name.time.iso.prefix(10)) (locked with a passphrase alone), never with a recovery code"
                )
            }
            key = .passphrase(passphrase, maxLogN: AgeFile.maxReadLogN)
        case .waysIn?:
            // Opened through its key slots with the vault's key, as a restore would.
            key = BackupWaysIn.ageKey(vaultKey)
        case .recipients?:
            guard let identities else { return .notChecked("made to recipients: give --age-identity") }
            key = .identities(identities)
        case nil: return .failed("unreadable")
        }
        var template = Array((scratch + "/check-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { return .failed("cannot create a temporary directory") }
        let folder = String(cString: made)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let inner = folder + "/vault.rxv"
        guard let handle = FileHandle(forReadingAtPath: entry.path) else { return .failed("cannot be read") }
        defer { try? handle.close() }
        let raw: (inout [UInt8]) throws -> Int = { buffer in
            guard let chunk = try handle.read(upToCount: buffer.count), !chunk.isEmpty else { return 0 }
            chunk.copyBytes(to: &buffer, count: chunk.count)
            return chunk.count
        }
        let armor = entry.armored ? AgeArmorStream(source: raw) : nil
        do {
            try BackupFile.decrypt(read: { buffer in try armor?.read(&buffer) ?? raw(&buffer) }, key: key, to: inner)
        } catch AgeError.noMatch {
            if case .passphrase = entry.kind, agePassphrase == nil {
                return .wrongKey("the passphrase does not open it: it may be older than the last passphrase change")
            }
            if case .waysIn? = entry.kind {
                return .failed("its root key stanza does not open with the key its slots give")
            }
            return .wrongKey("the \(agePassphrase != nil ? "passphrase" : "identity") given does not open it")
        } catch VaultError.wrongPassphrase {
            return .wrongKey(
                "the passphrase opens none of its key slots: it may be older than the last passphrase change")
        } catch VaultError.wrongRecoveryCode {
            return .wrongKey(
                "the recovery code opens none of its key slots: it is older than the recovery code, or another's")
        } catch {
            return .failed("\(error)")
        }
        let verification: BackupFile.Verification
        do { verification = try BackupFile.verify(path: inner, with: vaultKey) } catch .wrongPassphrase {
            return .wrongKey(
                "the passphrase does not open the vault inside: it may be older than the last passphrase change")
        } catch .wrongRecoveryCode {
            return .wrongKey("the recovery code does not open the vault inside: it may be older than the recovery code")
        } catch {
            return .failed(error.description)
        }
        guard verification.report.isClean else {
            return .failed(verification.report.stages.flatMap(\.errors).first ?? "integrity errors")
        }
        guard entry.name.names(vaultID: verification.vaultID) else {
            return .failed("holds vault \(verification.vaultID.prefix(8)), not \(entry.name.vault) as its name says")
        }
        if let label = entry.label {
            // Opened: the label is now authenticated by the header MAC.
            guard label.vaultID == verification.vaultID else {
                return .failed("its label names another vault than the one inside")
            }
        } else if let made = verification.backedUp.flatMap(BackupTime.init(iso:)), made != entry.name.time {
            return .failed("its name says \(entry.name.time), the backup inside was made at \(made)")
        }
        return .ok(verification)
    }
}
