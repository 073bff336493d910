import Foundation
import RxCrypto

/// The plaintext of an audit entry, in one of its two forms (docs/format.md, "Audit log").
///
/// Anyone can seal bytes to the vault's audit key, so the seal says nothing about who wrote an
/// entry. The owner's entries are vouched for by the owner's MAC. A client's entry carries an
/// authenticator made with a key only that client and the owner can compute: the X25519 shared
/// secret between the client's identity and the vault's audit key. So an entry naming a client
/// proves, to the owner, that the holder of that client's identity wrote it, at that place in
/// the chain: someone with write access and another identity (or none) cannot forge it.
enum AuditPlaintext {
    /// The event JSON alone: owner entries (their MAC is on the row), and client entries as
    /// rxvault wrote them before clients authenticated theirs.
    case plain(json: [UInt8])
    /// A client's read: the authenticator, then the exact event JSON bytes it covers.
    case client(authenticator: [UInt8], json: [UInt8])

    /// First byte of the client form. The plain form is JSON and starts with `{`.
    static let clientTag: UInt8 = 0x01

    var json: [UInt8] {
        switch self {
        case .plain(let json), .client(_, let json): return json
        }
    }

    var bytes: [UInt8] {
        switch self {
        case .plain(let json): return json
        case .client(let authenticator, let json): return [Self.clientTag] + authenticator + json
        }
    }

    init(_ bytes: [UInt8]) {
        if bytes.first == Self.clientTag, bytes.count > 1 + MAC.length {
            self = .client(authenticator: Array(bytes[1...MAC.length]), json: Array(bytes[(1 + MAC.length)...]))
        } else {
            self = .plain(json: bytes)
        }
    }
}

/// How a client's entry is authenticated (docs/format.md, "Audit log").
enum ClientAuditAuthenticator {
    /// The key only `clientPublicKey`'s holder and the audit key's holder can compute. The client
    /// calls it with its secret and the audit public key, the owner with the audit secret and
    /// the client's public key; both hash in the vault id and both public keys, so the key
    /// belongs to this client in this vault and to nothing else.
    static func key(
        vaultID: [UInt8], clientPublicKey: [UInt8], auditPublicKey: [UInt8],
        secretKey: SecretBytes, peerPublicKey: [UInt8]
    ) throws -> SecretBytes {
        let context = AssociatedData.build(
            .auditClientKey, [.bytes(vaultID), .bytes(clientPublicKey), .bytes(auditPublicKey)])
        return try X25519.sharedKey(secretKey: secretKey, publicKey: peerPublicKey, context: context)
    }

    /// What the authenticator covers: the vault, the entry's place in the chain (its sequence
    /// number and the previous entry's hash, both read in the same write transaction that
    /// appends it, so nothing can race them) and the exact event JSON. A genuine entry copied
    /// to another place, or its event edited, no longer verifies.
    static func message(vaultID: [UInt8], sequence: Int, previousHash: [UInt8], json: [UInt8]) -> [UInt8] {
        AssociatedData.build(.auditClientEntry, [.bytes(vaultID), .int(sequence), .bytes(previousHash), .bytes(json)])
    }

    static func authenticate(json: [UInt8], sequence: Int, previousHash: [UInt8], vaultID: [UInt8], key: SecretBytes)
        throws -> [UInt8]
    {
        try MAC.authenticate(
            message(vaultID: vaultID, sequence: sequence, previousHash: previousHash, json: json), key: key)
    }

    static func verify(
        _ authenticator: [UInt8], json: [UInt8], sequence: Int, previousHash: [UInt8], vaultID: [UInt8],
        key: SecretBytes
    ) -> Bool {
        MAC.verify(
            authenticator, message(vaultID: vaultID, sequence: sequence, previousHash: previousHash, json: json),
            key: key)
    }
}
