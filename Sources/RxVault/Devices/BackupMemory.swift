import Foundation

/// The backups this computer wrote of one vault, with the knowledge each holds (issue 48): when
/// the vault file turns out to lack writes made here (a fork, a rollback), the warning names the
/// dated backups that hold them, so `rxvault merge BACKUP` brings them back. Kept beside the
/// device knowledge (`<vault id>.backups`), the newest `limit`; a backup moved or deleted since
/// is simply not named. Nothing here is secret (paths and vectors); the knowledge is as the
/// snapshot stored it (the backup itself is verified when it is merged or restored).
public struct BackupMemory {
    let anchor: RollbackAnchor
    let vaultIDHex: String

    public init(anchor: RollbackAnchor, vaultIDHex: String) {
        self.anchor = anchor
        self.vaultIDHex = vaultIDHex
    }

    /// One backup written here.
    public struct Backup: Equatable, Sendable {
        public let path: String
        /// When it was made (ISO 8601, the time its name carries).
        public let time: String
        public let knowledge: KnowledgeVector
    }

    static let magic = "rxvault backup memory 1"
    static let limit = 100

    private var file: String { anchor.directory + "/" + vaultIDHex + ".backups" }

    /// Remembers the backup at `path` (made absolute), the oldest forgotten past `limit`.
    public func remember(path: String, time: String, knowledge: KnowledgeVector) {
        let absolute = RollbackAnchor.Key.canonical(path)
        var backups = all().filter { $0.path != absolute }
        backups.append(Backup(path: absolute, time: time, knowledge: knowledge))
        if backups.count > Self.limit { backups.removeFirst(backups.count - Self.limit) }
        let lines = backups.map { "backup \(Hex.encode($0.knowledge.encoded())) \($0.time) \($0.path)" }
        if let problem = anchor.write(([Self.magic] + lines).joined(separator: "\n") + "\n", to: file) {
            anchor.notKept(problem)
        }
    }

    /// The backups still in place that hold every write `history` says the vault lacks, newest first.
    public func holding(_ history: HistoryFinding) -> [Backup] {
        all().filter { history.isHeld(by: $0.knowledge) && FileManager.default.fileExists(atPath: $0.path) }
            .reversed()
    }

    func all() -> [Backup] {
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { return [] }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: true)
        guard lines.first.map(String.init) == Self.magic else { return [] }
        return lines.dropFirst().compactMap { line in
            let parts = line.split(separator: " ", maxSplits: 3).map(String.init)
            guard parts.count == 4, parts[0] == "backup", let bytes = Hex.decode(parts[1]),
                let (knowledge, used) = KnowledgeVector.decode(bytes), used == bytes.count
            else { return nil }
            return Backup(path: parts[3], time: parts[2], knowledge: knowledge)
        }
    }
}
