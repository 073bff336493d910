import RxCrypto

/// How client and grant rows are found in format 3 without the file saying whose they are
/// (DESIGN.md, "What the file reveals"; docs/format.md, "Format 3").
///
/// A client row is found by its lookup tag: a hash of the X25519 secret shared by the client's
/// key and the vault's audit key, with the vault id and both public keys. The client computes it
/// with its secret key, the owner with the audit secret; nobody else can, so the tag says nothing
/// about which public key (which app, which insurer) the row is for.
enum ClientLookup {
    static func tag(
        vaultID: [UInt8], clientPublicKey: [UInt8], auditPublicKey: [UInt8],
        secretKey: SecretBytes, peerPublicKey: [UInt8]
    ) throws -> [UInt8] {
        let context = AssociatedData.build(
            .clientLookup, [.bytes(vaultID), .bytes(clientPublicKey), .bytes(auditPublicKey)])
        return try X25519.sharedKey(secretKey: secretKey, publicKey: peerPublicKey, context: context).withUnsafeBytes {
            Array($0)
        }
    }
}

/// A grant row's reference: the first 16 bytes of a MAC, under the owner's grant-reference
/// sub-key, of the vault id, the client id and the prescription id, as 32 hex digits. Only the
/// owner can compute it, so the file no longer links a grant to its prescription; the owner
/// finds the grants of a prescription by computing one reference per client.
enum GrantReference {
    static let byteCount = 16

    static func make(vaultID: [UInt8], clientID: String, prescriptionID: String, key: SecretBytes) throws -> String {
        let mac = try MAC.authenticate(
            AssociatedData.build(.grantReference, [.bytes(vaultID), .text(clientID), .text(prescriptionID)]), key: key)
        return Hex.encode(mac.prefix(byteCount))
    }
}
