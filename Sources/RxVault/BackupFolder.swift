import Foundation
import RxCrypto

#if canImport(Glibc)
    import Glibc
#endif

/// The backups in a folder, as far as they can be known without any key (`backup list`,
/// `backup prune`): files named as `backup DIR` names them (BackupName), with what their age
/// header says (a passphrase or recipients, and the label of a backup to recipients). Nothing
/// here is authenticated: a name is a claim, and the header's label is covered by a MAC that
/// only opening the backup checks. What is checked: the name's pattern, the header's syntax,
/// that a label agrees with the name, and (with `readWhole`) that the payload's length is one
/// age can have, which a file cut short usually is not.
public enum BackupFolder {
    public enum Kind: Equatable, Sendable {
        /// Locked with a passphrase alone (age scrypt): the vault's of the day it was made
        /// (`--passphrase-only`, or any default backup before 0.5.0), or an `--age-passphrase-file`'s.
        case passphrase
        /// Encrypted to this many recipients (X25519, ssh-ed25519 or other stanzas) alone.
        case recipients(Int)
        /// Encrypted to the vault's key slots as the header states them (`BackupWaysIn`), and
        /// to this many recipients besides.
        case waysIn([BackupWaysIn.Way], recipients: Int)
    }

    public struct Entry: Sendable {
        public let fileName: String
        public let path: String
        public let name: BackupName
        public let size: Int
        public let armored: Bool
        /// What the header says; nil when it could not be read (see `problem`).
        public let kind: Kind?
        public let label: BackupLabel?
        /// Why the file is not a sound-looking backup, if it is not.
        public let problem: String?
        /// Whether it can be taken for what its name says: its header reads as age, and any
        /// label agrees with the name. A damaged payload still can (it is a broken backup of
        /// that vault); an unreadable header or a contradicting label cannot.
        public let recognisable: Bool

        /// Named for this vault, and, if it has a label, labelled for it (the whole id).
        public func isBackup(ofVault vaultID: String) -> Bool {
            guard name.names(vaultID: vaultID) else { return false }
            return label.map { $0.vaultID == vaultID.lowercased() } ?? true
        }
    }

    /// What `backup prune` removes of `vaultID`'s backups among `entries` under `policy`, never
    /// the newest that verifies nor any newer one (`BackupPrunePlan`). `verifies`: nil when a
    /// backup verifies, else why not.
    public static func prunePlan(
        _ entries: [Entry], ofVault vaultID: String, policy: BackupPolicy, verifies: (Entry) throws -> String?
    ) rethrows -> BackupPrunePlan {
        try BackupPrunePlan(entries, ofVault: vaultID, policy: policy, verifies: verifies)
    }

    /// The same, where a backup verifies when it looks whole (`problem` is nil): its header
    /// reads and its length is one age can have (`backup prune` without `--verify`).
    public static func prunePlan(_ entries: [Entry], ofVault vaultID: String, policy: BackupPolicy)
        -> BackupPrunePlan
    {
        BackupPrunePlan(entries, ofVault: vaultID, policy: policy) { $0.problem }
    }

    /// The entries with backup names in `folder` (regular files only, not following links out
    /// of it), oldest first. `readWhole` reads each file to its end to check its length.
    public static func scan(_ folder: String, readWhole: Bool) throws(VaultError) -> [Entry] {
        var folderInfo = stat()
        guard stat(folder, &folderInfo) == 0 else {
            throw .noVault("cannot read the folder \(folder): \(String(cString: strerror(errno)))")
        }
        guard folderInfo.st_mode & S_IFMT == S_IFDIR else { throw .noVault("\(folder) is not a folder") }
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else {
            throw .noVault("cannot read the folder \(folder)")
        }
        var entries: [Entry] = []
        for fileName in names {
            guard let name = BackupName(parsing: fileName) else { continue }
            let path = PathText.join(folder, fileName)
            var info = stat()
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
            entries.append(
                inspect(path: path, fileName: fileName, name: name, size: Int(info.st_size), readWhole: readWhole))
        }
        return entries.sorted { ($0.name.time, $0.name.sequence) < ($1.name.time, $1.name.sequence) }
    }

