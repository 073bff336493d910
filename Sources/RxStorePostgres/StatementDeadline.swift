import NIOCore
import RxStore

/// How long one statement may take before its connection is given up on, for every connection
/// to the vault (`PostgresSession`'s, `PostgresStampSource`'s): longer than any wait for the
/// write lock (`lock_timeout`), so only a server that stopped answering (a network cut, a host
/// gone) reaches it, and `serve` then answers 503 instead of hanging.
struct StatementDeadline {
    let limit: TimeAmount

    init(busyTimeoutMilliseconds: Int32) { limit = .milliseconds(Int64(busyTimeoutMilliseconds) + 30_000) }

    /// What a statement past the limit fails with (`answer(_:)`); `error(at:)` says it.
    struct Passed: Error {}

    /// `future`'s result, or `Passed` once the limit has gone by.
    func answer<T: Sendable>(_ future: EventLoopFuture<T>) -> EventLoopFuture<T> {
        let promise = future.eventLoop.makePromise(of: T.self)
        future.cascade(to: promise)
        let timer = future.eventLoop.scheduleTask(in: limit) { promise.fail(Passed()) }
        promise.futureResult.whenComplete { _ in timer.cancel() }
        return promise.futureResult
    }

    func error(at location: PostgresLocation) -> StoreError {
        .unreachable("\(location.display) did not answer within \(limit.nanoseconds / 1_000_000_000) s")
    }
}
