import RxCrypto

/// The names `backup DIR` gives its files: `rxvault-<vault>-<time>.age`, e.g.
/// `rxvault-3f9a2c1e-20261122T221530Z.age`, where `<vault>` is the first 8 hex digits of the
/// vault id (as `status` prints it) and `<time>` the UTC time to the second; a second backup in
/// the same second gets `_2`, `_3`, ... before `.age` (`_` sorts after `.`, so even those names
/// sort in the order they were made). Names sort as the backups' times do, and
/// say which vault and when without any key. A name is only a claim (anyone can rename a file):
/// `backup list --verify` checks it against what is inside.
public struct BackupName: Hashable, Sendable, CustomStringConvertible {
    public static let prefix = "rxvault-"
    public static let suffix = ".age"
    public static let vaultDigits = 8

    /// The first 8 hex digits of the vault id.
    public let vault: String
    public let time: BackupTime
    /// 1 for the first backup in its second; 2, 3, ... after it.
    public let sequence: Int

    public init(vaultID: String, time: BackupTime, sequence: Int = 1) {
        vault = String(vaultID.lowercased().prefix(Self.vaultDigits))
        self.time = time
        self.sequence = sequence
    }

    public var description: String {
        Self.prefix + vault + "-" + time.compact + (sequence > 1 ? "_\(sequence)" : "") + Self.suffix
    }

    /// Parses a file name (not a path); nil for anything `backup DIR` does not write.
    public init?(parsing name: String) {
        guard name.hasPrefix(Self.prefix), name.hasSuffix(Self.suffix) else { return nil }
        let core = name.dropFirst(Self.prefix.count).dropLast(Self.suffix.count)
        let parts = core.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let vault = parts[0]
        let timeParts = parts[1].split(separator: "_", omittingEmptySubsequences: false)
        guard vault.count == Self.vaultDigits,
            vault.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }),
            timeParts.count <= 2, let time = BackupTime(compact: String(timeParts[0]))
        else { return nil }
        var sequence = 1
        if timeParts.count == 2 {
            let digits = timeParts[1]
            guard !digits.isEmpty, digits.count <= 6, digits.first != "0",
                digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                let n = Int(digits), n >= 2
            else { return nil }
            sequence = n
        }
        self.vault = String(vault)
        self.time = time
        self.sequence = sequence
    }

    /// Whether the name belongs to the vault with this id (hex).
    public func names(vaultID: String) -> Bool { vault == vaultID.lowercased().prefix(Self.vaultDigits) }
}

/// The label a backup to recipients carries in its age header, readable without any key and
/// covered by the header MAC: `-> rxvault-backup v1 <vault id, 32 hex> <time> <snapshot bytes>`.
/// The size of what is inside fixes the length of the whole age payload, so a copy cut short
/// (or grown) is told without the key. A backup with a passphrase cannot carry one (in age an
/// scrypt stanza must stand alone): its name is all there is to go by without the passphrase.
public struct BackupLabel: Hashable, Sendable {
    public static let stanzaType = "rxvault-backup"
    public let vaultID: String
    public let time: BackupTime
    /// The size of the vault snapshot inside (the age plaintext).
    public let snapshotBytes: Int

    public init(vaultID: String, time: BackupTime, snapshotBytes: Int) {
        self.vaultID = vaultID.lowercased()
        self.time = time
        self.snapshotBytes = snapshotBytes
    }

    public var arguments: [String] { ["v1", vaultID, time.compact, String(snapshotBytes)] }

    /// Nil unless the stanza is a well-formed v1 label.
    public init?(type: String, arguments: [String]) {
        guard type == Self.stanzaType, arguments.count == 4, arguments[0] == "v1", arguments[1].count == 32,
            arguments[1].utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }),
            let time = BackupTime(compact: arguments[2]), arguments[3].count <= 15,
            arguments[3].utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            arguments[3] == "0" || arguments[3].first != "0", let bytes = Int(arguments[3])
        else { return nil }
        vaultID = arguments[1]
        self.time = time
        snapshotBytes = bytes
    }

    /// The length of the age payload (nonce and chunks) that holds `snapshotBytes` bytes.
    public var payloadLength: Int { AgeFile.payloadLength(plaintextBytes: snapshotBytes) }
}
