import NIOCore
import NIOHTTPTypes

/// Lets a response already handed to NIO reach the client before its connection closes.
///
/// When the server stops (SIGTERM), Hummingbird closes each connection right after writing the
/// end of the response in flight. A client that reads slowly has not received all of it yet:
/// the rest waits in NIO's outbound buffer, and a close discards it, so a slow download of a
/// 240 KiB scan lost its last 12 KiB with a 200 status. Here a close waits until the writes
/// before it are done (written to the socket, or failed).
///
/// It sits between ClientDeadlines (nearer the socket) and Hummingbird's connection handler, so
/// the closes ClientDeadlines makes for a client that stops reading pass by it: a stalled
/// client still loses its connection within the idle limit.
final class WritesBeforeClose: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private var lastWrite: EventLoopFuture<Void>?
    private var writesPending = 0

    /// Only a response's end is followed (a promise and a callback each): the close comes right
    /// after one, and writes complete in order, so when it is written so is all before it. A
    /// close in the middle of a response is an abort, whose rest nobody waits for.
    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .end = unwrapOutboundIn(data) else {
            context.write(data, promise: promise)
            return
        }
        let written = promise ?? context.eventLoop.makePromise()
        writesPending += 1
        written.futureResult.assumeIsolated().whenComplete { _ in self.writesPending -= 1 }
        lastWrite = written.futureResult
        context.write(data, promise: written)
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        guard mode == .all, writesPending > 0, let lastWrite else {
            context.close(mode: mode, promise: promise)
            return
        }
        context.flush()
        lastWrite.assumeIsolated().whenComplete { _ in context.close(mode: mode, promise: promise) }
    }
}
