/// A value written to a column: the four kinds the vault's tables hold. Each record says once
/// what it binds (`StoredRecord.storedValues`); each engine turns these into its own parameters
/// (SQLite binds them as they are, `Statement.bind`; PostgreSQL maps them to its wire values).
public enum StoredValue: Sendable, Equatable {
    case integer(Int64)
    case text(String)
    case blob([UInt8])
    case null
}
