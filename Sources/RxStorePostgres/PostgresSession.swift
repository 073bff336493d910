import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO
import RxStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value bound to a statement's parameter: the three kinds the vault's tables hold. Hashable,
/// so that `InsertBuffer` finds a kept row by its key.
enum BoundValue: Hashable {
    case text(String)
    case integer(Int64)
    case bytes([UInt8])
    /// A `text[]`: the ids of `= ANY($1)`.
    case texts([String])
    case null

    /// A value as every engine writes it (`StoredValue`).
    init(_ value: StoredValue) {
        switch value {
        case .integer(let int): self = .integer(int)
        case .text(let text): self = .text(text)
        case .blob(let bytes): self = .bytes(bytes)
        case .null: self = .null
        }
    }
}

/// One connection to the server, used synchronously: RxVault's store calls are synchronous (as
/// SQLite's are), so each query is sent on this session's own event loop and waited for. The
/// loop is this session's alone, never one a caller may be running on (`rxvault serve`'s), so the
/// wait cannot deadlock; and no Swift task is involved, so a caller on the concurrency pool waits
/// for a thread of its own, not for a pool thread it is holding.
///
/// A connection that the server dropped (a restart, a failover) is made again at the next call
/// outside a transaction: `rxvault serve` answers 503 while the server is down and serves again
/// when it is back, with no restart of its own.
final class PostgresSession: @unchecked Sendable {
    let location: PostgresLocation
    private let environment: [String: String]
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private var connection: PostgresConnection?
    private let busyTimeoutMilliseconds: Int32
    /// How deep in `transaction` calls we are: a dropped connection is only made again at 0.
    private(set) var transactionDepth = 0
    /// PostgresNIO logs at debug level what it does; none of it is for rxvault's users.
    private let logger = Logger(label: "rxvault.postgres", factory: { _ in SwiftLogNoOpLogHandler() })

    init(location: PostgresLocation, environment: [String: String], busyTimeoutMilliseconds: Int32) throws(StoreError) {
        self.location = location
        self.environment = environment
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        try connect()
    }

    deinit {
        if let connection { try? connection.close().wait() }
        try? group.syncShutdownGracefully()
    }

    // MARK: - Queries

    /// Runs one statement with `values` bound to `$1`, `$2`...; returns its rows. The rows kept
    /// by `insert` go first.
    @discardableResult
    func query(_ sql: String, _ values: [BoundValue] = []) throws(StoreError) -> [PostgresRow] {
        if !pending.isEmpty { try sendPending() }
        do {
            return try run(sql, values)
        } catch let error as PSQLError where transactionDepth == 0 && Self.isConnectionLoss(error) {
            // The server dropped us (restarted, failed over): once more on a new connection.
            dropConnection()
            do { return try run(sql, values) } catch { throw map(error, sql: sql) }
        } catch {
            throw map(error, sql: sql)
        }
    }

    /// Rows inserted in the transaction under way and not sent yet (`InsertBuffer`).
    private var pending = InsertBuffer()

    /// Inserts a row through `insert`: at once outside a transaction; inside one, kept with the
    /// others until the next statement or the commit (`InsertBuffer`), or until a statement's worth.
    func insert(_ insert: RowInsert, _ values: [BoundValue]) throws(StoreError) {
        guard transactionDepth > 0 else {
            try query(insert.statement(rows: 1, placeholder: PostgresRecordStore.placeholder), values)
            return
        }
        pending.add(insert, values)
        if pending.count >= InsertBuffer.rowsPerStatement { try sendPending() }
    }

    /// Sends the kept rows (an error names the one-row statement, never a value).
    private func sendPending() throws(StoreError) {
        for statement in pending.take() {
            do { try run(statement.sql, statement.values) } catch { throw map(error, sql: statement.shown) }
        }
    }

    @discardableResult
    private func run(_ sql: String, _ values: [BoundValue]) throws -> [PostgresRow] {
        try send(sql, values).rows
    }

