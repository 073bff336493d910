import CSodium

extension AgeFile {
    /// Whether `bytes` look like an age file (binary or armored).
    public static func looksLikeAge(_ bytes: [UInt8]) -> Bool {
        let trimmed = bytes.drop { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        return bytes.starts(with: Array((versionLine + "\n").utf8))
            || trimmed.starts(with: Array("-----BEGIN AGE ENCRYPTED FILE-----".utf8))
    }

    /// Decrypts a whole age file with `key`. `armored` nil means: armored if it begins (after
    /// whitespace) with "-----BEGIN", as age does.
    public static func decrypt(_ file: [UInt8], with key: Key, armored: Bool? = nil) throws(AgeError) -> [UInt8] {
        let binary = try (armored ?? isArmored(file)) ? dearmor(file) : file
        let (header, payloadStart) = try parseHeader(binary)
        var key = key
        if case .fromHeader(let choose) = key {
            do { key = try choose(header.summaries) } catch let error as AgeError { throw error } catch {
                throw .noMatch
            }
        }
        let fileKey = try unwrapFileKey(header, key: key)
        let macKey = AgePrimitives.hkdf(secret: fileKey, salt: [], info: "header")
        let expected = macKey.withUnsafeBytes { AgePrimitives.hmacSHA256(key: Array($0), [header.macInput]) }
        guard sodium_memcmp(expected, header.mac, 32) == 0 else { throw .hmac }
        return try decryptPayload(Array(binary[payloadStart...]), fileKey: fileKey)
    }

    struct Stanza {
        var type: String
        var arguments: [String]
        var body: [UInt8]
    }

    struct Header {
        var stanzas: [Stanza]
        var summaries: [StanzaSummary] {
            stanzas.map { StanzaSummary(type: $0.type, arguments: $0.arguments, body: $0.body) }
        }
        var macInput: [UInt8]
        var mac: [UInt8]
    }

    static func isVChar(_ c: UInt8) -> Bool { c >= 33 && c <= 126 }

    /// Parses the header strictly (age's rules: LF only, canonical base64, 64-column body lines
    /// ending with a short line, at least one stanza, "--- " and a 32-byte MAC).
    static func parseHeader(_ data: [UInt8]) throws(AgeError) -> (Header, Int) {
        var position = 0
        func line() throws(AgeError) -> [UInt8] {
            guard let end = data[position...].firstIndex(of: 0x0A) else {
                throw .header("it ends before the header does")
            }
            let bytes = Array(data[position..<end])
            position = end + 1
            return bytes
        }
        let first = try line()
        guard first == Array(versionLine.utf8) else {
            throw .header(
                first.starts(with: Array("age-encryption.org/".utf8)) ? "unsupported version" : "not an age file")
        }
        var stanzas: [Stanza] = []
        while true {
            let lineStart = position
            let current = try line()
            if current.starts(with: Array("---".utf8)) {
                guard current.count == 3 + 1 + 43, current[3] == 0x20,
                    let mac = Base64.standard.decode(Array(current[4...])),
                    mac.count == 32
                else {
                    throw .header("malformed MAC line")
                }
                guard !stanzas.isEmpty else { throw .header("no recipient stanzas") }
                return (Header(stanzas: stanzas, macInput: Array(data[0..<(lineStart + 3)]), mac: mac), position)
            }
            guard current.starts(with: Array("-> ".utf8)) else {
                throw .header("expected a stanza (->) or the MAC line (---)")
            }
            let fields = current[3...].split(separator: 0x20, omittingEmptySubsequences: false)
            guard !fields.isEmpty, fields.allSatisfy({ !$0.isEmpty && $0.allSatisfy(isVChar) }) else {
                throw .header("malformed stanza arguments")
            }
            var body: [UInt8] = []
            while true {
                let bodyLine = try line()
                guard bodyLine.count <= 64, let decoded = Base64.standard.decode(bodyLine) else {
                    throw .header("malformed stanza body")
                }
                body += decoded
                if bodyLine.count < 64 { break }
            }
            let strings = fields.map { String(decoding: $0, as: UTF8.self) }
            stanzas.append(Stanza(type: strings[0], arguments: Array(strings.dropFirst()), body: body))
        }
    }

    static func unwrapFileKey(_ header: Header, key: Key) throws(AgeError) -> SecretBytes {
        let zeroNonce = [UInt8](repeating: 0, count: 12)
        let hasScrypt = header.stanzas.contains { $0.type == "scrypt" }
        if hasScrypt && header.stanzas.count != 1 { throw .header("an scrypt stanza must be the only one") }
        for stanza in header.stanzas {
            switch stanza.type {
            case "X25519":
                guard stanza.arguments.count == 1, let share = Base64.standard.decode(Array(stanza.arguments[0].utf8)),
                    share.count == 32
                else {
                    throw .header("malformed X25519 stanza")
                }
                guard stanza.body.count == 32 else { throw .header("X25519 stanza body is not 32 bytes") }
                guard case .identities(let identities) = key else { continue }
                for identity in identities {
                    guard let shared = AgePrimitives.x25519(identity.secretKey, share) else {
                        throw .header("X25519 share is a low-order point")
                    }
                    let wrapKey = AgePrimitives.hkdf(
                        secret: shared, salt: share + identity.recipient.publicKey, info: "age-encryption.org/v1/X25519"
                    )
                    if let fileKey = AgePrimitives.open(stanza.body, key: wrapKey, nonce: zeroNonce) { return fileKey }
                }
            case "scrypt":
                guard stanza.arguments.count == 2, let salt = Base64.standard.decode(Array(stanza.arguments[0].utf8)),
                    salt.count == 16
                else {
                    throw .header("malformed scrypt stanza")
                }
                let factor = stanza.arguments[1]
                guard !factor.isEmpty, factor.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), factor.first != "0",
                    factor.count <= 2, let logN = Int(factor), logN >= 1, logN <= 64
                else {
                    throw .header("malformed scrypt work factor")
                }
                guard stanza.body.count == 32 else { throw .header("scrypt stanza body is not 32 bytes") }
                guard case .passphrase(let passphrase, let maxLogN) = key else { continue }
                guard logN <= maxLogN else {
                    throw .header("scrypt work factor \(logN) is above the accepted \(maxLogN)")
                }
                let wrapKey: SecretBytes
                do {
                    wrapKey = try AgePrimitives.scrypt(
                        passphrase: passphrase, salt: Array("age-encryption.org/v1/scrypt".utf8) + salt, logN: logN)
                } catch { throw .header("scrypt failed (work factor too large?)") }
                if let fileKey = AgePrimitives.open(stanza.body, key: wrapKey, nonce: zeroNonce) { return fileKey }
            default:
                guard case .typedX25519(let type, let secretKey) = key, stanza.type == type else { continue }
                guard stanza.arguments.count == 1, let share = Base64.standard.decode(Array(stanza.arguments[0].utf8)),
                    share.count == 32, stanza.body.count == 32
                else {
                    throw .header("malformed \(type) stanza")
                }
                guard let shared = AgePrimitives.x25519(secretKey, share),
                    let publicKey = try? X25519.publicKey(of: secretKey)
                else {
                    throw .header("\(type) share is a low-order point")
                }
                let wrapKey = AgePrimitives.hkdf(secret: shared, salt: share + publicKey, info: type)
                if let fileKey = AgePrimitives.open(stanza.body, key: wrapKey, nonce: zeroNonce) { return fileKey }
            }
        }
        throw .noMatch
    }

