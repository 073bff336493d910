/// age's X25519 key encodings (age-encryption.org/v1): a recipient is `age1` + Bech32 of the
/// 32-byte public key; an identity is `AGE-SECRET-KEY-1` + upper-case Bech32 of the secret key,
/// and an identity file holds one per line, with `#` comments (what `age-keygen` writes).
public struct AgeRecipient: Hashable, Sendable, CustomStringConvertible {
    public let publicKey: [UInt8]

    public init(publicKey: [UInt8]) { self.publicKey = publicKey }

    public init?(_ text: String) {
        guard let (hrp, data) = Bech32.decode(text.trimmingSpaces()), hrp == "age", data.count == X25519.keyLength,
            text.trimmingSpaces().hasPrefix("age1")
        else { return nil }
        publicKey = data
    }

    public var description: String { Bech32.encode(hrp: "age", data: publicKey) }
}

public struct AgeIdentity: Sendable {
    public let secretKey: SecretBytes
    public let recipient: AgeRecipient

    public init(secretKey: SecretBytes) throws(CryptoError) {
        self.secretKey = secretKey
        recipient = AgeRecipient(publicKey: try X25519.publicKey(of: secretKey))
    }

    public static func generate() throws(CryptoError) -> AgeIdentity {
        try AgeIdentity(secretKey: SecretBytes(randomCount: X25519.keyLength))
    }

    /// Parses one `AGE-SECRET-KEY-1...` line.
    public init?(line: String) {
        let text = line.trimmingSpaces()
        guard text.hasPrefix("AGE-SECRET-KEY-1"), let (hrp, data) = Bech32.decode(text), hrp == "age-secret-key-",
            data.count == X25519.keyLength
        else { return nil }
        var bytes = data
        guard let identity = try? AgeIdentity(secretKey: SecretBytes(consuming: &bytes)) else { return nil }
        self = identity
    }

    /// The identities in the text of an identity file (comments and blank lines skipped).
    /// Nil if any other line is not an X25519 identity.
    public static func parseFile(_ text: String) -> [AgeIdentity]? {
        var found: [AgeIdentity] = []
        for line in text.split(whereSeparator: \.isNewline) {
            let trimmed = String(line).trimmingSpaces()
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            guard let identity = AgeIdentity(line: trimmed) else { return nil }
            found.append(identity)
        }
        return found
    }

    /// The identity file text, as age-keygen writes it.
    public func fileText(created: String) -> String {
        let secret = secretKey.withUnsafeBytes { Bech32.encode(hrp: "AGE-SECRET-KEY-", data: Array($0)).uppercased() }
        return "# created: \(created)\n# public key: \(recipient)\n\(secret)\n"
    }
}

extension String {
    func trimmingSpaces() -> String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" || f == "\r" || f == "\n" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" || l == "\r" || l == "\n" { s = s.dropLast() }
        return String(s)
    }
}
