import RxStore

/// PostgreSQL as a `DatabaseEngine`: what the CLI registers with RxVault, with the process's
/// environment (libpq's PG* variables, the password's sources).
public struct PostgresEngine: DatabaseEngine {
    public let environment: [String: String]

    public init(environment: [String: String]) { self.environment = environment }

    public var schemes: [String] { ["postgres", "postgresql"] }

    public func display(_ location: String) throws(StoreError) -> String {
        try PostgresLocation(url: location, environment: environment).display
    }

    public func open(_ location: String, busyTimeoutMilliseconds: Int32) throws -> any RecordStore {
        try PostgresRecordStore(
            openingAt: PostgresLocation(url: location, environment: environment), environment: environment,
            busyTimeoutMilliseconds: busyTimeoutMilliseconds)
    }

    public func create(
        _ location: String, header: VaultHeaderRecord, auditHeadMAC: [UInt8], state: VaultStateRecord?,
        keyRing: KeyRingRecord?, busyTimeoutMilliseconds: Int32, fill: ((any RecordStore) throws -> Void)?
    ) throws {
        try PostgresRecordStore.create(
            at: PostgresLocation(url: location, environment: environment), environment: environment, header: header,
            auditHeadMAC: auditHeadMAC, state: state, keyRing: keyRing,
            busyTimeoutMilliseconds: busyTimeoutMilliseconds,
            fill: fill.map { fill in { try fill($0) } })
    }

    public func stampSource(_ location: String, busyTimeoutMilliseconds: Int32) throws -> any StateStampSource {
        try PostgresStampSource(
            location: PostgresLocation(url: location, environment: environment), environment: environment,
            busyTimeoutMilliseconds: busyTimeoutMilliseconds)
    }
}
