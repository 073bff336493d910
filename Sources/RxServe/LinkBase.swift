import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Where the absolute links of an answer point: a Bundle's `self`/`next`/`previous`, each
/// entry's `fullUrl`, a DocumentReference's Binary `url`, an access request's `Location`.
///
/// A generic FHIR client follows these links as they are, so they must name the server as
/// its clients reach it, and no request may choose them: an answer whose links echoed the
/// request's `Host` would send a client wherever that header said (to plain `http://` behind
/// a TLS proxy, or to a stranger's host through any cache that kept the answer). In order:
/// 1. `serve --public-url URL`: every link starts with it, whatever the request says.
/// 2. A request from a `--trusted-proxy` address: its `X-Forwarded-Proto` and
///    `X-Forwarded-Host` (else its `Host`, which that proxy sets), each checked.
/// 3. Otherwise the server's own address, where the connection arrived: `http(s)://IP:port`
///    for TCP, `http://localhost` on the Unix socket (as curl addresses it). A peer can only
///    reach an address the server listens on, so nothing in a request changes it.
struct LinkBase: Sendable {
    /// `--public-url`, as `publicURL(_:)` normalized it.
    let publicURL: String?
    /// `--trusted-proxy` addresses, as `proxyAddress(_:)` normalized them.
    let trustedProxies: Set<String>
    /// The server's own scheme: https when it serves TLS.
    let scheme: String

    init(settings: ServeSettings) {
        publicURL = settings.publicURL
        trustedProxies = Set(settings.trustedProxies)
        scheme = settings.tlsCertificate == nil ? "http" : "https"
    }

    static let forwardedProto = HTTPField.Name("X-Forwarded-Proto")!
    static let forwardedHost = HTTPField.Name("X-Forwarded-Host")!

    /// The base (no trailing slash) for links in the answer to `request`, which arrived at
    /// `local` from `remote`.
    func base(_ request: Request, local: SocketAddress?, remote: SocketAddress?) -> String {
        if let publicURL { return publicURL }
        if !trustedProxies.isEmpty, let remote, let peer = Self.key(remote), trustedProxies.contains(peer) {
            let proto = request.headers[Self.forwardedProto].map(Self.firstValue)?.lowercased()
            let host = request.headers[Self.forwardedHost].map(Self.firstValue) ?? request.head.authority
            if let host, Self.isHost(host), proto == nil || proto == "http" || proto == "https" {
                return "\(proto ?? scheme)://\(host)"
            }
        }
        return own(local)
    }

    /// The server's own address, as a peer reached it.
    func own(_ local: SocketAddress?) -> String {
        switch local {
        case .v4(let v4)?: return "\(scheme)://\(Self.dotted(v4.address.sin_addr)):\(local?.port ?? 0)"
        case .v6?:
            guard let address = local, let key = Self.key(address) else { return "\(scheme)://localhost" }
            return key.contains(":")
                ? "\(scheme)://[\(key)]:\(address.port ?? 0)" : "\(scheme)://\(key):\(address.port ?? 0)"
        default: return "\(scheme)://localhost"
        }
    }

    /// The first of a list of values (`X-Forwarded-Host: a, b` names the first proxy's view).
    static func firstValue(_ text: String) -> String {
        String(text.split(separator: ",", omittingEmptySubsequences: false).first ?? "")
            .trimmingCharacters(in: .whitespaces)
    }

    /// A host and optional port, in the characters a host name, an IPv4 address or a bracketed
    /// IPv6 address are written with: nothing that could end the authority or start a path.
    static func isHost(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 255
            && text.unicodeScalars.allSatisfy {
                $0.isASCII
                    && ($0.properties.isAlphabetic || $0.properties.numericType != nil
                        || ".-:[]".unicodeScalars.contains($0))
            }
    }

    // MARK: - Addresses

    /// One spelling per IP address, to compare a peer with `--trusted-proxy`: dotted IPv4 (an
    /// IPv4 peer of a dual-stack listener, `::ffff:a.b.c.d`, is that IPv4 address), or the
    /// eight groups of an IPv6 address in lower-case hex, unabbreviated.
    static func key(_ address: SocketAddress) -> String? {
        switch address {
        case .v4(let v4): return dotted(v4.address.sin_addr)
        case .v6(let v6):
            let bytes = withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }
            if bytes.prefix(10).allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff {
                return bytes[12..<16].map(String.init).joined(separator: ".")
            }
            return stride(from: 0, to: 16, by: 2).map {
                String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16)
            }.joined(separator: ":")
        default: return nil
        }
    }

    static func dotted(_ address: in_addr) -> String {
        withUnsafeBytes(of: address) { Array($0) }.map(String.init).joined(separator: ".")
    }
}

extension ServeSettings {
    /// `--trusted-proxy ADDR`: an IPv4 or IPv6 address (no port, no name: a name would be looked
    /// up, and trust must not depend on a resolver), in the spelling `LinkBase` compares; nil
    /// when it is not one.
    public static func proxyAddress(_ text: String) -> String? {
        let bare = text.hasPrefix("[") && text.hasSuffix("]") ? String(text.dropFirst().dropLast()) : text
        guard let address = try? SocketAddress(ipAddress: bare, port: 0) else { return nil }
        return LinkBase.key(address)
    }

    /// `--public-url URL`: an absolute http or https URL with a host, and no user, query or
    /// fragment (a link is the URL, then `/VisionPrescription?...`); a path is kept, for a
    /// proxy that serves the API under one. Returns it without a trailing slash, or why not.
    public static func publicURL(_ text: String) -> Result<String, PublicURLProblem> {
        guard !text.unicodeScalars.contains(where: { !$0.isASCII || $0.properties.isWhitespace || $0.value < 0x20 }),
            let parts = URLComponents(string: text), let scheme = parts.scheme?.lowercased(),
            ["http", "https"].contains(scheme)
        else { return .failure(PublicURLProblem("give an absolute http:// or https:// URL, e.g. https://rx.example")) }
        guard let host = parts.host, !host.isEmpty, LinkBase.isHost(host) else {
            return .failure(PublicURLProblem("it names no host, e.g. https://rx.example"))
        }
        guard parts.user == nil, parts.password == nil else {
            return .failure(PublicURLProblem("a user or password has no place in it"))
        }
        guard parts.query == nil, parts.fragment == nil else {
            return .failure(PublicURLProblem("give it without a query (?) or fragment (#)"))
        }
        var path = parts.percentEncodedPath
        while path.hasSuffix("/") { path.removeLast() }
        let port = parts.port.map { ":\($0)" } ?? ""
        let shownHost = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return .success("\(scheme)://\(shownHost.lowercased())\(port)\(path)")
    }

    /// Why a `--public-url` cannot be used.
    public struct PublicURLProblem: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }
}
