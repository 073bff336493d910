import RxCrypto
import RxVault

/// Which key opens the vault as its owner on this command line: the one place that chooses
/// between the agent holding the root key (`rxvault unlock`) and the passphrase. `openVault`,
/// `backup` and `serve` all ask here.
extension VaultOptions {
    /// What a command does for the passphrase when no agent opens the vault.
    enum PassphraseNeed {
        /// Reads it from its file or descriptor, else asks (failing, and saying why, when it cannot).
        case required
        /// Reads it only when it can be had: given (`--passphrase-file`, `--passphrase-fd`,
        /// `RXVAULT_PASSPHRASE_FILE`), or asked for at a terminal without `--no-input`.
        case ifAvailable
        /// Never: only an agent's key will do.
        case never
    }

    /// The owner's key for the vault at `vaultPath` (whose header the caller has read): the root
    /// key from the agent that holds it, else the passphrase as `passphrase` says; nil when
    /// neither is to be had (never with `.required`).
    ///
    /// The agent is not asked when `agent` is false (`passwd` must prove the passphrase; a backup
    /// whose age layer is the passphrase needs it anyway), with `--no-agent` or
    /// `RXVAULT_NO_AGENT=1`, or when a passphrase is given on this command line
    /// (`--passphrase-file`, `--passphrase-fd`): what the user names explicitly is what is used.
    func ownerKey(header: VaultHeader, agent: Bool = true, passphrase: PassphraseNeed = .required) throws -> VaultKey? {
        if agent, mayUseAgent, let rootKey = AgentAccess.rootKey(path: vaultPath, header: header) {
            return .rootKey(rootKey)
        }
        switch passphrase {
        case .never:
            return nil
        case .ifAvailable where !PassphraseSource.isGivenWithoutPrompt(self) && (noInput || !Terminal.canAsk):
            return nil
        case .required, .ifAvailable:
            return .passphrase(try PassphraseSource.existing(self))
        }
    }

    /// Whether an agent may stand in for the passphrase on this command line.
    var mayUseAgent: Bool {
        !noAgent && !AgentAccess.disabledByEnvironment && passphraseFile == nil && passphraseFd == nil
    }
}
