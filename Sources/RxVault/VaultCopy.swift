import RxStore

/// `rxvault copy SOURCE TARGET`: the vault moved between a file and a database, either way
/// (`VaultLocation`), without a key. Every row goes across as it is (ciphertext, MACs, the
/// owner's state root and audit chain), from one read snapshot of the source, into a target
/// created for it (a new file, or an empty database, never replacing a vault); then the target
/// is compared with that same snapshot row by row and its engine's structure checked. A source
/// whose rows point at missing ones (`checkStructure`) is refused: it could not be copied as it
/// is. Rows that are the same bytes authenticate the same way: `check` and `export` with the key
/// give on the copy what they give on the source.
public enum VaultCopy {
    /// What was copied.
    public struct Summary: Sendable {
        public var source: String
        public var target: String
        public var prescriptions: Int
        public var versions: Int
        public var attachments: Int
        public var clients: Int
        public var patients: Int
        public var auditEntries: Int
    }

    public static func copy(from source: String, to target: String, busyTimeoutMilliseconds: Int32)
        throws(VaultError) -> Summary
    {
        try VaultLocation.validate(source)
        try VaultLocation.validate(target)
        guard VaultLocation.display(source) != VaultLocation.display(target) else {
            throw .invalidInput("the source and the target are the same vault")
        }
        let (from, header) = try VaultHeader.openStore(at: source, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        // Format 4 has the tables of format 5: the copy keeps the format, and the owner's next
        // write upgrades it where it is (without the passphrase's key, `upgradesWithoutPassphrase`).
        guard header.upgradesWithoutPassphrase else {
            throw .refused(
                "the vault is in format \(header.formatVersion): upgrade it first ('rxvault upgrade --vault \(VaultLocation.display(source))'), then copy it"
            )
        }
        do {
            return try from.read { () throws -> Summary in
                guard let head = try from.auditHead() else { throw StoreError.corrupt("the audit head is missing") }
                // Rows that point at missing ones cannot go across as they are (a database's
                // foreign keys refuse them, and inserting version 1 makes its prescription row):
                // the copy would hide the damage `check` finds in the source.
                let damage = try from.checkStructure()
                guard damage.isEmpty else {
                    throw VaultError.integrity(
                        "the vault at \(VaultLocation.display(source)) is damaged (\(damage.joined(separator: "; "))); "
                            + "nothing was copied: run 'rxvault check' on it")
                }
                try VaultLocation.createStore(
                    at: target, header: try from.header(), auditHeadMAC: head.mac, state: nil, keyRing: nil
                ) { store in
                    try StoreCopy.copyContent(from: from, into: store)
                }
                let copy = try VaultLocation.openStore(at: target, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
                try copy.read {
                    if let difference = try StoreCopy.firstDifference(between: from, and: copy) {
                        throw VaultError.integrity(
                            "the copy at \(VaultLocation.display(target)) is not the same: \(difference)")
                    }
                    let findings = try copy.checkStructure()
                    guard findings.isEmpty else {
                        throw VaultError.integrity(
                            "the copy at \(VaultLocation.display(target)): \(findings.joined(separator: "; "))")
                    }
                }
                return Summary(
                    source: VaultLocation.display(source), target: VaultLocation.display(target),
                    prescriptions: try from.prescriptionCount(), versions: try from.versionCount(),
                    attachments: try from.attachmentCount(), clients: try from.clients().count,
                    patients: try from.patients().count, auditEntries: try from.auditEntries().count)
            }
        } catch let error as StoreError {
            if case .alreadyExists = error {
                throw .alreadyExists(path: VaultLocation.display(target))
            }
            throw VaultError.from(error)
        } catch {
            throw VaultError.wrap(error)
        }
    }
}
