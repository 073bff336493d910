import Foundation
import RxStore

/// Where a vault is: a file path (the embedded default, SQLite), or a URL of a database (a
/// practice's shared vault in PostgreSQL), served by the `DatabaseEngine` the program registered
/// (`databaseEngine`: the CLI registers RxStorePostgres's). Everything above the store works on
/// a location string and never asks which: this is the one place that does. Anything of the
/// form `scheme://...` is a URL, never a file path (`--vault postgres://...` once made a folder
/// named `postgres:`).
public enum VaultLocation {
    /// The engine for database URLs; nil in a program that links none (a URL is then refused).
    nonisolated(unsafe) public static var databaseEngine: (any DatabaseEngine)?

    /// Whether `location` is a URL (`scheme://`), not a file path.
    public static func isDatabase(_ location: String) -> Bool { scheme(of: location) != nil }

    /// The scheme of a URL location, lower-cased; nil for a file path.
    private static func scheme(of location: String) -> String? {
        // Bytes, not Foundation's `range(of:)`: a server asks this of its path at each request.
        let utf8 = Array(location.utf8)
        guard let colon = utf8.firstIndex(of: UInt8(ascii: ":")),
            utf8[(colon + 1)...].starts(with: [UInt8(ascii: "/"), UInt8(ascii: "/")])
        else { return nil }
        let bytes = utf8[..<colon]
        func isLetter(_ c: UInt8) -> Bool { (0x41...0x5a).contains(c) || (0x61...0x7a).contains(c) }
        func isSchemeCharacter(_ c: UInt8) -> Bool {
            isLetter(c) || (0x30...0x39).contains(c) || c == UInt8(ascii: "+") || c == UInt8(ascii: "-")
                || c == UInt8(ascii: ".")
        }
        guard let first = bytes.first, isLetter(first), bytes.allSatisfy(isSchemeCharacter) else { return nil }
        let scheme = String(decoding: bytes, as: UTF8.self)
        return scheme.lowercased()
    }

    /// The engine for the URL `location`, or `badLocation` naming what this rxvault reads.
    static func engine(for location: String) throws(VaultError) -> any DatabaseEngine {
        let scheme = scheme(of: location) ?? ""
        guard let engine = databaseEngine, engine.schemes.contains(scheme) else {
            let known = databaseEngine?.schemes.map { $0 + "://" }.joined(separator: ", ")
            throw .badLocation(
                "\(scheme):// is not a kind of vault location this rxvault knows"
                    + (known.map { " (a file path, or \($0))" } ?? " (a file path)"))
        }
        return engine
    }

    /// How messages name the vault: a file as given; a database by its URL with every part
    /// filled in (never a password). A URL that cannot be read is never shown as given (a
    /// password typed into it could be anywhere in it): only its scheme.
    public static func display(_ location: String) -> String {
        guard let scheme = scheme(of: location) else { return location }
        guard let engine = try? engine(for: location), let shown = try? engine.display(location) else {
            return "a \(scheme):// URL that cannot be read"
        }
        return shown
    }

    /// Checks a location before any other work (an unknown scheme, a URL with a password, a bad
    /// port): `init` and `copy` say so before asking for anything.
    public static func validate(_ location: String) throws(VaultError) {
        guard isDatabase(location) else { return }
        do { _ = try engine(for: location).display(location) } catch let error as StoreError {
            throw VaultError.from(error)
        } catch {
            throw VaultError.wrap(error)
        }
    }

    /// Opens the store at `location`.
    static func openStore(at location: String, busyTimeoutMilliseconds: Int32) throws -> any RecordStore {
        guard isDatabase(location) else {
            return try SQLiteRecordStore(openingAt: location, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        }
        return try engine(for: location).open(location, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
    }

    /// Creates a store at `location` (never replacing one), with `fill` run on it before it is
    /// in place (a copy's rows): a database's tables in one transaction, a file built and filled
    /// beside its path, then linked in.
    static func createStore(
        at location: String, header: VaultHeaderRecord, auditHeadMAC: [UInt8], state: VaultStateRecord?,
        keyRing: KeyRingRecord?, busyTimeoutMilliseconds: Int32 = Database.defaultBusyTimeoutMilliseconds,
        fill: ((any RecordStore) throws -> Void)? = nil
    ) throws {
        if isDatabase(location) {
            try engine(for: location).create(
                location, header: header, auditHeadMAC: auditHeadMAC, state: state, keyRing: keyRing,
                busyTimeoutMilliseconds: busyTimeoutMilliseconds, fill: fill)
            return
        }
        try SQLiteRecordStore.create(
            at: location, header: header, auditHeadMAC: auditHeadMAC, state: state, keyRing: keyRing, fill: fill)
    }
}
