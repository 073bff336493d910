import CSodium

/// age v1 files (age-encryption.org/v1), written and read with libsodium only, so exports and
/// backups open with Debian's `age -d` or any age library, and files made by them open here.
///
/// Writing supports X25519 recipients and one scrypt passphrase; reading supports X25519
/// identities, scrypt passphrases and ASCII armor. Stanzas of types of rxvault's own (a backup's
/// label and key slots, its X25519 stanza to the vault's key) ride in the same header: age skips
/// them, and the header MAC covers them. Post-quantum and plugin stanzas are skipped
/// like any unknown stanza (so they give "no match" when they are the only ones).
public enum AgeFile {
    static let versionLine = "age-encryption.org/v1"
    static let chunkSize = 64 * 1024
    static let tagSize = 16

    /// Who can open a file we write.
    public enum Recipient: Sendable {
        case x25519(AgeRecipient)
        /// An SSH Ed25519 public key (age's ssh-ed25519 stanza).
        case sshEd25519(AgeSSHRecipient)
        /// A passphrase (age scrypt); it must be the only recipient. `logN` is the work factor.
        case scrypt(passphrase: SecretBytes, logN: Int)
        /// Not a recipient: a stanza (with an empty body unless given) that no identity opens and
        /// age skips, so what it says is readable without a key and covered by the header MAC
        /// (checked when the file is opened). Refused beside a passphrase, which must stand alone
        /// in age.
        case label(type: String, arguments: [String], body: [UInt8] = [])
        /// age's X25519 recipient stanza built under a stanza type of the caller's, which is also
        /// the HKDF info: for a key pair that has another use (rxvault's audit key), so no other
        /// use of it derives this wrap key. age skips the stanza; `Key.typedX25519` opens it.
        case typedX25519(type: String, publicKey: [UInt8])

        public var isPassphrase: Bool { if case .scrypt = self { return true } else { return false } }
        public var isLabel: Bool { if case .label = self { return true } else { return false } }
    }

    /// What we try when opening a file.
    public enum Key: Sendable {
        case identities([AgeIdentity])
        /// A passphrase; files asking for a work factor above `maxLogN` are refused (a hostile file
        /// could otherwise ask for minutes of CPU and gigabytes of memory).
        case passphrase(SecretBytes, maxLogN: Int)
        /// The secret key of a `Recipient.typedX25519` of this type.
        case typedX25519(type: String, secretKey: SecretBytes)
        /// A key chosen once the header is read (from its stanzas, bodies included): rxvault's
        /// backups carry what derives their key in stanzas of their own. An error it throws ends
        /// the decryption as it is.
        case fromHeader(@Sendable ([StanzaSummary]) throws -> Key)
    }

    public static let defaultScryptLogN = 18
    /// age 1.1 refuses to read work factors above 22; never write more.
    public static let maxWriteLogN = 22
    /// The most rxvault reads: 2^20 scrypt costs about 1 GiB and a few seconds; a hostile file
    /// asking for 2^22 would take 4 GiB. age -p and rxvault write 18.
    public static let maxReadLogN = 20

    // MARK: - Writing

    /// Encrypts `plaintext` to `recipients`.
    public static func encrypt(_ plaintext: [UInt8], to recipients: [Recipient]) throws(CryptoError) -> [UInt8] {
        var out: [UInt8] = []
        let writer = try Writer(recipients: recipients) { out += $0 }
        try writer.write(plaintext)
        try writer.finish()
        return out
    }

    /// A streaming age writer: header at once, then the payload in 64 KiB chunks as data comes.
    public final class Writer {
        private let emit: ([UInt8]) throws(CryptoError) -> Void
        private let payloadKey: SecretBytes
        private var pending: [UInt8] = []
        private var counter: UInt64 = 0
        private var finished = false

        public init(recipients: [Recipient], output: @escaping ([UInt8]) throws(CryptoError) -> Void)
            throws(CryptoError)
        {
            try Sodium.ready()
            guard recipients.contains(where: { !$0.isLabel }) else { throw .malformed("age recipients: none given") }
            let scryptCount = recipients.filter(\.isPassphrase).count
            guard scryptCount == 0 || recipients.count == 1 else {
                throw .malformed("age recipients: a passphrase must be the only recipient")
            }
            emit = output
            let fileKey = SecretBytes(randomCount: 16)
            var header = AgeFile.versionLine + "\n"
            for recipient in recipients { header += try AgeFile.stanza(for: recipient, fileKey: fileKey) }
            header += "---"
            let macKey = AgePrimitives.hkdf(secret: fileKey, salt: [], info: "header")
            let mac = macKey.withUnsafeBytes { AgePrimitives.hmacSHA256(key: Array($0), [Array(header.utf8)]) }
            header += " " + Base64.standard.encode(mac) + "\n"
            let nonce = randomBytes(16)
            payloadKey = AgePrimitives.hkdf(secret: fileKey, salt: nonce, info: "payload")
            try output(Array(header.utf8) + nonce)
        }

        public func write(_ bytes: UnsafeRawBufferPointer) throws(CryptoError) {
            try write(Array(bytes))
        }