    /// Sends one statement and waits for its result. A connection the server closed (a restart)
    /// takes no more queries (one sent on it is never answered): it is dropped here. A new one
    /// is made only outside a transaction: inside one, a new connection would carry on in
    /// autocommit, without the transaction or the write lock, so the loss is an error.
    private func send(_ sql: String, _ values: [BoundValue]) throws -> PostgresQueryResult {
        if let connection, connection.isClosed { dropConnection() }
        if connection == nil {
            guard transactionDepth == 0 else {
                throw StoreError.unreachable("the connection to \(location.display) was lost during a transaction")
            }
            try connect()
        }
        guard let connection else { throw StoreError.unreachable("no connection") }
        var bindings = PostgresBindings(capacity: values.count)
        for value in values {
            switch value {
            case .text(let text): bindings.append(text)
            case .integer(let int): bindings.append(int)
            case .bytes(let bytes): bindings.append(ByteBuffer(bytes: bytes))
            case .texts(let texts): bindings.append(texts)
            case .null: bindings.appendNull()
            }
        }
        do {
            return try waitAtMost(connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger))
        } catch let error as PSQLError where Self.isConnectionLoss(error) {
            dropConnection()
            throw error
        }
    }

    /// Lets go of the connection: closed, and kept alive until it is (PostgresNIO expects every
    /// connection closed before it is released).
    private func dropConnection() {
        guard let old = connection else { return }
        connection = nil
        old.close().whenComplete { _ in _ = old }
    }

    /// `future`'s value; past the `StatementDeadline`, the connection closed and `unreachable`.
    private func waitAtMost<T: Sendable>(_ future: EventLoopFuture<T>) throws -> T {
        let deadline = StatementDeadline(busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        do {
            return try deadline.answer(future).wait()
        } catch is StatementDeadline.Passed {
            dropConnection()
            throw deadline.error(at: location)
        }
    }

    /// Runs `body` in one transaction begun with `begin` (committed when it returns, rolled back
    /// when it throws). Nested calls run inside the outer one.
    func transaction<T>(begin: [String], _ body: () throws -> T) throws -> T {
        if transactionDepth > 0 {
            transactionDepth += 1
            defer { transactionDepth -= 1 }
            return try body()
        }
        if connection == nil { try connect() }
        // From BEGIN on, the connection is the transaction's: lost, it is not made again.
        transactionDepth = 1
        defer { transactionDepth = 0 }
        for statement in begin {
            do {
                try run(statement, [])
            } catch {
                _ = try? run("ROLLBACK", [])
                throw map(error, sql: statement)
            }
        }
        let result: T
        do {
            result = try body()
            if !pending.isEmpty { try sendPending() }
        } catch {
            pending = InsertBuffer()
            _ = try? run("ROLLBACK", [])
            throw error
        }
        // COMMIT of a transaction a failed statement aborted answers "ROLLBACK", not an error.
        let committed: PostgresQueryResult
        do { committed = try send("COMMIT", []) } catch { throw map(error, sql: "COMMIT") }
        guard committed.metadata.command == "COMMIT" else {
            throw StoreError.engine(
                name: "PostgreSQL", code: "25P02", message: "the transaction was rolled back, not committed",
                sql: "COMMIT")
        }
        return result
    }

    // MARK: - Connecting

    private func connect() throws(StoreError) {
        let configuration = try Self.configuration(
            location: location, environment: environment, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        do {
            let connection = try PostgresConnection.connect(
                on: group.next(), configuration: configuration, id: 1, logger: logger
            ).wait()
            self.connection = connection
        } catch {
            dropConnection()
            throw map(error, sql: nil)
        }
    }

    /// How every connection to `location` is made (this session's, and `PostgresStampSource`'s).
    static func configuration(
        location: PostgresLocation, environment: [String: String], busyTimeoutMilliseconds: Int32
    ) throws(StoreError) -> PostgresConnection.Configuration {
        let password = PasswordFile.password(for: location, environment: environment)
        var configuration: PostgresConnection.Configuration
        if location.host.hasPrefix("/") {
            configuration = .init(
                unixSocketPath: location.host + "/.s.PGSQL.\(location.port)", username: location.user,
                password: password, database: location.database)
        } else {
            configuration = .init(
                host: location.host, port: location.port, username: location.user, password: password,
                database: location.database, tls: try tls(location))
        }
        configuration.options.connectTimeout = .seconds(5)
        // A second writer waits this long for the vault's write lock, then gives up (`busy`);
        // at least 1 ms, since 0 would mean no limit.
        configuration.options.additionalStartupParameters = [
            ("application_name", "rxvault"), ("lock_timeout", "\(max(1, busyTimeoutMilliseconds))ms")
        ]
        return configuration
    }

    /// TLS as `sslmode` asks (`PostgresLocation.SSLMode`).
    private static func tls(_ location: PostgresLocation) throws(StoreError) -> PostgresConnection.Configuration.TLS {
        var configuration = TLSConfiguration.makeClientConfiguration()
        switch location.sslMode {
        case .disable: return .disable
        case .prefer: configuration.certificateVerification = .none
        // As libpq: `require` checks the chain when a root certificate is given, else nothing.
        case .require:
            configuration.certificateVerification = location.sslRootCert == nil ? .none : .noHostnameVerification
        case .verifyCA: configuration.certificateVerification = .noHostnameVerification
        case .verifyFull: configuration.certificateVerification = .fullVerification
        }
        if location.sslMode == .verifyCA || location.sslMode == .verifyFull
            || (location.sslMode == .require && location.sslRootCert != nil)
        {
            guard let root = location.sslRootCert else {
                throw .badLocation("sslmode \(location.sslMode.rawValue) needs sslrootcert (or PGSSLROOTCERT)")
            }
            // As libpq: ~/.postgresql/root.crt when neither names one. Missing, it is said so,
            // not left to TLS's "no such file system object".
            guard access(root, R_OK) == 0 else {
                throw .badLocation(
                    "sslmode=\(location.sslMode.rawValue) checks the server's certificate against a root certificate, "
                        + "and \(root) cannot be read: name one with sslrootcert=FILE in the URL, or PGSSLROOTCERT")
            }
            configuration.trustRoots = .file(root)
        }
        do {
            let context = try NIOSSLContext(configuration: configuration)
            return location.sslMode == .prefer ? .prefer(context) : .require(context)
        } catch {
            throw .badLocation("cannot set up TLS: \(error)")
        }
    }

    // MARK: - Errors

    static func isConnectionLoss(_ error: PSQLError) -> Bool {
        [.serverClosedConnection, .connectionError, .uncleanShutdown, .clientClosedConnection].contains(error.code)
    }

    /// The server's SQLSTATE classes as `StoreError` (message and SQL, never a bound value).
    func map(_ error: any Error, sql: String?) -> StoreError { Self.map(error, sql: sql, location: location) }

    /// Why TLS refused the server, in the terms of `sslmode`; nil when `error` is not TLS's.
    private static func tlsRefusal(_ error: (any Error)?, location: PostgresLocation) -> String? {
        let root = location.sslRootCert ?? "no root certificate"
        switch error {
        case let extra as NIOSSLExtraError where extra == .failedToValidateHostname:
            return "its certificate does not name \(location.host) (sslmode=verify-full checks the name; "
                + "connect by a name the certificate has, or use verify-ca)"
        case let ssl as NIOSSLError:
            // Only a mode that checks the certificate, with a root to check it against, and a
            // failure that says so, is blamed on the certificate.
            if case .handshakeFailed = ssl, location.sslRootCert != nil,
                location.sslMode == .verifyCA || location.sslMode == .verifyFull || location.sslMode == .require,
                "\(ssl)".contains("CERTIFICATE_VERIFY_FAILED")
            {
                return "its certificate was not accepted: it is not signed by the authority in \(root) "
                    + "(sslmode=\(location.sslMode.rawValue)), or has expired"
            }
            return "the TLS handshake failed (\(ssl))"
        default:
            return nil
        }
    }

    /// `map` for a connection to `location`.
    static func map(_ error: any Error, sql: String?, location: PostgresLocation) -> StoreError {
        if let error = error as? StoreError { return error }
        let place = "the PostgreSQL server at \(location.display)"
        guard let error = error as? PSQLError else {
            if let error = error as? NIOSSLError { return .unreachable("TLS with \(place) failed: \(error)") }
            return .unreachable("cannot reach \(place): \(error)")
        }
        guard error.code == .server, let info = error.serverInfo else {
            switch error.code {
            case .sslUnsupported:
                return .unreachable("\(place) does not offer TLS, which sslmode=\(location.sslMode.rawValue) requires")
            case .authMechanismRequiresPassword:
                return .unreachable(
                    "\(place) asks for a password for \(location.user): give it in PGPASSWORD, PGPASSFILE or ~/.pgpass")
            default:
                if let refusal = tlsRefusal(error.underlying, location: location) {
                    return .unreachable("TLS with \(place) failed: \(refusal)")
                }
                let cause = error.underlying.map { "\($0)" } ?? error.code.description
                return .unreachable("cannot reach \(place): \(cause)")
            }
        }
        let state = info[.sqlState] ?? "?????"
        let message = info[.message] ?? "no message"
        switch state {
        case "55P03", "40001", "40P01": return .busy
        case "53100", "53200", "53300", "25006": return .cannotWrite("\(place): \(message)")
        case "28P01", "28000": return .unreachable("\(place) refused the login as \(location.user): \(message)")
        case "3D000": return .missing(path: location.display)
        case "42501": return PrivilegeRefusal(message: message, sql: sql, role: location.user).error
        case "57P01", "57P02", "57P03": return .unreachable("\(place) is shutting down or starting: \(message)")
        default: return .engine(name: "PostgreSQL", code: state, message: message, sql: sql)
        }
    }
}
