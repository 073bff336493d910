import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOCore
import NIOSSL
import RxVault

/// Why the server could not start, for the CLI to say and to choose its exit status by.
public enum ServeStartError: Error, CustomStringConvertible, Equatable {
    /// Another server answers on the socket path, or something that is not a socket is there.
    case socketPathInUse(String)
    /// Another program listens on the TCP address (EADDRINUSE from bind(2)).
    case addressInUse(String)
    /// The certificate or key cannot be used.
    case tls(String)

    public var description: String {
        switch self {
        case .socketPathInUse(let why), .tls(let why): why
        case .addressInUse(let address): "\(address) is already in use by another program"
        }
    }
}

/// `rxvault serve`: runs the API until SIGTERM or SIGINT, then lets requests in flight finish,
/// writes the served reads still queued to the audit log, and removes its socket.
public enum RxServer {
    /// Serves `vault` until a signal; throws `ServeStartError` when it cannot start.
    public static func run(
        vault: sending Vault, settings: ServeSettings, logger: Logger,
        onReady: @escaping @Sendable (String) -> Void
    ) async throws {
        let api = try ServeAPI(vault: vault, settings: settings, logger: logger)
        let router = api.router()

        let idle = TimeAmount.seconds(settings.idleTimeoutSeconds)
        let slots = ConnectionSlots.Table(slots: settings.maxConnections, perSource: settings.maxConnectionsPerSource)
        let strangerIdle = TimeAmount.seconds(min(settings.idleTimeoutSeconds, settings.strangerIdleTimeoutSeconds))
        let http = HTTP1Channel.Configuration(
            additionalChannelHandlers: [
                ConnectionSlots(table: slots, strangerIdle: strangerIdle), ClientDeadlines(limit: idle),
                WritesBeforeClose()
            ],
            idleTimeout: idle,
            httpDecoderConfiguration: .init(
                maxHeaderFieldSize: settings.maxHeaderBytes, maxHeaderListSize: settings.maxHeaderBytes,
                maxHeaderFieldCount: settings.maxHeaderCount))
        let server: HTTPServerBuilder
        if let certificate = settings.tlsCertificate, let key = settings.tlsKey {
            do {
                let chain = try NIOSSLCertificate.fromPEMFile(certificate).map {
                    NIOSSLCertificateSource.certificate($0)
                }
                let tls = TLSConfiguration.makeServerConfiguration(
                    certificateChain: chain, privateKey: .privateKey(try NIOSSLPrivateKey(file: key, format: .pem)))
                server = try .tls(.http1(configuration: http), tlsConfiguration: tls)
            } catch {
                throw ServeStartError.tls("cannot use the TLS certificate or key: \(error)")
            }
        } else {
            server = .http1(configuration: http)
        }

        let address: BindAddress
        let description: String
        switch settings.address {
        case .unixSocket(let path):
            try prepareSocketPath(path)
            address = .unixDomainSocket(path: path)
            description = "unix:\(path)"
        case .tcp(let host, let port):
            address = .hostname(host, port: port)
            description = "\(settings.tlsCertificate == nil ? "http" : "https")://\(host):\(port)"
        }
        let socketPath: String? = if case .unixSocket(let path) = settings.address { path } else { nil }
        // The socket is created by bind(2) with the process umask: 0600 from its first moment.
        let previousMask = socketPath == nil ? nil : umask(0o177)
        let app = Application(
            router: router, server: server,
            configuration: .init(
                address: address, serverName: "rxvault", backlog: 64,
                availableConnectionsDelegate: MaximumAvailableConnections(slots.acceptLimit, logger: logger)),
            onServerRunning: { _ in
                if let previousMask { umask(previousMask) }
                onReady(description)
            },
            logger: logger)

        let flusher = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(settings.auditFlushSeconds))
                do { try await api.flush() } catch {
                    logger.error(
                        "could not write served reads to the audit log; will retry",
                        metadata: ["reason": .string("\(error)")])
                }
            }
        }
        defer {
            flusher.cancel()
            if let socketPath { unlink(socketPath) }
        }
        do {
            try await app.runService()
        } catch let error as IOError where error.errnoCode == EADDRINUSE {
            guard case .tcp(let host, let port) = settings.address else { throw error }
            throw ServeStartError.addressInUse(host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)")
        }
        flusher.cancel()
        do { try await api.flush() } catch {
            logger.error(
                "served reads could not be written to the audit log", metadata: ["reason": .string("\(error)")])
        }
        let unrecorded = await api.gateway.unrecordedReads
        if unrecorded > 0 {
            logger.error(
                "\(unrecorded) audit entries of reads served were not recorded: the vault's file was replaced and the file now in its place could not be served"
            )
        }
    }

    /// A socket left by a server that crashed is removed; anything else at the path is refused.
    static func prepareSocketPath(_ path: String) throws {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        guard info.st_mode & S_IFMT == S_IFSOCK else {
            throw ServeStartError.socketPathInUse("\(path) exists and is not a socket; choose another --socket path")
        }
        if Self.socketAnswers(path) { throw ServeStartError.socketPathInUse("another server is listening on \(path)") }
        unlink(path)
    }

    static func socketAnswers(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in for (i, b) in bytes.enumerated() { raw[i] = b } }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
            }
        }
    }
}
