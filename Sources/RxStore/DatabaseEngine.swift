/// A store engine whose vaults are at URLs rather than in files: a database server. RxStore says
/// what one offers; an engine module implements it (RxStorePostgres), and the program that links
/// that module registers it with RxVault (`VaultLocation.databaseEngine`, set by the CLI at
/// start). So RxVault, and whatever is built on it alone (the fuzzers, the library's users),
/// never links a server's client library.
public protocol DatabaseEngine: Sendable {
    /// The URL schemes it serves ("postgres", "postgresql").
    var schemes: [String] { get }
    /// The location as messages show it: every part filled in, never a password. Throws
    /// `badLocation` for a URL it cannot read (a password in it, an unknown parameter).
    func display(_ location: String) throws(StoreError) -> String
    /// Opens the vault at `location` (`missing` when there is none, `notAVault` when what is
    /// there is something else).
    func open(_ location: String, busyTimeoutMilliseconds: Int32) throws -> any RecordStore
    /// Creates a vault at `location` with `header`, the audit head's MAC and the first state root
    /// and key ring, then runs `fill` on the new store, all or nothing; never replaces a vault
    /// (`alreadyExists`) nor takes a place that holds anything else.
    func create(
        _ location: String, header: VaultHeaderRecord, auditHeadMAC: [UInt8], state: VaultStateRecord?,
        keyRing: KeyRingRecord?, busyTimeoutMilliseconds: Int32, fill: ((any RecordStore) throws -> Void)?
    ) throws
    /// A reader of the state root's stamp on a connection of its own, for a server that checks
    /// it on every request (`StateStampSource`).
    func stampSource(_ location: String, busyTimeoutMilliseconds: Int32) throws -> any StateStampSource
}
