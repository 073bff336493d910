import Foundation
import RxCrypto
import Testing

@Suite struct AEADTests {
    let key = SecretBytes(randomCount: AEAD.keyLength)
    let aad: [UInt8] = Array("vault-1/prescription/abc/1".utf8)
    let message: [UInt8] = Array("OD -2.25 -0.75 x180".utf8)

    @Test func sealThenOpenRoundTrips() throws {
        let box = try AEAD.seal(message, key: key, associatedData: aad)
        #expect(box.count == message.count + AEAD.overhead)
        let opened = try AEAD.open(box, key: key, associatedData: aad)
        opened.withUnsafeBytes { #expect(Array($0) == message) }
    }

    @Test func sealingTwiceGivesDifferentCiphertexts() throws {
        // Random nonces: equal plaintexts must not be linkable in the file.
        let a = try AEAD.seal(message, key: key, associatedData: aad)
        let b = try AEAD.seal(message, key: key, associatedData: aad)
        #expect(a != b)
    }

    @Test func everyFlippedByteFailsToOpen() throws {
        let box = try AEAD.seal(message, key: key, associatedData: aad)
        for index in box.indices {
            var tampered = box
            tampered[index] ^= 0x01
            #expect(throws: CryptoError.authenticationFailed) { try AEAD.open(tampered, key: key, associatedData: aad) }
        }
    }

    @Test func otherAssociatedDataOrKeyFails() throws {
        let box = try AEAD.seal(message, key: key, associatedData: aad)
        #expect(throws: CryptoError.authenticationFailed) { try AEAD.open(box, key: key, associatedData: aad + [0]) }
        #expect(throws: CryptoError.authenticationFailed) {
            try AEAD.open(box, key: SecretBytes(randomCount: 32), associatedData: aad)
        }
        #expect(throws: CryptoError.authenticationFailed) {
            try AEAD.open(Array(box.prefix(10)), key: key, associatedData: aad)
        }
        #expect(throws: CryptoError.authenticationFailed) {
            try AEAD.open(Array(box.dropLast()), key: key, associatedData: aad)
        }
    }

    @Test func wrongKeyLengthIsRefused() {
        #expect(throws: CryptoError.malformed("key length")) {
            try AEAD.seal(message, key: SecretBytes(randomCount: 16), associatedData: aad)
        }
    }
}

@Suite struct PasswordKDFTests {
    let salt = [UInt8](repeating: 7, count: PasswordKDF.saltLength)
    let kdf = PasswordKDF(preset: .interactive)

    func secret(_ text: String) -> SecretBytes {
        var bytes = Array(text.utf8)
        return SecretBytes(consuming: &bytes)
    }

    @Test func sameInputsSameKeyOtherwiseDifferent() throws {
        let a = try kdf.deriveKey(passphrase: secret("correct horse"), salt: salt)
        let b = try kdf.deriveKey(passphrase: secret("correct horse"), salt: salt)
        let c = try kdf.deriveKey(passphrase: secret("correct horsf"), salt: salt)
        let d = try kdf.deriveKey(
            passphrase: secret("correct horse"), salt: [UInt8](repeating: 8, count: PasswordKDF.saltLength))
        #expect(a == b)
        #expect(a != c)
        #expect(a != d)
        #expect(a.count == 32)
    }

    @Test func presetsAreLibsodiums() {
        #expect(PasswordKDF(preset: .interactive).memLimit == 64 << 20)
        #expect(PasswordKDF(preset: .moderate).memLimit == 256 << 20)
        #expect(PasswordKDF(preset: .sensitive).memLimit == 1 << 30)
        #expect(PasswordKDF(preset: .moderate).preset == .moderate)
        #expect(PasswordKDF(opsLimit: 5, memLimit: 64 << 20).preset == nil)
    }

