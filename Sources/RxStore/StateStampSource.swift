/// The state root's counter and MAC read on a connection of its own, without holding a thread
/// while the server answers: what `rxvault serve` on a database compares on every request. One
/// read answers every request that arrived before it began (`RxServe`'s `StampRounds`), so the
/// round trip to the server is paid once per batch of requests, not once per request.
///
/// A database engine offers one (`DatabaseEngine.stampSource`); a vault file needs none (its
/// stamp is one read of a local page, cheaper than any hand-over between threads).
public protocol StateStampSource: Sendable {
    /// The stamp as committed when the read began; nil when the vault has no state root yet
    /// (format 1).
    func stamp() async throws(StoreError) -> (counter: Int, mac: [UInt8])?
}
