import Foundation
import RxCrypto
import RxTestSupport
import Testing

/// age v1: the C2SP CCTV test kit (Fixtures/conformance/age-testkit) and interop with Debian's
/// `age` CLI in both directions.
@Suite struct AgeTests {
    static let kit = URL(fileURLWithPath: Repository.fixture("conformance/age-testkit"))

    struct Vector {
        var name: String
        var headers: [String: String]
        var body: [UInt8]
    }

    struct KitMissing: Error, CustomStringConvertible {
        var description: String {
            "age test kit not found at \(AgeTests.kit.path): the repository must hold Fixtures/conformance/age-testkit"
        }
    }

    /// Every vector's name; a missing or emptied kit fails the test rather than skipping it.
    static func vectorNames() throws -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: kit.path), names.count >= 100 else {
            throw KitMissing()
        }
        return names.sorted()
    }

    static func load(_ name: String) throws -> Vector {
        let data = Array(try Data(contentsOf: kit.appendingPathComponent(name)))
        // Header lines, a blank line, then the age file.
        var headers: [String: String] = [:]
        var position = 0
        while let end = data[position...].firstIndex(of: 0x0A) {
            let line = String(decoding: data[position..<end], as: UTF8.self)
            position = end + 1
            if line.isEmpty { break }
            if let colon = line.firstIndex(of: ":") {
                headers[String(line[..<colon]), default: ""] +=
                    (headers[String(line[..<colon])] == nil ? "" : "\n")
                    + line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        var body = Array(data[position...])
        if headers["compressed"] == "zlib" { body = try inflate(body) }
        return Vector(name: name, headers: headers, body: body)
    }

    /// zlib-compressed vectors are inflated with Python's zlib (the suite already needs python3).
    static func inflate(_ bytes: [UInt8]) throws -> [UInt8] {
        let r = try Subprocess.run(
            ["python3", "-c", "import sys, zlib; sys.stdout.buffer.write(zlib.decompress(sys.stdin.buffer.read()))"],
            stdin: Data(bytes))
        #expect(r.status == 0, "python3 could not inflate a vector: \(r.stderr)")
        return Array(r.stdoutData)
    }

    static func secret(_ text: String) -> SecretBytes {
        var bytes = Array(text.utf8)
        return SecretBytes(consuming: &bytes)
    }

    /// The key a vector states: its passphrase, or its identities.
    static func key(_ vector: Vector) -> AgeFile.Key {
        vector.headers["passphrase"].map { .passphrase(secret($0), maxLogN: 22) }
            ?? .identities(
                (vector.headers["identity"] ?? "").split(separator: "\n").compactMap { AgeIdentity(line: String($0)) })
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() }

    @Test func conformsToTheAgeTestKit() throws {
        let names = try Self.vectorNames()
        var checked = 0
        for name in names {
            let vector = try Self.load(name)
            // Post-quantum hybrid recipients (ML-KEM) are not implemented: their identities are not
            // X25519 ones, so those vectors cannot even state a key we understand.
            if vector.headers["identity"]?.hasPrefix("AGE-SECRET-KEY-PQ-") == true { continue }
            let key = Self.key(vector)
            let expect = vector.headers["expect"] ?? ""
            checked += 1
            do {
                let plaintext = try AgeFile.decrypt(vector.body, with: key, armored: vector.headers["armored"] == "yes")
                #expect(expect == "success", "\(name): decrypted, expected \(expect)")
                if let payload = vector.headers["payload"] {
                    #expect(Self.hex(SHA256.hash(plaintext)) == payload, "\(name): wrong plaintext")
                }
            } catch {
                let got: String
                switch error {
                case .header: got = "header failure"
                case .noMatch: got = "no match"
                case .hmac: got = "HMAC failure"
                case .payload: got = "payload failure"
                case .armor: got = "armor failure"
                }
                #expect(got == expect, "\(name): \(error)")
            }
        }
        #expect(checked >= 125, "only the post-quantum vectors are skipped")
    }

    @Test func roundTripsEverySizeAroundTheChunkBoundary() throws {
        let identity = try AgeIdentity.generate()
        for size in [0, 1, 65535, 65536, 65537, 131072, 200_000] {
            let plaintext = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            let file = try AgeFile.encrypt(plaintext, to: [.x25519(identity.recipient)])
            #expect(try AgeFile.decrypt(file, with: .identities([identity])) == plaintext, "size \(size)")
            #expect(try AgeFile.decrypt(Array(AgeFile.armor(file).utf8), with: .identities([identity])) == plaintext)
            #expect(throws: AgeError.self) {
                try AgeFile.decrypt(Array(file.dropLast()), with: .identities([identity]))
            }
        }
        let passphrase = Self.secret("correct horse battery staple")
        let locked = try AgeFile.encrypt(Array("hello".utf8), to: [.scrypt(passphrase: passphrase, logN: 10)])
        #expect(try AgeFile.decrypt(locked, with: .passphrase(passphrase, maxLogN: 22)) == Array("hello".utf8))
        #expect(throws: AgeError.noMatch) {
            try AgeFile.decrypt(locked, with: .passphrase(Self.secret("wrong"), maxLogN: 22))
        }
        #expect(throws: AgeError.self) { try AgeFile.decrypt(locked, with: .passphrase(passphrase, maxLogN: 9)) }
    }

    func age(_ arguments: [String], input: [UInt8], in directory: URL) throws -> (Int32, [UInt8]) {
        let r = try Subprocess.run(["age"] + arguments, directory: directory, stdin: Data(input))
        return (r.status, Array(r.stdoutData))
    }

    @Test func interoperatesWithTheAgeCLI() throws {
        let folder = try TemporaryDirectory(prefix: "rxvault-age")
        let directory = folder.url
        let identity = try AgeIdentity.generate()
        try identity.fileText(created: "test").write(
            to: directory.appendingPathComponent("key.txt"), atomically: true, encoding: .utf8)
        let plaintext = (0..<150_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }

        // rxvault writes, age reads.
        let ours = try AgeFile.encrypt(plaintext, to: [.x25519(identity.recipient)])
        let (status, theirs) = try age(["-d", "-i", "key.txt"], input: ours, in: directory)
        try #require(status == 0, "age -d failed (is Debian's age installed?)")
        #expect(theirs == plaintext)

        // age writes (binary and armored), rxvault reads.
        for extra in [[], ["-a"]] {
            let (status, file) = try age(
                ["-r", identity.recipient.description] + extra, input: plaintext, in: directory)
            #expect(status == 0)
            #expect(try AgeFile.decrypt(file, with: .identities([identity])) == plaintext)
        }
    }
}