    static func inspect(path: String, fileName: String, name: BackupName, size: Int, readWhole: Bool) -> Entry {
        func entry(_ armored: Bool, _ kind: Kind?, _ label: BackupLabel?, _ problem: String?, recognisable: Bool = true)
            -> Entry
        {
            Entry(
                fileName: fileName, path: path, name: name, size: size, armored: armored, kind: kind, label: label,
                problem: problem,
                recognisable: recognisable && kind != nil)
        }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            return entry(false, nil, nil, "cannot be read: \(String(cString: strerror(errno)))")
        }
        defer { try? handle.close() }
        let peek: [UInt8] = (try? handle.read(upToCount: 64)).map { Array($0) } ?? []
        let armored = peek.first(where: { !AgeFile.isWhitespace($0) }) == UInt8(ascii: "-")
        guard AgeFile.looksLikeAge(peek) else { return entry(false, nil, nil, "is not an age file") }
        let file = PeekedFile(handle: handle, peeked: peek)
        let raw: (inout [UInt8]) throws -> Int = { try file.read(&$0) }
        let stream = armored ? AgeArmorStream(source: raw) : nil
        var total = 0
        let read: (inout [UInt8]) throws -> Int = { buffer in
            let n = try stream?.read(&buffer) ?? raw(&buffer)
            total += n
            return n
        }
        // The header is parsed from a copy of what was read, so the count covers the payload too.
        var seen: [UInt8] = []
        let stanzas: [AgeFile.StanzaSummary]
        do {
            stanzas = try AgeFile.peekHeader { buffer in
                let n = try read(&buffer)
                seen += buffer[0..<n]
                return n
            }
        } catch {
            return entry(armored, nil, nil, "has an unreadable age header (\(error))")
        }
        let kind: Kind
        if stanzas.contains(where: { $0.type == "scrypt" }) {
            kind = .passphrase
        } else {
            let ways: [BackupWaysIn.Way]
            do { ways = try BackupWaysIn.ways(in: stanzas) } catch {
                return entry(armored, nil, nil, "has a malformed rxvault key slot in its header (\(error))")
            }
            let ours = [BackupLabel.stanzaType, BackupWaysIn.slotStanzaType, BackupWaysIn.rootKeyStanzaType]
            let others = stanzas.filter { !ours.contains($0.type) }.count
            kind = ways.isEmpty ? .recipients(others) : .waysIn(ways, recipients: others)
        }
        let labels = stanzas.filter { $0.type == BackupLabel.stanzaType }
        let label = labels.first.flatMap { BackupLabel(type: $0.type, arguments: $0.arguments) }
        if !labels.isEmpty && (labels.count > 1 || label == nil) {
            return entry(armored, kind, nil, "has a malformed rxvault label in its header", recognisable: false)
        }
        if let label, !label.vaultID.hasPrefix(name.vault) || label.time != name.time {
            return entry(
                armored, kind, label,
                "was renamed: its header says vault \(label.vaultID.prefix(8)) at \(label.time), its name \(name.vault) at \(name.time)",
                recognisable: false)
        }
        guard readWhole else { return entry(armored, kind, label, nil) }
        var scratch = [UInt8](repeating: 0, count: 1 << 16)
        do { while try read(&scratch) > 0 {} } catch { return entry(armored, kind, label, "is damaged (\(error))") }
        guard let headerEnd = AgeFile.headerLength(seen) else {
            return entry(armored, kind, label, "has an unreadable age header")
        }
        if let label {
            // The label fixes the exact length: a copy cut short or grown shows without the key.
            if total - headerEnd != label.payloadLength {
                return entry(
                    armored, kind, label,
                    "is damaged: \(total - headerEnd) payload bytes where its label means \(label.payloadLength) (cut short or altered)"
                )
            }
        } else if let why = AgeFile.payloadLengthProblem(total - headerEnd) {
            return entry(armored, kind, label, "is damaged: \(why)")
        }
        return entry(armored, kind, label, nil)
    }
}
