import Foundation
import Testing

@testable import RxServe

/// Why the server cannot start, as typed errors the CLI turns into its exit statuses (never
/// found by matching an error's text).
@Suite struct StartErrorTests {
    /// A TCP address another program listens on: `addressInUse`, from bind(2)'s EADDRINUSE.
    @Test func aTCPAddressInUse() async throws {
        let vault = try ServedVault()
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 1) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        try #require(bound)
        let port = Int(UInt16(bigEndian: address.sin_port))
        let settings = ServeSettings(address: .tcp(host: "127.0.0.1", port: port))
        await #expect(throws: ServeStartError.addressInUse("127.0.0.1:\(port)")) {
            try await RxServer.run(
                vault: try vault.owner.anotherConnection(busyTimeoutMilliseconds: 1000), settings: settings,
                logger: ServedVault.quiet
            ) { _ in Issue.record("the server started") }
        }
    }

    /// Something at the socket path that is not a socket: `socketPathInUse`, and it stays.
    @Test func aFileAtTheSocketPath() async throws {
        let vault = try ServedVault()
        let path = vault.directory.appendingPathComponent("api.sock").path
        try Data("not a socket".utf8).write(to: URL(fileURLWithPath: path))
        await #expect(
            throws: ServeStartError.socketPathInUse("\(path) exists and is not a socket; choose another --socket path")
        ) {
            try await RxServer.run(
                vault: try vault.owner.anotherConnection(busyTimeoutMilliseconds: 1000),
                settings: ServeSettings(address: .unixSocket(path: path)), logger: ServedVault.quiet
            ) { _ in }
        }
        #expect(FileManager.default.fileExists(atPath: path))
    }

    @Test func aKeyThatIsNotOne() async throws {
        let vault = try ServedVault()
        let pem = vault.directory.appendingPathComponent("not.pem").path
        try Data("not a certificate".utf8).write(to: URL(fileURLWithPath: pem))
        var settings = ServeSettings(address: .tcp(host: "127.0.0.1", port: 1))
        settings.tlsCertificate = pem
        settings.tlsKey = pem
        do {
            try await RxServer.run(
                vault: try vault.owner.anotherConnection(busyTimeoutMilliseconds: 1000), settings: settings,
                logger: ServedVault.quiet
            ) { _ in }
            Issue.record("the server started")
        } catch let error as ServeStartError {
            guard case .tls(let why) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(why.hasPrefix("cannot use the TLS certificate or key"))
        }
    }
}
