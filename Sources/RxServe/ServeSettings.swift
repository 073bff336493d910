import Foundation

/// How `rxvault serve` listens and what it allows one client (docs/api.md, "Limits").
public struct ServeSettings: Sendable {
    public enum Address: Sendable, Equatable {
        /// A Unix domain socket (the default: only local processes that can reach the path).
        case unixSocket(path: String)
        case tcp(host: String, port: Int)
    }

    public var address: Address
    /// PEM files; required for TCP on anything but loopback.
    public var tlsCertificate: String?
    public var tlsKey: String?
    /// `--public-url`: the base of every absolute link the server sends (`LinkBase`), as
    /// `ServeSettings.publicURL(_:)` checked it; nil: the server's own address.
    public var publicURL: String?
    /// `--trusted-proxy`: peers whose `X-Forwarded-Proto` and `X-Forwarded-Host` name the base
    /// of the links (as `ServeSettings.proxyAddress(_:)` spells them); any other peer's are ignored.
    public var trustedProxies: [String] = []
    /// Connections served at once (`ConnectionSlots`): when all are held, a new one takes the
    /// slot of an idle connection that has not authenticated, or is closed.
    public var maxConnections = 64
    /// The most connections one source over TCP (an IPv4 address, an IPv6 /64) may hold, when
    /// few hold any; its share falls to `maxConnections` divided by the sources holding
    /// connections. More are closed as they open, so no stranger can hold every slot.
    public var maxConnectionsPerSource = 16
    /// A connection that sends or reads nothing for this long is closed (slow-loris clients).
    public var idleTimeoutSeconds: Int64 = 30
    /// A connection that has not authenticated and has no request in flight is closed after
    /// this long (or `idleTimeoutSeconds`, if shorter): strangers' idle connections go first.
    public var strangerIdleTimeoutSeconds: Int64 = 10
    /// Request header bytes and count, and the largest request body (JSON requests only).
    public var maxHeaderBytes = 16 * 1024
    public var maxHeaderCount = 64
    public var maxBodyBytes = 16 * 1024
    /// Bearer tokens last this long (15 minutes at most).
    public var tokenLifetimeSeconds: TimeInterval = 15 * 60
    /// A challenge must be answered within this time, once.
    public var challengeLifetimeSeconds: TimeInterval = 60
    /// Failed token requests and challenges allowed per source (`RequestSource`: an IPv4
    /// address, an IPv6 /64, the Unix socket) per minute before that source gets 429. Never per
    /// client: a stranger who knows a client's recipient cannot lock it out.
    public var maxFailuresPerMinute = 10
    public var maxChallengesPerMinute = 30
    /// The time the authenticator judges challenges, tokens and failure counts by: the system's;
    /// tests fix it so a loaded machine cannot stretch "five failures in a minute".
    public var now: @Sendable () -> Date = { Date() }
    /// How long a write waits for another rxvault process (RXVAULT_BUSY_TIMEOUT).
    public var busyTimeoutMilliseconds: Int32 = 30_000
    /// Served reads are written to the owner's audit log at least this often.
    public var auditFlushSeconds: UInt64 = 1
    /// Whether the server logs reads and access requests with owner writes (MAC'd entries, a new
    /// state root: a file's server) or appends them as client-form entries for the owner's next
    /// write to countersign (false: a database, where each instance may run under a role that
    /// can only read and append; docs/deploy.md). The CLI chooses by where the vault is.
    public var ownerWrites = true
    /// Largest page of a search.
    /// Called once for each access request a client makes (`serve --on-request CMD`), with the
    /// request's id and the client's name as the owner registered it: never the request's text,
    /// which the client wrote, nor anything of a prescription.
    public var onAccessRequest: (@Sendable (_ requestID: String, _ clientName: String) -> Void)?

    public static let maxPageSize = 200
    public static let defaultPageSize = 50

    public init(address: Address) {
        self.address = address
    }

    /// Loopback needs no TLS; any other TCP address does.
    public var needsTLS: Bool {
        guard case .tcp(let host, _) = address else { return false }
        return !["127.0.0.1", "::1", "localhost"].contains(host)
    }
}
