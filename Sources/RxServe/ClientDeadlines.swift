import NIOCore
import NIOHTTPTypes

/// Closes the connection of a client too slow to be worth a connection slot (one of 64), where
/// Hummingbird's idle timeout does not reach:
///
/// - a request whose body trickles in (a "slow POST": each part resets the idle timer) must be
///   complete within `limit` of its head;
/// - a response the client stops reading (a download left open) must not stay stuck: once the
///   connection has more waiting to be sent than NIO buffers (it turns unwritable), some of it
///   must reach the client within `limit` (a queued part written out, or the connection writable
///   again), which takes the client reading at most one part.
///   Hummingbird's idle timer never fires while a response is being written, however long.
///
/// A request head sent byte by byte is covered by the idle timer, which counts only whole
/// request parts; so is a request that announces a body and sends none, and a connection that
/// sends nothing. Nothing is scheduled for a request without a body, nor for a response the
/// client reads as it comes: this runs on every request.
final class ClientDeadlines: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let limit: TimeAmount
    private var headArrived = NIODeadline.now()
    private var requestDeadline: Scheduled<Void>?
    private var stalled: Scheduled<Void>?

    init(limit: TimeAmount) {
        self.limit = limit
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            headArrived = .now()
        case .body:
            if requestDeadline == nil {
                requestDeadline = context.eventLoop.assumeIsolated().scheduleTask(deadline: headArrived + limit) {
                    context.close(promise: nil)
                }
            }
        case .end:
            requestDeadline?.cancel()
            requestDeadline = nil
        }
        context.fireChannelRead(data)
    }

    /// A part written while the connection is unwritable is queued behind what the client has
    /// not read yet; when it reaches the socket, the client has read that much, so the stall
    /// deadline starts again. Without this the client had to drain every queued part (several
    /// 64 KiB chunks of an attachment) within `limit`, not 32 KiB: a reader slow but steady
    /// (128 KiB/s) was cut off now and then. A part written while writable costs nothing more.
    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard !context.channel.isWritable else {
            context.write(data, promise: promise)
            return
        }
        let written = promise ?? context.eventLoop.makePromise()
        written.futureResult.assumeIsolated().whenSuccess { [weak self] in self?.progressed(context: context) }
        context.write(data, promise: written)
    }

    private func progressed(context: ChannelHandlerContext) {
        guard stalled != nil, !context.channel.isWritable else { return }
        stalled?.cancel()
        stalled = context.eventLoop.assumeIsolated().scheduleTask(in: limit) {
            context.close(promise: nil)
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            stalled?.cancel()
            stalled = nil
        } else if stalled == nil {
            stalled = context.eventLoop.assumeIsolated().scheduleTask(in: limit) {
                context.close(promise: nil)
            }
        }
        context.fireChannelWritabilityChanged()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        cancel()
    }

    func channelInactive(context: ChannelHandlerContext) {
        cancel()
        context.fireChannelInactive()
    }

    private func cancel() {
        requestDeadline?.cancel()
        stalled?.cancel()
        requestDeadline = nil
        stalled = nil
    }
}
