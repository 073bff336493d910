import NIOCore
import NIOHTTPTypes

/// Closes the connection of a client too slow to be worth a connection slot (one of 64), where
/// Hummingbird's idle timeout does not reach:
///
/// - a request whose body trickles in (a "slow POST": each part resets the idle timer) must be
///   complete within `limit` of its head;
/// - a response the client stops reading (a download left open) must not stay stuck: once the
///   connection has more waiting to be sent than NIO buffers (it turns unwritable), it must
///   become writable again within `limit`, which takes the client reading about 32 KiB.
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
