import NIOCore
import NIOHTTPTypes

/// Closes the connection of a client too slow to be worth a connection slot (one of 64), where
/// Hummingbird's idle timeout does not reach:
///
/// - a request whose head arrived but whose body trickles in (a "slow POST": each byte resets
///   the idle timer) must be complete within `limit` of its head;
/// - a response the client stops reading (a download left open) must make progress: some
///   part of it handed to the kernel at least every `limit`. Hummingbird's idle timer never
///   fires while a response is being written, however long that takes.
///
/// A request head sent byte by byte is already covered by the idle timer, which only counts
/// whole request parts. So is a connection that sends nothing at all.
final class ClientDeadlines: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let limit: TimeAmount
    private var requestDeadline: Scheduled<Void>?
    /// Response parts written but not yet taken by the kernel, and when one last was.
    private var pendingWrites = 0
    private var lastProgress = NIODeadline.now()
    private var stallCheck: Scheduled<Void>?

    init(limit: TimeAmount) {
        self.limit = limit
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            requestDeadline?.cancel()
            requestDeadline = context.eventLoop.assumeIsolated().scheduleTask(in: limit) {
                self.requestDeadline = nil
                context.close(promise: nil)
            }
        case .end:
            requestDeadline?.cancel()
            requestDeadline = nil
        case .body:
            break
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let promise = promise ?? context.eventLoop.makePromise()
        if pendingWrites == 0 { lastProgress = .now() }
        pendingWrites += 1
        promise.futureResult.assumeIsolated().whenComplete { _ in
            self.pendingWrites -= 1
            self.lastProgress = .now()
        }
        if stallCheck == nil { scheduleStallCheck(context, at: lastProgress + limit) }
        context.write(data, promise: promise)
    }

    private func scheduleStallCheck(_ context: ChannelHandlerContext, at deadline: NIODeadline) {
        stallCheck = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) {
            self.stallCheck = nil
            guard self.pendingWrites > 0 else { return }
            if NIODeadline.now() >= self.lastProgress + self.limit {
                context.close(promise: nil)
            } else {
                self.scheduleStallCheck(context, at: self.lastProgress + self.limit)
            }
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        requestDeadline?.cancel()
        stallCheck?.cancel()
        requestDeadline = nil
        stallCheck = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        requestDeadline?.cancel()
        stallCheck?.cancel()
        requestDeadline = nil
        stallCheck = nil
        context.fireChannelInactive()
    }
}
