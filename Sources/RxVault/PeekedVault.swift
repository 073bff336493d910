import RxStore

/// What a vault file says of itself to anyone, without its key and without being touched: its
/// header and its write counter. For files rxvault looks at beside the vault it works on (a
/// sync tool's conflict copy: `ConflictCopies`): opened as an unchanging file
/// (`SQLiteRecordStore(peekingAt:)`), so no lock is taken and no -wal or -shm file is made
/// beside it for a sync tool to carry to every device.
public struct PeekedVault: Sendable {
    public let header: VaultHeader
    /// The state root's write counter as the file stores it: not verified (that takes the key),
    /// so it only tells a person which copy has seen more writes. Nil before format 2, which
    /// has no state root.
    public let writeCounter: Int?
    /// Format 8: the state's knowledge vector as stored, not verified either: which writes the
    /// copy says it holds (a fork's message names the copies that hold what the vault lacks).
    public let knowledge: KnowledgeVector?

    /// Reads the vault file at `path`; `noVault` (or `integrity`, `unsupportedVersion`, as
    /// `VaultHeader.read` says them) when it is not one this rxvault reads.
    public static func peek(at path: String) throws(VaultError) -> PeekedVault {
        do {
            let store = try SQLiteRecordStore(peekingAt: path)
            let header = try VaultHeader(store.header(), slots: store.keySlots())
            let row = header.formatVersion >= 2 ? try store.vaultState() : nil
            let knowledge = row.flatMap { VaultState.decode($0.state, counter: $0.writeCounter)?.knowledge }
            return PeekedVault(header: header, writeCounter: row?.writeCounter, knowledge: knowledge)
        } catch let error as StoreError {
            throw VaultError.from(error)
        } catch {
            throw VaultError.wrap(error)
        }
    }
}
