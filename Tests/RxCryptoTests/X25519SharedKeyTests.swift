import RxCrypto
import Testing

/// The key a client and the owner both derive to authenticate the client's audit entries.
@Suite struct X25519SharedKeyTests {
    @Test func bothSidesDeriveTheSameKeyAndNobodyElseDoes() throws {
        let (alicePublic, alice) = try X25519.generate()
        let (bobPublic, bob) = try X25519.generate()
        let (_, mallory) = try X25519.generate()
        let context = Array("context".utf8)
        let fromAlice = try X25519.sharedKey(secretKey: alice, publicKey: bobPublic, context: context)
        #expect(fromAlice == (try X25519.sharedKey(secretKey: bob, publicKey: alicePublic, context: context)))
        #expect(fromAlice != (try X25519.sharedKey(secretKey: mallory, publicKey: bobPublic, context: context)))
        #expect(
            fromAlice != (try X25519.sharedKey(secretKey: alice, publicKey: bobPublic, context: Array("other".utf8))))
    }

    /// A low-order public key gives an all-zero shared point that anyone knows: refused.
    @Test func aLowOrderPublicKeyIsRefused() throws {
        let (_, secret) = try X25519.generate()
        #expect(throws: CryptoError.self) {
            _ = try X25519.sharedKey(secretKey: secret, publicKey: [UInt8](repeating: 0, count: 32), context: [])
        }
        #expect(throws: CryptoError.self) {
            _ = try X25519.sharedKey(secretKey: secret, publicKey: [1, 2, 3], context: [])
        }
    }
}