    @Test func absurdParametersFromAFileAreRefused() {
        #expect(!PasswordKDF(opsLimit: 0, memLimit: 64 << 20).isWithinLibraryLimits)
        #expect(!PasswordKDF(opsLimit: 3, memLimit: 1).isWithinLibraryLimits)
        #expect(throws: CryptoError.malformed("KDF parameters")) {
            try PasswordKDF(opsLimit: 3, memLimit: 1).deriveKey(passphrase: secret("x"), salt: salt)
        }
        #expect(throws: CryptoError.malformed("KDF salt")) { try kdf.deriveKey(passphrase: secret("x"), salt: [1, 2]) }
    }
}

@Suite struct SecretBytesTests {
    @Test func descriptionNeverShowsTheBytes() {
        var bytes = Array("hunter2-passphrase".utf8)
        let secret = SecretBytes(consuming: &bytes)
        #expect(bytes.allSatisfy { $0 == 0 }, "the source array is wiped")
        #expect(!"\(secret)".contains("hunter2"))
        #expect(!String(reflecting: secret).contains("hunter2"))
        #expect(secret.prefix(7).withUnsafeBytes { Array($0) } == Array("hunter2".utf8))
    }

    @Test func subkeysDifferPerPurposeAndAreStable() throws {
        let root = SecretBytes(randomCount: 32)
        let keys = try Subkey.allCases.map { try $0.derive(from: root) }
        for i in keys.indices { for j in keys.indices where i != j { #expect(keys[i] != keys[j]) } }
        #expect(try Subkey.keyWrapping.derive(from: root) == keys[0])
    }

    @Test func constantTimeEqualCompares() {
        #expect(constantTimeEqual([1, 2, 3], [1, 2, 3]))
        #expect(!constantTimeEqual([1, 2, 3], [1, 2, 4]))
        #expect(!constantTimeEqual([1, 2, 3], [1, 2]))
    }
}

@Suite struct LockedSecretTests {
    /// Kilobytes of this process's locked memory (VmLck in /proc/self/status).
    func lockedKiB() throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmLck:") })
        return try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
    }

    @Test func aLockedSecretIsLockedInRAMUntilReleasedAndWipesOnRequest() throws {
        // Ordinary secrets come from chunks locked once and kept (`SecretMemory`): have them
        // all cut first, so that only this secret's page moves VmLck here.
        let warm = [32, 64, 128, 256, 512, 1024, 2048, 4096].map { SecretBytes(zeroedCount: $0) }
        defer { withExtendedLifetime(warm) {} }
        let before = try lockedKiB()
        do {
            let held = SecretBytes(lockedCount: 32)
            // Root (the test machine) or a normal RLIMIT_MEMLOCK allows one page.
            #expect(held.isLocked, "mlock of one page failed (RLIMIT_MEMLOCK \(before) KiB already locked?)")
            #expect(try lockedKiB() >= before + 4, "the page is counted as locked")
            #expect(held.count == 32)
            held.withUnsafeMutableBytes { for i in $0.indices { $0[i] = 0xA5 } }
            held.wipe()
            #expect(held.withUnsafeBytes { $0.allSatisfy { $0 == 0 } }, "wipe zeroes the bytes")
        }
        #expect(try lockedKiB() == before, "released: the page is unlocked again")
    }

    /// Every secret, of any size, is on locked memory (as root, or within RLIMIT_MEMLOCK), and
    /// a slot comes back zeroed for the next secret, whatever the last one left in it.
    @Test func everySecretIsLockedAndASlotIsReusedZeroed() throws {
        for size in [0, 1, 16, 32, 33, 100, 4096, 4097, 70_000] {
            let secret = SecretBytes(zeroedCount: size)
            #expect(secret.isLocked && secret.count == size, "\(size) bytes")
            #expect(secret.withUnsafeBytes { $0.allSatisfy { $0 == 0 } })
        }
        #expect(try lockedKiB() >= 64, "at least one locked chunk")
        for _ in 0..<200 {
            let used = SecretBytes(zeroedCount: 48)
            used.withUnsafeMutableBytes { for i in $0.indices { $0[i] = 0x5A } }
        }
        let next = SecretBytes(zeroedCount: 64)
        #expect(next.withUnsafeBytes { $0.allSatisfy { $0 == 0 } }, "a reused slot is zeroed")
        #expect(SecretMemory.isLocking)
    }
}
