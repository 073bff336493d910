import Foundation
import RxVault
import Synchronization

/// How the CLI names the conflict copies beside a vault file (`ConflictCopies`): the one line
/// every command that opens a vault file says first on a terminal, and the words `status` and
/// `check` use for each copy. What the user is told to do is said here only (`advice`), so it
/// changes in one place when rxvault can merge a copy (issue 48).
///
/// Only on a terminal, so scripts and their logs see nothing new; once per command, as
/// `AnchorWarning`; not for a vault in a database, which has no folder. `status` and `check`
/// name the copies in their own output, terminal or not, and say no line before it.
enum ConflictCopyNotice {
    private static let said = Mutex(false)

    /// What to do with copies: merge each (nothing either side wrote is lost), then delete it.
    static func advice(count: Int) -> String {
        (count == 1 ? "it may hold writes this file lacks" : "they may hold writes this file lacks")
            + ": 'rxvault merge COPY' brings them in; delete a copy once merged"
    }

    /// The notice's line (without "rxvault: "): how many, the first few names, the advice.
    static func line(for copies: [ConflictCopy]) -> String {
        let shown = copies.prefix(3).map { Table.displayable($0.name) }
        let names =
            shown.joined(separator: ", ")
            + (copies.count > shown.count ? " and \(copies.count - shown.count) more" : "")
        let count = copies.count == 1 ? "1 conflict copy" : "\(copies.count) conflict copies"
        return "\(count) beside the vault: \(names); "
            + advice(count: copies.count)
    }

    /// One copy as `status` and `check` name it: "NAME (Syncthing's conflict copy, write 12,
    /// changed 2026-12-07 10:15)".
    static func describe(_ copy: ConflictCopy) -> String {
        let counter = copy.writeCounter.map { "write \($0)" } ?? "not readable as a vault"
        return
            "\(Table.displayable(copy.name)) (\(copy.form.described), \(counter), changed \(localTime(copy.modified)))"
    }

    /// Says the notice on stderr, once per command, when stderr is a terminal and copies lie
    /// beside the vault file at `path` (`header`: the vault's, read already).
    static func sayOnce(vaultPath path: String, header: VaultHeader) {
        guard Terminal.stderrIsTTY, !VaultLocation.isDatabase(path), first() else { return }
        let copies = ConflictCopies.find(besideVaultAt: path, vaultID: header.vaultID)
        guard !copies.isEmpty else { return }
        Terminal.err("rxvault: " + line(for: copies))
    }

    /// The copies beside the vault at `path`, for `check`: its header is read apart (the vault
    /// may not open), and when it cannot be, only the sync tools' names are found.
    static func copies(besideVaultAt path: String) -> [ConflictCopy] {
        guard !VaultLocation.isDatabase(path) else { return [] }
        return ConflictCopies.find(besideVaultAt: path, vaultID: (try? VaultHeader.read(at: path))?.vaultID)
    }

    /// For `status` and `check`, which name the copies in their output: no line before it.
    static func namedInOutput() { _ = first() }

    /// True the first time only.
    private static func first() -> Bool {
        said.withLock { said in
            defer { said = true }
            return !said
        }
    }

    private static func localTime(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        return formatter.string(from: date)
    }

    /// `modified` as JSON gives it: ISO 8601, UTC, whole seconds.
    static func isoTime(_ date: Date) -> String {
        ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down)))
    }
}
