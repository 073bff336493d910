import Foundation
import RxCrypto

#if canImport(Glibc)
    import Glibc
#endif

/// The agent protocol's framing: a type byte, a 4-byte big-endian length, the payload.
/// Type 1 is a JSON message (at most 64 KiB); type 2 is key bytes (exactly 32), read straight
/// into locked memory and written straight from it, so a key never passes through a `[UInt8]`,
/// a `String` or JSON.
enum AgentFrame {
    static let json: UInt8 = 1
    static let key: UInt8 = 2
    static let maxJSONBytes = 64 << 10
    static let keyBytes = 32

    static func send<T: Encodable>(_ message: T, to fd: Int32) throws(AgentError) {
        let payload: Data
        do { payload = try JSONEncoder().encode(message) } catch { throw .protocolError("cannot encode a message") }
        try writeHeader(type: json, length: payload.count, to: fd)
        try typed { try payload.withUnsafeBytes { try writeAll($0, to: fd) } }
    }

    static func send(key secret: SecretBytes, to fd: Int32) throws(AgentError) {
        try writeHeader(type: key, length: secret.count, to: fd)
        try typed { try secret.withUnsafeBytes { try writeAll($0, to: fd) } }
    }

    static func receive<T: Decodable>(_ type: T.Type, from fd: Int32) throws(AgentError) -> T {
        let (kind, length) = try readHeader(from: fd)
        guard kind == json, length <= maxJSONBytes else {
            throw .protocolError("expected a message, got frame type \(kind) of \(length) bytes")
        }
        var payload = [UInt8](repeating: 0, count: length)
        try typed { try payload.withUnsafeMutableBytes { try readAll(into: $0, from: fd) } }
        do { return try JSONDecoder().decode(T.self, from: Data(payload)) } catch {
            throw .protocolError("a message that does not decode")
        }
    }

    /// Reads a key frame into a new locked secret.
    static func receiveKey(from fd: Int32) throws(AgentError) -> SecretBytes {
        let (kind, length) = try readHeader(from: fd)
        guard kind == key, length == keyBytes else {
            throw .protocolError("expected a key, got frame type \(kind) of \(length) bytes")
        }
        let secret = SecretBytes(lockedCount: length)
        try typed { try secret.withUnsafeMutableBytes { try readAll(into: $0, from: fd) } }
        return secret
    }

    // MARK: - Bytes on a descriptor

    /// Runs `body` (buffer closures of Foundation and the standard library throw untyped) and
    /// passes its AgentError on.
    private static func typed(_ body: () throws -> Void) throws(AgentError) {
        do { try body() } catch let error as AgentError { throw error } catch { throw .protocolError("\(error)") }
    }

    private static func writeHeader(type: UInt8, length: Int, to fd: Int32) throws(AgentError) {
        let header: [UInt8] = [
            type, UInt8(length >> 24 & 0xFF), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF),
            UInt8(length & 0xFF)
        ]
        try typed { try header.withUnsafeBytes { try writeAll($0, to: fd) } }
    }

    private static func readHeader(from fd: Int32) throws(AgentError) -> (UInt8, Int) {
        var header = [UInt8](repeating: 0, count: 5)
        try typed { try header.withUnsafeMutableBytes { try readAll(into: $0, from: fd) } }
        let length = Int(header[1]) << 24 | Int(header[2]) << 16 | Int(header[3]) << 8 | Int(header[4])
        return (header[0], length)
    }

    /// Writes everything; a closed peer is an error, never SIGPIPE (pipes and sockets alike).
    static func writeAll(_ bytes: UnsafeRawBufferPointer, to fd: Int32) throws(AgentError) {
        var offset = 0
        while offset < bytes.count {
            var n = Glibc.send(fd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            if n < 0 && errno == ENOTSOCK { n = write(fd, bytes.baseAddress! + offset, bytes.count - offset) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                throw errno == EAGAIN
                    ? .system("the other side stopped reading (timed out)")
                    : .errno("cannot write to the agent's connection")
            }
            offset += n
        }
    }

    static func readAll(into bytes: UnsafeMutableRawBufferPointer, from fd: Int32) throws(AgentError) {
        var offset = 0
        while offset < bytes.count {
            let n = read(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 && errno == EINTR { continue }
            if n == 0 { throw .protocolError("the connection closed early") }
            guard n > 0 else {
                throw errno == EAGAIN
                    ? .system("the other side did not answer in time")
                    : .errno("cannot read from the agent's connection")
            }
            offset += n
        }
    }

    /// Reads and writes on `fd` give up after `seconds` (SO_RCVTIMEO, SO_SNDTIMEO): a peer that
    /// connects and says nothing cannot hold the agent.
    static func setTimeouts(_ fd: Int32, seconds: Int) {
        var limit = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    }
}
