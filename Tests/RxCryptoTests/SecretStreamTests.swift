import RxCrypto
import Testing

@Suite struct SecretStreamTests {
    let key = SecretBytes(randomCount: SecretStream.keyLength)
    let ad: [UInt8] = Array("attachment-1".utf8)

    func seal(_ chunks: [[UInt8]]) throws -> (header: [UInt8], sealed: [[UInt8]]) {
        let writer = try SecretStream.Writer(key: key)
        let sealed = try chunks.enumerated().map { i, c in
            try c.withUnsafeBytes { try writer.push($0, associatedData: ad, final: i == chunks.count - 1) }
        }
        return (writer.header, sealed)
    }

    func open(_ header: [UInt8], _ sealed: [[UInt8]]) throws -> ([[UInt8]], Bool) {
        let reader = try SecretStream.Reader(key: key, header: header)
        return (try sealed.map { try reader.pull($0, associatedData: ad) }, reader.sawFinal)
    }

    @Test func roundTripsAndEndsWithTheFinalTag() throws {
        let chunks = (0..<4).map { i in [UInt8](repeating: UInt8(i), count: 100 + i) }
        let (header, sealed) = try seal(chunks)
        let (opened, final) = try open(header, sealed)
        #expect(opened == chunks)
        #expect(final)
    }

    @Test func cutAtAChunkBoundaryIsNotFinal() throws {
        let (header, sealed) = try seal([[1], [2], [3]])
        let (_, final) = try open(header, Array(sealed.dropLast()))
        #expect(!final, "a truncated stream must not look complete")
    }

    @Test func reorderedDuplicatedAlteredOrForeignChunksFail() throws {
        let (header, sealed) = try seal([[1, 1], [2, 2], [3, 3]])
        #expect(throws: CryptoError.self) { _ = try open(header, [sealed[1], sealed[0], sealed[2]]) }
        #expect(throws: CryptoError.self) { _ = try open(header, [sealed[0], sealed[0], sealed[2]]) }
        #expect(throws: CryptoError.self) { _ = try open(header, sealed + [sealed[2]]) }
        var altered = sealed
        altered[1][3] ^= 1
        #expect(throws: CryptoError.self) { _ = try open(header, altered) }
        let reader = try SecretStream.Reader(key: key, header: header)
        #expect(throws: CryptoError.self) { _ = try reader.pull(sealed[0], associatedData: Array("attachment-2".utf8)) }
    }

    @Test func sha256MatchesAKnownVector() {
        let hash = SHA256()
        hash.update(Array("abc".utf8))
        #expect(hash.finalHex() == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }
}

@Suite struct SHA1Tests {
    func hex(_ b: [UInt8]) -> String { b.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() }

    @Test func knownVectors() {
        #expect(hex(SHA1.hash([])) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        #expect(hex(SHA1.hash(Array("abc".utf8))) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(
            hex(SHA1.hash(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)))
                == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
        #expect(
            hex(SHA1.hash([UInt8](repeating: 0x61, count: 1_000_000))) == "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
    }
}
