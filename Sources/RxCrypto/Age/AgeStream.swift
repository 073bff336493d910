import Foundation

extension AgeFile {
    /// Decrypts a binary age file read through `read` (which fills the buffer and returns the
    /// count, 0 at the end), handing the plaintext to `write` chunk by chunk: memory stays at a
    /// chunk or two whatever the file's size. Nothing should be trusted until this returns:
    /// a damaged or truncated stream throws after earlier chunks were written.
    public static func decrypt(read: (inout [UInt8]) throws -> Int, key: Key, write: ([UInt8]) throws -> Void) throws {
        var buffer: [UInt8] = []
        var scratch = [UInt8](repeating: 0, count: 1 << 16)
        var ended = false
        func fill(_ wanted: Int) throws {
            while buffer.count < wanted && !ended {
                let n = try read(&scratch)
                if n == 0 { ended = true } else { buffer += scratch[0..<n] }
            }
        }
        // The header ends with the "--- MAC" line; it is small.
        var headerEnd: Int?
        while headerEnd == nil {
            try fill(buffer.count + 4096)
            if let range = findMACLine(buffer) {
                headerEnd = range
            } else if ended || buffer.count > 1 << 20 {
                throw AgeError.header(ended ? "the header is incomplete" : "the header is too long")
            }
        }
        let (header, payloadStart) = try parseHeader(Array(buffer[0..<headerEnd!]))
        var key = key
        if case .fromHeader(let choose) = key { key = try choose(header.summaries) }
        let fileKey = try unwrapFileKey(header, key: key)
        let macKey = AgePrimitives.hkdf(secret: fileKey, salt: [], info: "header")
        let expected = macKey.withUnsafeBytes { AgePrimitives.hmacSHA256(key: Array($0), [header.macInput]) }
        guard constantTimeEqual(expected, header.mac) else { throw AgeError.hmac }
        buffer.removeFirst(payloadStart)
        try fill(16)
        guard buffer.count >= 16 else { throw AgeError.header("the payload nonce is missing or short") }
        let payloadKey = AgePrimitives.hkdf(secret: fileKey, salt: Array(buffer[0..<16]), info: "payload")
        buffer.removeFirst(16)
        let full = chunkSize + tagSize
        var counter: UInt64 = 0
        while true {
            // Read one byte past a full chunk to know whether this chunk is the last.
            try fill(full + 1)
            guard buffer.count >= tagSize else { throw AgeError.payload(counter == 0 ? "no chunks" : "truncated") }
            let isLast = buffer.count <= full
            let size = min(full, buffer.count)
            let chunk = Array(buffer[0..<size])
            buffer.removeFirst(size)
            guard let plain = AgePrimitives.open(chunk, key: payloadKey, nonce: streamNonce(counter, last: isLast))
            else {
                throw AgeError.payload(
                    isLast
                        ? "the final chunk does not authenticate (truncated or altered)"
                        : "chunk \(counter) does not authenticate")
            }
            if isLast && plain.count == 0 && counter > 0 { throw AgeError.payload("empty final chunk") }
            try plain.withUnsafeBytes { try write(Array($0)) }
            counter += 1
            if isLast { return }
        }
    }

    /// The index just past the header's MAC line, if the buffer holds all of it.
    static func findMACLine(_ bytes: [UInt8]) -> Int? {
        var lineStart = 0
        for (i, byte) in bytes.enumerated() where byte == 0x0A {
            if bytes[lineStart...].starts(with: Array("---".utf8)) { return i + 1 }
            lineStart = i + 1
        }
        return nil
    }
}
