import NIOConcurrencyHelpers
import NIOCore
import NIOHTTPTypes

/// At most `limit` connections at once from one source (`RequestSource`), so one stranger's
/// idle or slow connections cannot take the server's whole total (`maxConnections`) and stall
/// everyone else's requests until the idle timeout cuts them off. The Unix socket is one source,
/// the owner's own processes: it has only the total. A connection over the limit is closed as
/// it opens.
final class ConnectionsPerSource: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    /// The open connections by source, shared by every connection's handler.
    final class Table: Sendable {
        let limit: Int
        private let counts = NIOLockedValueBox<[RequestSource: Int]>([:])

        init(limit: Int) {
            self.limit = limit
        }

        /// Counts a connection from `source` in, unless it already has `limit`.
        func open(_ source: RequestSource) -> Bool {
            counts.withLockedValue { counts in
                guard counts[source, default: 0] < limit else { return false }
                counts[source, default: 0] += 1
                return true
            }
        }

        func close(_ source: RequestSource) {
            counts.withLockedValue { counts in
                let left = counts[source, default: 1] - 1
                counts[source] = left > 0 ? left : nil
            }
        }
    }

    private let table: Table
    private var admitted = false
    private var counted: RequestSource?

    init(table: Table) {
        self.table = table
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { admit(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        admit(context)
        context.fireChannelActive()
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
        guard source != .local else { return }
        if table.open(source) {
            counted = source
        } else {
            context.close(promise: nil)
        }
    }

    private func release() {
        if let counted { table.close(counted) }
        counted = nil
    }
}