        public func write(_ bytes: [UInt8]) throws(CryptoError) {
            guard !finished else { throw .malformed("age writer already finished") }
            pending += bytes
            // Keep at least one byte back: the last chunk must be sealed with the last flag.
            var offset = 0
            while pending.count - offset > AgeFile.chunkSize {
                try seal(Array(pending[offset..<(offset + AgeFile.chunkSize)]), last: false)
                offset += AgeFile.chunkSize
            }
            if offset > 0 { pending.removeFirst(offset) }
        }

        public func finish() throws(CryptoError) {
            guard !finished else { return }
            try seal(pending, last: true)
            pending = []
            finished = true
        }

        private func seal(_ chunk: [UInt8], last: Bool) throws(CryptoError) {
            let sealed = chunk.withUnsafeBytes {
                AgePrimitives.seal($0, key: payloadKey, nonce: AgeFile.streamNonce(counter, last: last))
            }
            counter += 1
            try emit(sealed)
        }
    }

    static func streamNonce(_ counter: UInt64, last: Bool) -> [UInt8] {
        [0, 0, 0] + (0..<8).reversed().map { UInt8(truncatingIfNeeded: counter >> (8 * UInt64($0))) } + [last ? 1 : 0]
    }

    static func stanza(for recipient: Recipient, fileKey: SecretBytes) throws(CryptoError) -> String {
        let zeroNonce = [UInt8](repeating: 0, count: 12)
        switch recipient {
        case .x25519(let to):
            let (share, body) = try wrapToX25519(
                fileKey: fileKey, publicKey: to.publicKey, info: "age-encryption.org/v1/X25519")
            return "-> X25519 \(Base64.standard.encode(share))\n" + wrapBody(body)
        case .sshEd25519(let to):
            return try to.stanza(fileKey: fileKey)
        case .label(let type, let arguments, let body):
            guard ([type] + arguments).allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy(isVChar) }),
                !reservedTypes.contains(type)
            else { throw .malformed("age label stanza") }
            return "-> " + ([type] + arguments).joined(separator: " ") + "\n" + wrapBody(body)
        case .typedX25519(let type, let publicKey):
            guard !type.isEmpty, type.utf8.allSatisfy(isVChar), !reservedTypes.contains(type),
                publicKey.count == X25519.keyLength
            else { throw .malformed("age typed X25519 stanza") }
            let (share, body) = try wrapToX25519(fileKey: fileKey, publicKey: publicKey, info: type)
            return "-> \(type) \(Base64.standard.encode(share))\n" + wrapBody(body)
        case .scrypt(let passphrase, let logN):
            guard (1...AgeFile.maxWriteLogN).contains(logN) else { throw .malformed("age scrypt work factor") }
            let salt = randomBytes(16)
            let key = try AgePrimitives.scrypt(
                passphrase: passphrase, salt: Array("age-encryption.org/v1/scrypt".utf8) + salt, logN: logN)
            let body = fileKey.withUnsafeBytes { AgePrimitives.seal($0, key: key, nonce: zeroNonce) }
            return "-> scrypt \(Base64.standard.encode(salt)) \(logN)\n" + wrapBody(body)
        }
    }

    /// Stanza types age itself defines: never a label's or a typed X25519 stanza's.
    static let reservedTypes: Set<String> = ["X25519", "scrypt", "ssh-ed25519", "ssh-rsa"]

    /// age's X25519 wrapping of the file key (an ephemeral share, HKDF-SHA-256 of the shared
    /// point with salt share || public key and `info`, ChaCha20-Poly1305 with a zero nonce).
    static func wrapToX25519(fileKey: SecretBytes, publicKey: [UInt8], info: String) throws(CryptoError) -> (
        share: [UInt8], body: [UInt8]
    ) {
        let ephemeral = SecretBytes(randomCount: 32)
        let share = try X25519.publicKey(of: ephemeral)
        guard let shared = AgePrimitives.x25519(ephemeral, publicKey) else {
            throw .malformed("age recipient is a low-order point")
        }
        let wrapKey = AgePrimitives.hkdf(secret: shared, salt: share + publicKey, info: info)
        let body = fileKey.withUnsafeBytes {
            AgePrimitives.seal($0, key: wrapKey, nonce: [UInt8](repeating: 0, count: 12))
        }
        return (share, body)
    }

    /// Base64 body in 64-column lines; the last line is always shorter than 64 (empty if needed).
    static func wrapBody(_ body: [UInt8]) -> String {
        let text = Array(Base64.standard.encode(body).utf8)
        var lines: [String] = []
        var i = 0
        while i + 64 <= text.count {
            lines.append(String(decoding: text[i..<(i + 64)], as: UTF8.self))
            i += 64
        }
        lines.append(String(decoding: text[i...], as: UTF8.self))
        return lines.joined(separator: "\n") + "\n"
    }

    /// The ASCII armor of a binary age file (PEM-like, 64 columns).
    public static func armor(_ file: [UInt8]) -> String {
        let text = Array(Base64.standard.encodePadded(file).utf8)
        var out = "-----BEGIN AGE ENCRYPTED FILE-----\n"
        var i = 0
        while i < text.count {
            out += String(decoding: text[i..<min(i + 64, text.count)], as: UTF8.self) + "\n"
            i += 64
        }
        return out + "-----END AGE ENCRYPTED FILE-----\n"
    }
}
