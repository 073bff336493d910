import Foundation
import RxVault

/// Dynamic shell completion (`completion: .custom`): prescription ids, client names and patient
/// names, read from the vault the command line names.
///
/// Every one of these values is sealed in the vault, so completion needs the root key. It never
/// asks for a passphrase (a prompt in the middle of pressing Tab would be a trap): it takes the
/// key from the agent when the vault is unlocked (`rxvault unlock`), else offers nothing. It
/// prints nothing on stderr, opens the vault read-only in effect (nothing it calls writes), and
/// gives up after a second if another rxvault process holds the vault.
enum Completion {
    @Sendable static func prescriptionIDs(_ words: [String], _ index: Int, _ prefix: String) -> [String] {
        offer(words, prefix) { vault in try vault.list().map { $0.id.short } }
    }

    @Sendable static func clientNames(_ words: [String], _ index: Int, _ prefix: String) -> [String] {
        offer(words, prefix) { vault in try vault.clients().map(\.name) }
    }

    @Sendable static func patientNames(_ words: [String], _ index: Int, _ prefix: String) -> [String] {
        offer(words, prefix) { vault in Array(Set(try vault.list().map(\.prescription.patient.name))) }
    }

    /// The values `body` reads from the unlocked vault that start with `prefix`, sorted; none
    /// when the vault is not unlocked or anything fails.
    static func offer(_ words: [String], _ prefix: String, _ body: (Vault) throws -> [String]) -> [String] {
        guard let vault = unlockedVault(words) else { return [] }
        let values = (try? body(vault)) ?? []
        return values.filter { $0.hasPrefix(prefix) }.sorted()
    }

    /// The vault named on the command line (`--vault`), else the default, opened with the root
    /// key its agent holds; nil when there is no agent for it (or `--no-agent`, RXVAULT_NO_AGENT).
    static func unlockedVault(_ words: [String]) -> Vault? {
        if words.contains("--no-agent") || words.contains(where: { $0.hasPrefix("--passphrase") })
            || Environment.values["RXVAULT_NO_AGENT"] == "1"
        {
            return nil
        }
        let path = vaultPath(in: words)
        guard let header = try? VaultHeader.read(at: path),
            let key = AgentAccess.rootKey(path: path, header: header, quiet: true),
            let clock = try? Environment.clock()
        else { return nil }
        return try? Vault.open(at: path, with: .rootKey(key), clock: clock, busyTimeoutMilliseconds: 1000, anchor: nil)
    }

    /// `--vault PATH` or `--vault=PATH` among the words typed so far (a leading `~/` expanded, as
    /// the shell would have), else $RXVAULT_PATH or the default.
    static func vaultPath(in words: [String]) -> String {
        var found: String?
        for (index, word) in words.enumerated() {
            if word == "--vault", index + 1 < words.count { found = words[index + 1] }
            if word.hasPrefix("--vault=") { found = String(word.dropFirst("--vault=".count)) }
        }
        guard let found, !found.isEmpty else { return Environment.defaultVaultPath }
        if found.hasPrefix("~/"), let home = Environment.values["HOME"] { return home + found.dropFirst(1) }
        return found
    }
}
