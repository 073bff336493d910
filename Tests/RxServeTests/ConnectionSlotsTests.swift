import NIOCore
import NIOEmbedded
import Testing

@testable import RxServe

/// How `ConnectionSlots` shares the server's connections (docs/api.md, "Limits"), on the table
/// alone: each connection an `EmbeddedChannel`, which records being closed.
@Suite struct ConnectionSlotsTests {
    final class Connection {
        let channel = EmbeddedChannel()
        var id: ObjectIdentifier { ObjectIdentifier(self) }
        var isOpen: Bool { channel.isActive }

        init() {
            _ = try? channel.connect(to: SocketAddress(ipAddress: "192.0.2.1", port: 1)).wait()
        }
    }

    static func source(_ n: Int) -> RequestSource {
        RequestSource(try! SocketAddress(ipAddress: "203.0.113.\(n)", port: 4000 + n))
    }

    /// A source's share falls as more sources hold connections, never below one.
    @Test func theShareOfASourceFallsWithTheSourcesHoldingConnections() {
        let table = ConnectionSlots.Table(slots: 64, perSource: 16)
        #expect([1, 2, 4, 5, 8, 16, 64, 1000].map { table.share(sources: $0) } == [16, 16, 16, 12, 8, 4, 1, 1])
    }

    /// Four sources fill the 64 slots with idle connections; a fifth source is admitted by
    /// closing one from a source holding the most, and those sources, now over their share,
    /// cannot open more. An authenticated connection and one with a request in flight are never
    /// closed to make room: when only those are left, a newcomer is refused.
    @Test func anIdleStrangerMakesRoomAndAClientIsNeverClosedForIt() {
        let table = ConnectionSlots.Table(slots: 64, perSource: 16)
        let now = NIODeadline.now()
        var held: [(Connection, RequestSource)] = []
        for n in 2...5 {
            for k in 0..<17 {
                let connection = Connection()
                let admitted = table.admit(
                    connection.id, source: Self.source(n), channel: connection.channel,
                    now: now + .milliseconds(Int64(n * 100 + k)))
                #expect(admitted == (k < 16), "source \(n), connection \(k)")
                if admitted { held.append((connection, Self.source(n))) }
            }
        }
        #expect(table.held.values.reduce(0, +) == 64)

        let client = Connection()
        #expect(table.admit(client.id, source: Self.source(9), channel: client.channel, now: now + .seconds(1)))
        let closed = held.filter { !$0.0.isOpen }
        #expect(closed.count == 1 && closed.first?.1 == Self.source(2), "the oldest idle of the largest sources")
        #expect(table.held[Self.source(9)] == 1 && table.held.values.reduce(0, +) == 64)
        // Five sources: a share of 12 each; the strangers hold more and get no more.
        let more = Connection()
        #expect(!table.admit(more.id, source: Self.source(3), channel: more.channel, now: now + .seconds(1)))

        // The client authenticates; every stranger's connection gets a request in flight.
        table.authenticated(client.id)
        for (connection, _) in held where connection.isOpen { table.idle(connection.id, since: nil) }
        let late = Connection()
        #expect(!table.admit(late.id, source: Self.source(10), channel: late.channel, now: now + .seconds(2)))
        #expect(client.isOpen && held.filter { !$0.0.isOpen }.count == 1, "nobody busy or authenticated was closed")

        // One stranger's request ends: its connection is the one that makes room.
        let (finished, _) = held.first { $0.0.isOpen }!
        table.idle(finished.id, since: now + .seconds(3))
        #expect(table.admit(late.id, source: Self.source(10), channel: late.channel, now: now + .seconds(4)))
        #expect(!finished.isOpen && client.isOpen)

        // Released slots are free again.
        table.release(late.id)
        let again = Connection()
        #expect(table.admit(again.id, source: Self.source(11), channel: again.channel, now: now + .seconds(5)))
        #expect(held.filter { !$0.0.isOpen }.count == 2, "a free slot closes nobody")
    }

    /// The Unix socket (the owner's processes) has no share, only the total.
    @Test func theSocketHasOnlyTheTotal() {
        let table = ConnectionSlots.Table(slots: 20, perSource: 4)
        let connections = (0..<20).map { _ in Connection() }
        for connection in connections {
            #expect(table.admit(connection.id, source: .local, channel: connection.channel, now: .now()))
        }
        #expect(table.held[.local] == 20)
    }
}
