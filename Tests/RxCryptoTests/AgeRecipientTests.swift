import Foundation
import RxCrypto
import RxTestSupport
import Testing

/// Recipients as age users write them (age1..., ssh-ed25519 keys, recipients files), the
/// ssh-ed25519 stanza against Debian's age and ssh-keygen, label stanzas, streaming armor and
/// reading a header without a key.
@Suite struct AgeRecipientTests {
    func run(_ tool: String, _ arguments: [String], input: [UInt8] = [], in directory: URL) throws -> (Int32, [UInt8]) {
        let r = try Subprocess.run([tool] + arguments, directory: directory, stdin: Data(input))
        return (r.status, Array(r.stdoutData))
    }

    /// An ed25519 key made by OpenSSH's ssh-keygen (no passphrase); returns its .pub line.
    func sshKeygen(_ name: String, in directory: URL) throws -> String {
        let (status, _) = try run(
            "ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "test key", "-f", name], in: directory)
        try #require(status == 0, "ssh-keygen is needed (apt-get install openssh-client)")
        return try String(contentsOf: directory.appendingPathComponent(name + ".pub"), encoding: .utf8)
    }

    @Test func sshEd25519FilesOpenWithAgeAndTheSSHKey() throws {
        let folder = try TemporaryDirectory(prefix: "rxvault-agerecip")
        let directory = folder.url
        let pub = try sshKeygen("id_ed25519", in: directory)
        guard case .sshEd25519(let recipient) = try AgeRecipientText.parse(pub) else {
            Issue.record("not parsed as ssh-ed25519")
            return
        }
        #expect(
            pub.hasPrefix(recipient.description + " "), "the key prints as authorized_keys does, without the comment")
        let other = try sshKeygen("other", in: directory)
        for size in [0, 1, 65536, 150_000] {
            let plaintext = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 13) }
            // Both SSH keys and an age key: each opens it on its own.
            let identity = try AgeIdentity.generate()
            let file = try AgeFile.encrypt(
                plaintext, to: [.sshEd25519(recipient), try AgeRecipientText.parse(other), .x25519(identity.recipient)])
            let (status, opened) = try run("age", ["-d", "-i", "id_ed25519"], input: file, in: directory)
            try #require(status == 0, "age -d -i id_ed25519 refused rxvault's ssh-ed25519 stanza (size \(size))")
            #expect(opened == plaintext)
            let (otherStatus, otherOpened) = try run("age", ["-d", "-i", "other"], input: file, in: directory)
            #expect(otherStatus == 0 && otherOpened == plaintext)
            #expect(
                try AgeFile.decrypt(file, with: .identities([identity])) == plaintext,
                "our reader skips ssh stanzas it has no key for")
        }
        // A key made by someone else does not open it.
        let third = try sshKeygen("third", in: directory)
        _ = third
        let file = try AgeFile.encrypt(Array("x".utf8), to: [.sshEd25519(recipient)])
        #expect(try run("age", ["-d", "-i", "third"], input: file, in: directory).0 != 0)
        // age itself encrypts to the same .pub line: the stanza it writes has the same tag.
        let (ageStatus, theirs) = try run("age", ["-R", "id_ed25519.pub"], input: Array("hi".utf8), in: directory)
        #expect(ageStatus == 0)
        let ours = try AgeFile.encrypt(Array("hi".utf8), to: [.sshEd25519(recipient)])
        func tag(_ file: [UInt8]) throws -> String? {
            var offset = 0
            let stanzas = try AgeFile.peekHeader { buffer in
                let n = min(buffer.count, file.count - offset)
                for i in 0..<n { buffer[i] = file[offset + i] }
                offset += n
                return n
            }
            return stanzas.first { $0.type == "ssh-ed25519" }?.arguments.first
        }
        #expect(try tag(theirs) != nil && tag(theirs) == tag(ours))
    }

    @Test func recipientTextIsReadAsAgeReadsIt() throws {
        let identity = try AgeIdentity.generate()
        guard case .x25519(let parsed) = try AgeRecipientText.parse("  \(identity.recipient)\n") else {
            Issue.record("age1 not parsed")
            return
        }
        #expect(parsed == identity.recipient)
        #expect(throws: AgeRecipientText.Refusal.secretKey) {
            try AgeRecipientText.parse(identity.fileText(created: "x").split(separator: "\n")[2].description)
        }
        #expect(throws: AgeRecipientText.Refusal.plugin) {
            try AgeRecipientText.parse("age1yubikey1qwertyuiopasdfghjklzxcvbnm")
        }
        #expect(throws: AgeRecipientText.Refusal.malformed) { try AgeRecipientText.parse("age1notbech32") }
        #expect(throws: AgeRecipientText.Refusal.malformed) { try AgeRecipientText.parse("hello") }
        #expect(throws: AgeRecipientText.Refusal.malformed) { try AgeRecipientText.parse("ssh-ed25519 AAAAnotakey") }
        let rsa = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC0 someone@host"
        #expect(throws: AgeRecipientText.Refusal.unsupportedSSHKey("ssh-rsa")) { try AgeRecipientText.parse(rsa) }

        let second = try AgeIdentity.generate()
        let file = "# backup keys\n\n\(identity.recipient)\r\n# the laptop\n\(second.recipient)\n"
        let list = try AgeRecipientText.parseFile(file)
        #expect(list.count == 2)
        #expect(throws: AgeRecipientText.LineRefusal(line: 3, refusal: .malformed)) {
            try AgeRecipientText.parseFile("# a\n\(identity.recipient)\n  oops\n")
        }
        #expect(try AgeRecipientText.parseFile("# only comments\n\n").isEmpty)
    }

    @Test func labelStanzasAreReadableWithoutAKeyAndAgeSkipsThem() throws {
        let folder = try TemporaryDirectory(prefix: "rxvault-agerecip")
        let directory = folder.url
        let identity = try AgeIdentity.generate()
        try identity.fileText(created: "test").write(
            to: directory.appendingPathComponent("key.txt"), atomically: true, encoding: .utf8)
        let label = AgeFile.Recipient.label(type: "rxvault-backup", arguments: ["v1", "00ff", "20260101T000000Z"])
        let file = try AgeFile.encrypt(Array("payload".utf8), to: [label, .x25519(identity.recipient)])
        let (status, opened) = try run("age", ["-d", "-i", "key.txt"], input: file, in: directory)
        #expect(status == 0 && opened == Array("payload".utf8), "age skips the label stanza")
        #expect(try AgeFile.decrypt(file, with: .identities([identity])) == Array("payload".utf8))
        var offset = 0
        let stanzas = try AgeFile.peekHeader { buffer in
            let n = min(buffer.count, 5, file.count - offset)
            for i in 0..<n { buffer[i] = file[offset + i] }
            offset += n
            return n
        }
        #expect(
            stanzas.first
                == AgeFile.StanzaSummary(type: "rxvault-backup", arguments: ["v1", "00ff", "20260101T000000Z"]))
        #expect(stanzas.count == 2 && stanzas[1].type == "X25519")
        // The label is covered by the header MAC: changed, the file no longer opens.
        var altered = file
        let at = try #require(altered.firstIndex(of: UInt8(ascii: "0")))
        altered[at] = UInt8(ascii: "1")
        #expect(throws: AgeError.hmac) { try AgeFile.decrypt(altered, with: .identities([identity])) }
        // A passphrase must stand alone (age refuses anything beside an scrypt stanza).
        #expect(throws: CryptoError.self) {
            try AgeFile.encrypt([1], to: [label, .scrypt(passphrase: SecretBytes(randomCount: 8), logN: 10)])
        }
        #expect(throws: CryptoError.self) { try AgeFile.encrypt([1], to: [label]) }
        #expect(throws: CryptoError.self) {
            try AgeFile.encrypt([1], to: [.label(type: "bad type", arguments: []), .x25519(identity.recipient)])
        }
    }

    /// rxvault's backups: a label with a body, and age's X25519 stanza under a type of its own
    /// (also the HKDF info). Debian's age opens the file with an ordinary identity beside them;
    /// the typed stanza opens only with its type and secret; `fromHeader` sees the bodies.
    @Test func typedX25519StanzasOpenWithTheirOwnTypeAndAgeSkipsThem() throws {
        let folder = try TemporaryDirectory(prefix: "rxvault-agerecip")
        let directory = folder.url
        let identity = try AgeIdentity.generate()
        try identity.fileText(created: "test").write(
            to: directory.appendingPathComponent("key.txt"), atomically: true, encoding: .utf8)
        let (publicKey, secretKey) = try X25519.generate()
        let body = Array(0..<100).map { UInt8($0) }
        let file = try AgeFile.encrypt(
            Array("payload".utf8),
            to: [
                .label(type: "rxvault-slot", arguments: ["v1", "1"], body: body),
                .typedX25519(type: "rxvault-rootkey", publicKey: publicKey), .x25519(identity.recipient)
            ])
        let (status, opened) = try run("age", ["-d", "-i", "key.txt"], input: file, in: directory)
        #expect(status == 0 && opened == Array("payload".utf8), "age skips both rxvault stanzas")
        #expect(
            try AgeFile.decrypt(file, with: .typedX25519(type: "rxvault-rootkey", secretKey: secretKey))
                == Array("payload".utf8))
        #expect(throws: AgeError.noMatch) {
            try AgeFile.decrypt(file, with: .typedX25519(type: "rxvault-other", secretKey: secretKey))
        }
        #expect(throws: AgeError.noMatch) {
            try AgeFile.decrypt(file, with: .typedX25519(type: "rxvault-rootkey", secretKey: identity.secretKey))
        }
        let chosen = AgeFile.Key.fromHeader { stanzas in
            guard stanzas.first?.body == body else { return .identities([]) }
            return .typedX25519(type: "rxvault-rootkey", secretKey: secretKey)
        }
        #expect(try AgeFile.decrypt(file, with: chosen) == Array("payload".utf8))
        #expect(throws: CryptoError.self) {
            try AgeFile.encrypt([1], to: [.typedX25519(type: "X25519", publicKey: publicKey)])
        }
    }

    @Test func streamingArmorWritesWhatWholeFileArmorWrites() throws {
        let identity = try AgeIdentity.generate()
        for size in [0, 1, 47, 48, 49, 65536, 100_003] {
            let file = try AgeFile.encrypt(
                (0..<size).map { UInt8(truncatingIfNeeded: $0) }, to: [.x25519(identity.recipient)])
            var armored: [UInt8] = []
            let writer = try AgeArmorWriter { armored += $0 }
            // Uneven pieces: line breaks must not depend on how the bytes arrive.
            var offset = 0
            var step = 1
            while offset < file.count {
                let end = min(file.count, offset + step)
                try writer.write(Array(file[offset..<end]))
                offset = end
                step = step * 3 % 1000 + 1
            }
            try writer.finish()
            #expect(String(decoding: armored, as: UTF8.self) == AgeFile.armor(file), "size \(size)")
        }
    }
}
