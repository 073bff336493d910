import RxVault

/// Writes the reads the server answered to the owner's audit log, on a connection of its own
/// (`Vault.anotherConnection`): the reads being answered on the gateway's connection never wait
/// for these writes, which take a sealed box, a hash and a MAC per entry.
actor AuditWriter {
    let vault: Vault

    init(vault: sending Vault) {
        self.vault = vault
    }

    func write(_ events: [AuditEvent]) throws(VaultError) -> Vault.ServedReadsWrite {
        try vault.logServedReads(events)
    }
}
