import HTTPTypes
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import Testing

@testable import RxServe

/// `ClientDeadlines` on an embedded channel, whose clock moves only when told: a download the
/// client keeps reading, however slowly, is never cut off, and one it stops reading is cut off
/// `limit` after its last progress. (The reliability pass checks the same over real sockets, but
/// only as often as its timing happens to hit the case; this pins it.)
@Suite struct ClientDeadlinesTests {
    private static let limit = TimeAmount.seconds(2)

    private func unwritableChannel() throws -> EmbeddedChannel {
        let channel = EmbeddedChannel(handler: ClientDeadlines(limit: Self.limit))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 8443)).wait()
        try channel.writeOutbound(HTTPResponsePart.head(HTTPResponse(status: .ok)))
        // More is queued than NIO buffers: the connection turns unwritable.
        channel.isWritable = false
        channel.pipeline.fireChannelWritabilityChanged()
        return channel
    }

    @Test func aDownloadTheClientKeepsReadingIsNotCutOffHoweverLongItTakes() throws {
        let channel = try unwritableChannel()
        // Each part reaches the socket 1.5 s after the one before (the client read one part),
        // while the connection stays unwritable for 9 s in all: longer than the limit, never
        // 2 s without progress.
        for _ in 0..<6 {
            channel.embeddedEventLoop.advanceTime(by: .milliseconds(1500))
            #expect(channel.isActive)
            try channel.writeOutbound(HTTPResponsePart.body(ByteBuffer(repeating: 0x2A, count: 65_536)))
        }
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1900))
        #expect(channel.isActive)
        // The client caught up: writable again, no deadline left.
        channel.isWritable = true
        channel.pipeline.fireChannelWritabilityChanged()
        channel.embeddedEventLoop.advanceTime(by: .seconds(60))
        #expect(channel.isActive)
        _ = try channel.finish()
    }

    @Test func aDownloadTheClientStopsReadingIsCutOffAtTheLimit() throws {
        let channel = try unwritableChannel()
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1500))
        try channel.writeOutbound(HTTPResponsePart.body(ByteBuffer(repeating: 0x2A, count: 65_536)))
        // Nothing more reaches the client: cut off 2 s after the last part, not before.
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1900))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(200))
        #expect(!channel.isActive)
    }

    @Test func aPartWrittenWhileWritableLeavesNoDeadline() throws {
        let channel = EmbeddedChannel(handler: ClientDeadlines(limit: Self.limit))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 8443)).wait()
        try channel.writeOutbound(HTTPResponsePart.head(HTTPResponse(status: .ok)))
        try channel.writeOutbound(HTTPResponsePart.body(ByteBuffer(repeating: 0x2A, count: 65_536)))
        channel.embeddedEventLoop.advanceTime(by: .seconds(60))
        #expect(channel.isActive)
        _ = try channel.finish()
    }
}
