import Foundation

/// A serial executor on a thread of its own: the executor of the actors that call the store
/// (`VaultGateway`, `AuditWriter`), so that their blocking calls wait there and never on
/// Swift's cooperative pool, which has one thread per core and runs every request's code.
///
/// The store's calls block, whatever the engine: SQLite waits in its busy handler (up to
/// `--busy-timeout`, 30 s by default) while another process writes, and the PostgreSQL store
/// waits on `EventLoopFuture.wait()` for each round trip. On the pool, two such waits on a
/// two-core machine stopped every other request, the log line and the token checks included.
/// One way for both engines: the actor's whole turn runs on this thread, so nothing in the vault
/// or the store needs to know where it runs, and the actor still serializes the connection as
/// before. A thread rather than `NIOThreadPool.runIfActive`: a pool would hand each blocking call
/// a closure and a `sending` vault, and two calls of one actor could then run at once on two
/// threads of the pool; an executor keeps one connection on one thread, one job at a time.
final class StoreThread: SerialExecutor, @unchecked Sendable {
    /// The jobs and the thread's stop signal, held by the thread itself: the executor can go (and
    /// stop the thread) while the thread waits.
    private final class Queue: @unchecked Sendable {
        let condition = NSCondition()
        var jobs: [UnownedJob] = []
        var stopped = false
        /// The executor the jobs run on (unowned: a job runs only while its actor, which holds
        /// the executor, is alive).
        var executor: UnownedSerialExecutor?
        /// The thread, once it runs.
        var thread: pthread_t?
    }

    private let queue = Queue()

    /// Starts the thread, named (at most 15 bytes, Linux's limit) so a stack dump says which
    /// actor waits. Named from inside, and only as well as Foundation can: `Thread.name` set before
    /// `start` does not reach the system's thread, and set inside it may not either when the
    /// thread runs before `start` returns; the name is for people, `isCurrent` for code.
    init(name: String) {
        precondition(name.utf8.count <= 15, "a thread's name is at most 15 bytes")
        let queue = queue
        let thread = Thread { [queue] in
            Thread.current.name = name
            queue.condition.lock()
            queue.thread = pthread_self()
            queue.condition.unlock()
            Self.run(queue)
        }
        queue.executor = asUnownedSerialExecutor()
        thread.start()
    }

    deinit {
        // No job can be queued any more: each holds its actor, which holds this executor.
        queue.condition.lock()
        queue.stopped = true
        queue.condition.signal()
        queue.condition.unlock()
    }

    /// Whether the caller runs on this executor's thread.
    var isCurrent: Bool {
        queue.condition.lock()
        defer { queue.condition.unlock() }
        return queue.thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.condition.lock()
        queue.jobs.append(job)
        queue.condition.signal()
        queue.condition.unlock()
    }

    private static func run(_ queue: Queue) {
        while true {
            queue.condition.lock()
            while queue.jobs.isEmpty && !queue.stopped { queue.condition.wait() }
            if queue.jobs.isEmpty {
                queue.condition.unlock()
                return
            }
            let jobs = queue.jobs
            queue.jobs = []
            let executor = queue.executor!
            queue.condition.unlock()
            for job in jobs { job.runSynchronously(on: executor) }
        }
    }
}
