extension AgeFile {
    /// A recipient stanza as the header states it: its type, arguments and body.
    public struct StanzaSummary: Sendable, Equatable {
        public let type: String
        public let arguments: [String]
        public let body: [UInt8]
        public init(type: String, arguments: [String], body: [UInt8] = []) {
            self.type = type
            self.arguments = arguments
            self.body = body
        }
    }

    /// The stanzas of an age file's header, read without any key: who it is encrypted to, and
    /// any label stanza. Nothing here is authenticated until the file is opened (the header MAC
    /// needs the file key); the header must still parse as strictly as when opening. `read`
    /// fills the buffer like read(2) (binary age; wrap armored files in `AgeArmorStream`).
    public static func peekHeader(read: (inout [UInt8]) throws -> Int) throws -> [StanzaSummary] {
        var buffer: [UInt8] = []
        var scratch = [UInt8](repeating: 0, count: 4096)
        while true {
            if let end = findMACLine(buffer) {
                let (header, _) = try parseHeader(Array(buffer[0..<end]))
                return header.summaries
            }
            guard buffer.count <= 1 << 20 else { throw AgeError.header("the header is too long") }
            let n = try read(&scratch)
            guard n > 0 else { throw AgeError.header("the header is incomplete") }
            buffer += scratch[0..<n]
        }
    }
}

extension AgeFile {
    /// The length of the header (through the MAC line) at the start of `bytes`, if all there.
    public static func headerLength(_ bytes: [UInt8]) -> Int? { findMACLine(bytes) }

    /// The length of the payload (nonce and chunks) that age writes for this much plaintext.
    public static func payloadLength(plaintextBytes n: Int) -> Int {
        let chunks = max(1, (n + chunkSize - 1) / chunkSize)
        return 16 + n + chunks * tagSize
    }

    /// Why a payload (nonce and chunks, after the header) of this many bytes cannot be one age
    /// writes; nil if it can. A weak test: it only catches a file cut inside a chunk's last 16
    /// bytes; most truncations pass it, and only opening the file (or a known length) tells.
    public static func payloadLengthProblem(_ length: Int) -> String? {
        let nonce = 16
        guard length >= nonce + tagSize else { return "the payload is \(length) bytes, shorter than any age payload" }
        let chunks = length - nonce
        let full = chunkSize + tagSize
        let last = chunks % full
        if last == 0 || last >= tagSize + 1 || chunks == tagSize { return nil }
        return "the payload ends inside a chunk's tag (truncated?)"
    }
}