@Suite struct AgeStreamTests {
    func streamDecrypt(_ file: [UInt8], _ key: AgeFile.Key) throws -> [UInt8] {
        var offset = 0
        var out: [UInt8] = []
        try AgeFile.decrypt(
            read: { buffer in
                // Small, uneven reads exercise every boundary.
                let n = min(777, buffer.count, file.count - offset)
                for i in 0..<n { buffer[i] = file[offset + i] }
                offset += n
                return n
            }, key: key, write: { out += $0 })
        return out
    }

    @Test func streamingDecryptMatchesWholeFileDecrypt() throws {
        let identity = try AgeIdentity.generate()
        for size in [0, 1, 65535, 65536, 65537, 131072, 300_000] {
            let plaintext = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 13) }
            let file = try AgeFile.encrypt(plaintext, to: [.x25519(identity.recipient)])
            #expect(try streamDecrypt(file, .identities([identity])) == plaintext, "size \(size)")
            #expect(throws: (any Error).self) { try streamDecrypt(Array(file.dropLast(20)), .identities([identity])) }
        }
    }

    @Test func streamingDecryptAgreesWithTheTestKit() throws {
        for name in try AgeTests.vectorNames() {
            let vector = try AgeTests.load(name)
            if vector.headers["armored"] == "yes" || vector.headers["identity"]?.hasPrefix("AGE-SECRET-KEY-PQ-") == true
            {
                continue
            }
            let key = AgeTests.key(vector)
            let whole = try? AgeFile.decrypt(vector.body, with: key, armored: false)
            let streamed = try? streamDecrypt(vector.body, key)
            #expect(whole == streamed, "\(name): whole-file and streaming disagree")
        }
    }

    /// Streams an armored file through `AgeArmorStream` (reads of `step` bytes at most) into the
    /// streaming decrypter.
    func armoredStreamDecrypt(_ file: [UInt8], _ key: AgeFile.Key, step: Int) throws -> [UInt8] {
        var offset = 0
        let armor = AgeArmorStream { buffer in
            let n = min(step, buffer.count, file.count - offset)
            for i in 0..<n { buffer[i] = file[offset + i] }
            offset += n
            return n
        }
        var out: [UInt8] = []
        try AgeFile.decrypt(read: { try armor.read(&$0) }, key: key, write: { out += $0 })
        return out
    }

    @Test func streamingArmorAgreesWithTheTestKit() throws {
        var armored = 0
        for name in try AgeTests.vectorNames() {
            let vector = try AgeTests.load(name)
            guard vector.headers["armored"] == "yes",
                vector.headers["identity"]?.hasPrefix("AGE-SECRET-KEY-PQ-") != true
            else { continue }
            armored += 1
            let key = AgeTests.key(vector)
            let whole = try? AgeFile.decrypt(vector.body, with: key, armored: true)
            for step in [1, 63, 4096] {
                let streamed = try? armoredStreamDecrypt(vector.body, key, step: step)
                #expect(whole == streamed, "\(name), reads of \(step): whole-file and streaming armor disagree")
            }
        }
        #expect(armored >= 10, "the test kit's armored vectors were found")
    }

    @Test func streamingArmorRoundTripsLargeFiles() throws {
        let identity = try AgeIdentity.generate()
        for size in [0, 1, 47, 48, 49, 65_536, 200_000] {
            let plaintext = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            let file = try AgeFile.encrypt(plaintext, to: [.x25519(identity.recipient)])
            let text = Array(AgeFile.armor(file).utf8)
            #expect(try armoredStreamDecrypt(text, .identities([identity]), step: 1000) == plaintext)
            let crlf = Array(AgeFile.armor(file).replacingOccurrences(of: "\n", with: "\r\n").utf8)
            #expect(try armoredStreamDecrypt(crlf, .identities([identity]), step: 333) == plaintext)
            var trailing = text
            trailing += Array("garbage".utf8)
            #expect(throws: AgeError.self) { try armoredStreamDecrypt(trailing, .identities([identity]), step: 1000) }
            #expect(throws: AgeError.self) {
                try armoredStreamDecrypt(Array(text.dropLast(40)), .identities([identity]), step: 1000)
            }
        }
    }
}