    static func decryptPayload(_ payload: [UInt8], fileKey: SecretBytes) throws(AgeError) -> [UInt8] {
        guard payload.count >= 16 else { throw .header("the payload nonce is missing or short") }
        let payloadKey = AgePrimitives.hkdf(secret: fileKey, salt: Array(payload[0..<16]), info: "payload")
        var out: [UInt8] = []
        var offset = 16
        var counter: UInt64 = 0
        let full = chunkSize + tagSize
        while true {
            let remaining = payload.count - offset
            guard remaining >= tagSize else { throw .payload(counter == 0 ? "no chunks" : "truncated") }
            let size = min(full, remaining)
            let chunk = Array(payload[offset..<(offset + size)])
            let isLast = remaining <= full
            if isLast {
                guard let plain = AgePrimitives.open(chunk, key: payloadKey, nonce: streamNonce(counter, last: true))
                else {
                    throw .payload("the final chunk does not authenticate (truncated or altered)")
                }
                guard plain.count > 0 || counter == 0 else { throw .payload("empty final chunk") }
                plain.withUnsafeBytes { out += $0 }
                return out
            }
            guard let plain = AgePrimitives.open(chunk, key: payloadKey, nonce: streamNonce(counter, last: false))
            else {
                throw .payload("chunk \(counter) does not authenticate")
            }
            plain.withUnsafeBytes { out += $0 }
            offset += size
            counter += 1
        }
    }

    // MARK: - Armor

    public static func isWhitespace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D }

    static func isArmored(_ file: [UInt8]) -> Bool {
        file.drop(while: isWhitespace).starts(with: Array("-----BEGIN".utf8))
    }

    /// Strict PEM-style armor: optional whitespace outside, BEGIN line, 64-column padded base64
    /// lines (the last 1-64 columns), END line; LF or CRLF.
    static func dearmor(_ file: [UInt8]) throws(AgeError) -> [UInt8] {
        let begin = Array("-----BEGIN AGE ENCRYPTED FILE-----".utf8)
        let end = Array("-----END AGE ENCRYPTED FILE-----".utf8)
        var text = Array(file.drop(while: isWhitespace))
        while let last = text.last, isWhitespace(last) { text.removeLast() }
        var lines: [[UInt8]] = text.split(separator: 0x0A, omittingEmptySubsequences: false).map { line in
            var l = Array(line)
            if l.last == 0x0D { l.removeLast() }
            return l
        }
        guard lines.first == begin else { throw .armor("missing or malformed BEGIN line") }
        guard lines.last == end else { throw .armor("missing or malformed END line") }
        lines = Array(lines.dropFirst().dropLast())
        guard !lines.isEmpty else { return [] }
        var encoded: [UInt8] = []
        for (i, line) in lines.enumerated() {
            let isLast = i == lines.count - 1
            guard line.count <= 64, isLast ? !line.isEmpty : line.count == 64 else {
                throw .armor("line \(i + 2) has the wrong length")
            }
            encoded += line
        }
        guard let decoded = Base64.standard.decodePadded(encoded) else { throw .armor("invalid base64") }
        return decoded
    }
}
