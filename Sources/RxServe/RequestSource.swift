import NIOCore

/// Who is asking, as far as the limits on strangers go (docs/api.md, "Limits"): what one source
/// costs (failed logins, challenges) counts against that source, never against a client it
/// names, so nobody can lock a client out by knowing its recipient. A source is an IPv4
/// address, an IPv6 /64 (what one host or household is usually given, so rotating addresses
/// within it gains nothing), or the Unix socket, which only the owner's own processes can reach.
struct RequestSource: Hashable, Sendable, CustomStringConvertible {
    let description: String

    /// The Unix socket (or a peer without an address).
    static let local = RequestSource(nil)

    init(_ address: SocketAddress?) {
        switch address {
        case .v4(let v4)?:
            description = Self.dotted(withUnsafeBytes(of: v4.address.sin_addr) { Array($0) })
        case .v6(let v6)?:
            let bytes = withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }
            // An IPv4 client of a dual-stack listener (::ffff:a.b.c.d) is that IPv4 address.
            if bytes.prefix(10).allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff {
                description = Self.dotted(Array(bytes[12..<16]))
            } else {
                let groups = stride(from: 0, to: 8, by: 2).map {
                    String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16)
                }
                description = groups.joined(separator: ":") + "::/64"
            }
        default:
            description = "local"
        }
    }

    private static func dotted(_ bytes: [UInt8]) -> String { bytes.map(String.init).joined(separator: ".") }
}
