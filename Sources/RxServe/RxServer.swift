import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import NIOSSL
import Logging
import NIOCore
import RxVault

/// `rxvault serve`: runs the API until SIGTERM or SIGINT, then lets requests in flight finish,
/// writes the served reads still queued to the audit log, and removes its socket.
public enum RxServer {
    public enum StartError: Error, CustomStringConvertible {
        case socketPathInUse(String)
        case tls(String)
        public var description: String {
            switch self {
            case .socketPathInUse(let why), .tls(let why): why
            }
        }
    }

    public static func run(vault: sending Vault, settings: ServeSettings, logger: Logger,
                           onReady: @escaping @Sendable (String) -> Void) async throws {
        let writer = AuditWriter(vault: try vault.anotherConnection(busyTimeoutMilliseconds: settings.busyTimeoutMilliseconds))
        let gateway = VaultGateway(vault: vault, writer: writer, busyTimeoutMilliseconds: settings.busyTimeoutMilliseconds, logger: logger)
        let api = FHIRAPI(gateway: gateway, authenticator: ClientAuthenticator(settings: settings), settings: settings)
        let router = Router()
        router.add(middleware: RequestLogging())
        api.register(on: router)

        let idle = TimeAmount.seconds(settings.idleTimeoutSeconds)
        let http = HTTP1Channel.Configuration(
            additionalChannelHandlers: [ClientDeadlines(limit: idle), WritesBeforeClose()],
            idleTimeout: idle,
            httpDecoderConfiguration: .init(maxHeaderFieldSize: settings.maxHeaderBytes, maxHeaderListSize: settings.maxHeaderBytes,
                                            maxHeaderFieldCount: settings.maxHeaderCount))
        let server: HTTPServerBuilder
        if let certificate = settings.tlsCertificate, let key = settings.tlsKey {
            do {
                let chain = try NIOSSLCertificate.fromPEMFile(certificate).map { NIOSSLCertificateSource.certificate($0) }
                let tls = TLSConfiguration.makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(try NIOSSLPrivateKey(file: key, format: .pem)))
                server = try .tls(.http1(configuration: http), tlsConfiguration: tls)
            } catch {
                throw StartError.tls("cannot use the TLS certificate or key: \(error)")
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
            configuration: .init(address: address, serverName: "rxvault", backlog: 64,
                                 availableConnectionsDelegate: MaximumAvailableConnections(settings.maxConnections, logger: logger)),
            onServerRunning: { _ in
                if let previousMask { umask(previousMask) }
                onReady(description)
            },
            logger: logger)

        let flusher = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(settings.auditFlushSeconds))
                do { try await flush(gateway, writer) } catch {
                    logger.error("could not write served reads to the audit log; will retry", metadata: ["reason": .string("\(error)")])
                }
            }
        }
        defer {
            flusher.cancel()
            if let socketPath { unlink(socketPath) }
        }
        try await app.runService()
        flusher.cancel()
        do { try await flush(gateway, writer) } catch {
            logger.error("served reads could not be written to the audit log", metadata: ["reason": .string("\(error)")])
        }
        let unrecorded = await gateway.unrecordedReads
        if unrecorded > 0 {
            logger.error("\(unrecorded) audit entries of reads served were not recorded: the vault's file was replaced and the file now in its place could not be served")
        }
    }

    /// Writes the reads served so far (one entry per distinct read); on failure they wait for
    /// the next write. First a look at the file, so one replaced while no request came is let go
    /// of and the reads go to the new one; while none can be served, they wait.
    static func flush(_ gateway: VaultGateway, _ writer: AuditWriter) async throws {
        await gateway.followFile()
        let batch = await gateway.takeReads()
        guard !batch.events.isEmpty else { return }
        do {
            switch try await writer.write(batch) {
            case .written(let write): await gateway.carry(write)
            case .fileReplaced: await gateway.requeue(batch)
            }
        } catch {
            await gateway.requeue(batch)
            throw error
        }
    }

    /// A socket left by a server that crashed is removed; anything else at the path is refused.
    static func prepareSocketPath(_ path: String) throws {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        guard info.st_mode & S_IFMT == S_IFSOCK else {
            throw StartError.socketPathInUse("\(path) exists and is not a socket; choose another --socket path")
        }
        if Self.socketAnswers(path) { throw StartError.socketPathInUse("another server is listening on \(path)") }
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
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0 }
        }
    }
}

/// One line per request on stderr: method, path (without the query: it may carry a patient
/// reference), status and time. Never a header (tokens) or a body.
struct RequestLogging: RouterMiddleware {
    typealias Context = BasicRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        do {
            let response = try await next(request, context)
            context.logger.info("\(request.method) \(request.uri.path) \(response.status.code) \(ContinuousClock.now - start)")
            return response
        } catch let error as HTTPResponseError {
            context.logger.info("\(request.method) \(request.uri.path) \(error.status.code) \(ContinuousClock.now - start)")
            throw error
        }
    }
}
