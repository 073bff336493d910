import RxAgent
import RxVault

/// The agent holding this very file (`rxvault unlock`), found before a change of its key slots
/// (`passwd`, `key add`, `key remove`) and locked after it: the key wrapping it unlocked is
/// gone, and it would lock itself at its next use anyway; saying so now tells the owner why
/// the next command asks for a passphrase.
struct KeyChangeAgent {
    let status: AgentStatus?
    let vaultIDHex: String

    init(vault: Vault, path: String) {
        vaultIDHex = vault.header.vaultIDHex
        let file = VaultFileIdentity.fileNumbers(path)
        // The agent of this file, if it is unlocked (one holding another copy of the vault stays).
        status = (try? AgentAccess.status(vaultIDHex: vaultIDHex)).flatMap { $0 }
            .flatMap { status in file.map { $0 == (status.file.device, status.file.inode) } == true ? status : nil }
    }

    func lockAfterChange() {
        guard let status else { return }
        _ = try? AgentAccess.lock(vaultIDHex: vaultIDHex)
        Terminal.err(
            "rxvault: \(status.path) was unlocked (agent pid \(status.pid)) and is locked now: 'rxvault unlock' asks for a passphrase again"
        )
    }
}
