import CSodium

/// libsodium's `crypto_secretstream_xchacha20poly1305`: a file encrypted as a sequence of
/// authenticated chunks. Chunks cannot be dropped, reordered or duplicated without detection, and
/// the last one carries TAG_FINAL, so a stream cut at a chunk boundary is an error, not a short file.
public enum SecretStream {
    public static let headerLength = Int(crypto_secretstream_xchacha20poly1305_HEADERBYTES)
    public static let chunkOverhead = Int(crypto_secretstream_xchacha20poly1305_ABYTES)
    public static let keyLength = Int(crypto_secretstream_xchacha20poly1305_KEYBYTES)
    static let tagMessage = UInt8(crypto_secretstream_xchacha20poly1305_TAG_MESSAGE)
    static let tagFinal = UInt8(crypto_secretstream_xchacha20poly1305_TAG_FINAL)

    /// Encrypts chunk after chunk. The state is zeroed on release.
    public final class Writer {
        private var state = crypto_secretstream_xchacha20poly1305_state()
        public private(set) var header: [UInt8] = []
        private var finished = false

        public init(key: SecretBytes) throws(CryptoError) {
            try Sodium.ready()
            guard key.count == SecretStream.keyLength else { throw .malformed("stream key length") }
            var header = [UInt8](repeating: 0, count: SecretStream.headerLength)
            key.withUnsafeBytes { k in
                _ = crypto_secretstream_xchacha20poly1305_init_push(
                    &state, &header, k.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
            self.header = header
        }

        deinit { withUnsafeMutableBytes(of: &state) { sodium_memzero($0.baseAddress!, $0.count) } }

        /// Encrypts `chunk`; `final` marks the last one (there must be exactly one, at the end).
        public func push(_ chunk: UnsafeRawBufferPointer, associatedData: [UInt8], final: Bool) throws(CryptoError)
            -> [UInt8]
        {
            guard !finished else { throw .malformed("stream already finished") }
            var out = [UInt8](repeating: 0, count: chunk.count + SecretStream.chunkOverhead)
            var written: UInt64 = 0
            _ = crypto_secretstream_xchacha20poly1305_push(
                &state, &out, &written,
                chunk.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(chunk.count),
                associatedData, UInt64(associatedData.count),
                final ? SecretStream.tagFinal : SecretStream.tagMessage)
            finished = final
            return out
        }
    }

    /// Decrypts chunk after chunk and knows whether the final one has been seen.
    public final class Reader {
        private var state = crypto_secretstream_xchacha20poly1305_state()
        public private(set) var sawFinal = false

        public init(key: SecretBytes, header: [UInt8]) throws(CryptoError) {
            try Sodium.ready()
            guard key.count == SecretStream.keyLength, header.count == SecretStream.headerLength else {
                throw .malformed("stream key or header")
            }
            let status = key.withUnsafeBytes { k in
                crypto_secretstream_xchacha20poly1305_init_pull(
                    &state, header, k.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
            guard status == 0 else { throw .authenticationFailed }
        }

        deinit { withUnsafeMutableBytes(of: &state) { sodium_memzero($0.baseAddress!, $0.count) } }

        /// Decrypts the next chunk. Fails on any altered, missing, reordered or extra chunk
        /// (a chunk after the final one is an error too).
        public func pull(_ ciphertext: [UInt8], associatedData: [UInt8]) throws(CryptoError) -> [UInt8] {
            guard !sawFinal else { throw .authenticationFailed }
            guard ciphertext.count >= SecretStream.chunkOverhead else { throw .authenticationFailed }
            var out = [UInt8](repeating: 0, count: ciphertext.count - SecretStream.chunkOverhead)
            var written: UInt64 = 0
            var tag: UInt8 = 0
            let status = crypto_secretstream_xchacha20poly1305_pull(
                &state, &out, &written, &tag, ciphertext, UInt64(ciphertext.count),
                associatedData, UInt64(associatedData.count))
            guard status == 0 else { throw .authenticationFailed }
            if tag == SecretStream.tagFinal {
                sawFinal = true
            } else if tag != SecretStream.tagMessage {
                throw .authenticationFailed
            }
            return out
        }
    }
}
