import RxVault

/// The state stamp of a vault in a database for many requests at once, none older than the
/// request: a request joins the next read to begin, never one already out (it could have begun
/// before a revoke the request must see was committed). While one read is out, the requests that
/// arrive wait together for the one that begins when it returns. So under load one round trip
/// answers as many requests as arrived during the last, and the gateway is free meanwhile: on a
/// database, a request used to hold the gateway for its own round trip, and requests answered
/// one round trip at a time (docs/performance.md, "The vault in PostgreSQL").
actor StampRounds {
    private let reader: StateStampReader
    /// The read out now, if any.
    private var reading = false
    /// Rounds begun so far: a later round's stamp is at least as current as an earlier one's.
    private var rounds = 0
    /// Requests that came after the read out now began: they get the next one.
    private var waiting: [CheckedContinuation<Fresh, any Error>] = []

    /// A stamp and the round that read it (numbered from 1 in the order they began).
    struct Fresh: Sendable {
        let stamp: StateStamp?
        let round: Int
    }

    init(reader: StateStampReader) { self.reader = reader }

    /// How many requests wait for the next round (for the tests).
    var waitingCount: Int { waiting.count }

    /// A stamp read that began after this call.
    func stamp() async throws -> Fresh {
        try await withCheckedThrowingContinuation { continuation in
            waiting.append(continuation)
            if !reading { startRound() }
        }
    }

    private func startRound() {
        let round = waiting
        waiting = []
        reading = true
        rounds += 1
        let (reader, number) = (reader, rounds)
        Task {
            let result: Result<Fresh, any Error>
            do { result = .success(Fresh(stamp: try await reader.stamp(), round: number)) } catch {
                result = .failure(error)
            }
            self.finish(round, with: result)
        }
    }

    private func finish(_ round: [CheckedContinuation<Fresh, any Error>], with result: Result<Fresh, any Error>) {
        for continuation in round { continuation.resume(with: result) }
        reading = false
        if !waiting.isEmpty { startRound() }
    }
}
