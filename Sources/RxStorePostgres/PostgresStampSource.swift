import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import RxStore

/// `StateStampSource` for a vault in PostgreSQL: a connection of its own, asked without a thread
/// waiting (PostgresNIO's futures, awaited), so `rxvault serve`'s requests are not held behind
/// one another's round trips. An actor for its connection's state; its one caller
/// (`StampRounds`) asks one read at a time (an actor may be re-entered at an `await`, so two
/// callers at once could each connect).
///
/// A connection the server dropped (a restart, a failover) is made again, at once for a read
/// that found it dead (as `PostgresSession` does), or at the next read; while the server is down
/// every read fails (`unreachable`), clients get 503, and serving goes on by itself when it is
/// back. A server that stops answering fails the read after the same deadline as
/// `PostgresSession`'s.
actor PostgresStampSource: StateStampSource {
    private let location: PostgresLocation
    private let configuration: PostgresConnection.Configuration
    private let deadline: StatementDeadline
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private var connection: PostgresConnection?
    private let logger = Logger(label: "rxvault.postgres.stamp", factory: { _ in SwiftLogNoOpLogHandler() })

    private static let sql = "SELECT write_counter, mac FROM vault_state WHERE singleton = 1"

    init(location: PostgresLocation, environment: [String: String], busyTimeoutMilliseconds: Int32) throws(StoreError) {
        self.location = location
        configuration = try PostgresSession.configuration(
            location: location, environment: environment, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        deadline = StatementDeadline(busyTimeoutMilliseconds: busyTimeoutMilliseconds)
    }

    /// Without waiting: the last reference may go on an event loop's thread (a server's
    /// teardown), where waiting for a loop to stop is a precondition failure.
    deinit {
        let group = group
        guard let connection else {
            group.shutdownGracefully { _ in }
            return
        }
        // The closure holds the connection until it is closed: released before (at the end of
        // this deinit), PostgresNIO's debug builds stop on "deinitialized before being closed".
        connection.close().whenComplete { _ in
            withExtendedLifetime(connection) {}
            group.shutdownGracefully { _ in }
        }
    }

    func stamp() async throws(StoreError) -> (counter: Int, mac: [UInt8])? {
        do {
            let rows: [PostgresRow]
            do {
                rows = try await query()
            } catch let error as PSQLError where PostgresSession.isConnectionLoss(error) {
                // The server dropped a connection that did not look closed yet: once more, anew.
                rows = try await query()
            }
            guard let row = rows.first else { return nil }
            let stored = PostgresStoredRow(row, of: "vault_state", keyColumns: 0)
            return (try stored.integer(0, in: StoredRange.counter), try stored.blob(1))
        } catch let error as StoreError {
            throw error
        } catch {
            throw PostgresSession.map(error, sql: Self.sql, location: location)
        }
    }

    /// The stamp's row, on a connection made now if there is none (or the last one was lost).
    private func query() async throws -> [PostgresRow] {
        if let connection, connection.isClosed { drop() }
        let connection: PostgresConnection
        if let open = self.connection {
            connection = open
        } else {
            connection = try await PostgresConnection.connect(
                on: group.next(), configuration: configuration, id: 2, logger: logger
            ).get()
            self.connection = connection
        }
        do {
            return try await deadline.answer(connection.query(PostgresQuery(unsafeSQL: Self.sql), logger: logger))
                .get().rows
        } catch is StatementDeadline.Passed {
            drop()
            throw deadline.error(at: location)
        } catch let error as PSQLError where PostgresSession.isConnectionLoss(error) {
            drop()
            throw error
        }
    }

    private func drop() {
        guard let old = connection else { return }
        connection = nil
        old.close().whenComplete { _ in _ = old }
    }
}
