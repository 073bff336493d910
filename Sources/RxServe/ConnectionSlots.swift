import HTTPTypes
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTPTypes

/// The server's connection slots (`ServeSettings.maxConnections`), shared so that strangers
/// holding connections cannot keep a client out (docs/api.md, "Limits"; issue 50: 64 slow
/// connections from four addresses left every real client unanswered).
///
/// - **A source's share falls as more sources hold connections**: a source (`RequestSource`:
///   an IPv4 address, an IPv6 /64) may hold `min(maxConnectionsPerSource, slots / sources)`,
///   counting itself among the sources; a connection over its source's share is closed as it
///   opens. The Unix socket (the owner's own processes) has no share, only the total.
/// - **Idle strangers go first, and fast**: a connection that has not authenticated (no request
///   with a bearer token answered other than 401, no token issued on it) and has no request in
///   flight is closed after `strangerIdle` (at most 10 s, against the 30 s everyone gets), and
///   when every slot is held, a new connection takes the slot of such a connection: from the
///   source holding the most, idle the longest.
/// - **An authenticated client always gets a slot while strangers hold the rest**: its new
///   connection is admitted by closing an idle stranger's, and an authenticated connection, or
///   one with a request in flight, is never closed to make room. A new connection is refused
///   only when every slot is held by those.
///
/// A connection is admitted (or not) before it is read, so Hummingbird is let accept a few more
/// than the slots (`acceptLimit`): the slot of a stranger's connection is freed the moment it
/// is chosen, and the connection is then closed on its own event loop.
final class ConnectionSlots: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// The slots and who holds them, shared by every connection's handler.
    final class Table: Sendable {
        let slots: Int
        let perSource: Int
        private let state = NIOLockedValueBox(State())

        /// Connections the listener accepts at once: the slots and room for a few more to be
        /// judged (a stranger's slot freed for one, or it closed), so the server never holds
        /// more than four descriptors over its slots.
        var acceptLimit: Int { slots + 4 }

        init(slots: Int, perSource: Int) {
            self.slots = max(1, slots)
            self.perSource = max(1, perSource)
        }

        struct Holder {
            let source: RequestSource
            let channel: any Channel
            /// Since when it has had no request in flight; nil while one is.
            var idleSince: NIODeadline?
            var authenticated = false
        }

        struct State {
            var holders: [ObjectIdentifier: Holder] = [:]
            var counts: [RequestSource: Int] = [:]

            mutating func remove(_ id: ObjectIdentifier) -> Holder? {
                guard let holder = holders.removeValue(forKey: id) else { return nil }
                let left = counts[holder.source, default: 1] - 1
                counts[holder.source] = left > 0 ? left : nil
                return holder
            }
        }

        /// What a source may hold while `sources` sources (itself among them) hold connections.
        func share(sources: Int) -> Int { min(perSource, max(1, slots / max(1, sources))) }

        /// Takes a slot for a new connection, closing an idle stranger's to free one when all
        /// are held; false when the connection must be closed instead.
        func admit(_ id: ObjectIdentifier, source: RequestSource, channel: any Channel, now: NIODeadline) -> Bool {
            let (admitted, victim) = state.withLockedValue { state -> (Bool, (any Channel)?) in
                let held = state.counts[source, default: 0]
                if source != .local && held >= share(sources: state.counts.count + (held == 0 ? 1 : 0)) {
                    return (false, nil)
                }
                var victim: (any Channel)?
                if state.holders.count >= slots {
                    guard let chosen = Self.idleStranger(in: state) else { return (false, nil) }
                    victim = state.remove(chosen)?.channel
                }
                state.holders[id] = Holder(source: source, channel: channel, idleSince: now)
                state.counts[source, default: 0] += 1
                return (true, victim)
            }
            victim?.close(promise: nil)
            return admitted
        }

        /// The idle stranger to close for a newcomer: from the source holding the most
        /// connections, the one idle the longest.
        private static func idleStranger(in state: State) -> ObjectIdentifier? {
            state.holders.filter { !$0.value.authenticated && $0.value.idleSince != nil }
                .min { a, b in
                    let (countA, countB) = (
                        state.counts[a.value.source, default: 0], state.counts[b.value.source, default: 0]
                    )
                    return countA != countB ? countA > countB : a.value.idleSince! < b.value.idleSince!
                }?.key
        }

        /// A request arrived (nil) or its response ended (`now`).
        func idle(_ id: ObjectIdentifier, since now: NIODeadline?) {
            state.withLockedValue { $0.holders[id]?.idleSince = now }
        }

        func authenticated(_ id: ObjectIdentifier) {
            state.withLockedValue { $0.holders[id]?.authenticated = true }
        }

        func release(_ id: ObjectIdentifier) {
            _ = state.withLockedValue { $0.remove(id) }
        }

        /// Connections held, by source (for tests and logs: no more than counts).
        var held: [RequestSource: Int] { state.withLockedValue { $0.counts } }
    }

    private let table: Table
    private let strangerIdle: TimeAmount
    private var admitted = false
    private var holding = false
    private var authenticated = false
    /// Requests read and not yet answered (HTTP/1.1 pipelining may send the next early).
    private var inFlight = 0
    /// Whether the request in flight carries a bearer token, or asks for one.
    private var presentsToken = false
    private var asksForToken = false
    private var strangerTimer: Scheduled<Void>?

    init(table: Table, strangerIdle: TimeAmount) {
        self.table = table
        self.strangerIdle = strangerIdle
    }

    private var id: ObjectIdentifier { ObjectIdentifier(self) }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { admit(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        admit(context)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data) {
            strangerTimer?.cancel()
            strangerTimer = nil
            inFlight += 1
            if holding { table.idle(id, since: nil) }
            presentsToken = head.headerFields[.authorization] != nil
            asksForToken = head.method == .post && head.path?.split(separator: "?").first == "/auth/token"
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head):
            let status = head.status.code
            if !authenticated && ((presentsToken && status != 401) || (asksForToken && status == 200)) {
                authenticated = true
                if holding { table.authenticated(id) }
            }
        case .end:
            inFlight = max(0, inFlight - 1)
            if inFlight == 0 {
                if holding { table.idle(id, since: .now()) }
                waitForRequest(context)
            }
        case .body:
            break
        }
        context.write(data, promise: promise)
    }

    func channelInactive(context: ChannelHandlerContext) {
        release()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        release()
    }

    private func admit(_ context: ChannelHandlerContext) {
        guard !admitted else { return }
        admitted = true
        let source = RequestSource(context.channel.remoteAddress)
        if table.admit(id, source: source, channel: context.channel, now: .now()) {
            holding = true
            waitForRequest(context)
        } else {
            context.close(promise: nil)
        }
    }

    /// A stranger's connection with nothing in flight has `strangerIdle` to send a request.
    private func waitForRequest(_ context: ChannelHandlerContext) {
        guard !authenticated else { return }
        strangerTimer?.cancel()
        strangerTimer = context.eventLoop.assumeIsolated().scheduleTask(in: strangerIdle) {
            context.close(promise: nil)
        }
    }

    private func release() {
        strangerTimer?.cancel()
        strangerTimer = nil
        if holding { table.release(id) }
        holding = false
    }
}
