import CSodium

/// Independent sub-keys from the vault root key, one per purpose (libsodium `crypto_kdf`,
/// BLAKE2b keyed with the root key, context "rxvault1").
///
/// Separate keys mean a weakness in one use (say, the MAC of an audit entry) can never be
/// turned against another (wrapping data keys). Ids are part of the file format: never reuse one.
public enum Subkey: UInt64, CaseIterable, Sendable {
    /// Wraps every data key (DEK) of a record.
    case keyWrapping = 1
    /// MACs grant rows (clients and grants).
    case grantMAC = 2
    /// MACs audit-log entries.
    case auditMAC = 3
    /// Encrypts the search index.
    case index = 4
    /// Seals owner-only records: client names, grant dates and scope.
    case ownerInfo = 5
    /// The X25519 secret key audit entries are sealed to (clients seal to its public key).
    case auditSealing = 6
    /// MACs every prescription version and attachment row: clients hold data keys, so only a
    /// key they do not hold proves the owner wrote a record.
    case recordMAC = 7
    /// MACs the owner's exports (their `vault` binding): only a file this vault's owner wrote
    /// may update prescriptions on import.
    case exportMAC = 8
    /// MACs the state root (format 2): the write counter and the commitment to every current
    /// row, so rows deleted, put back from an older copy or mixed between copies are seen.
    case stateMAC = 9
    /// Keys the grant references (format 3): a grant row is found by a keyed hash of its client
    /// and prescription, so the file does not say which client may read which prescription.
    case grantReference = 10
    /// Seals the manifest buckets (format 3): they list each prescription's grants and clients.
    case manifestSealing = 11
    /// Seals the API's challenge ids and bearer tokens (`rxvault serve`): every server of one
    /// vault derives the same key, so a client may ask one instance for a challenge, answer it at
    /// another and read through a third. Never stored.
    case apiSessions = 12
    /// Seals what `rxvault sync` puts in a folder remote (its heads and chunks): the remote holds
    /// only ciphertext, and only this vault's keys open it.
    case syncSealing = 13
    /// Names the chunks of a folder remote (a keyed hash of each chunk's plaintext): equal chunks
    /// are stored once, and a name says nothing about what it holds to whoever lacks the key.
    case syncChunkNames = 14

    /// Derives this sub-key from `root` (32 bytes).
    public func derive(from root: SecretBytes) throws(CryptoError) -> SecretBytes {
        try KeyDerivation.derive(from: root, id: rawValue, context: "rxvault1")
    }
}

/// `crypto_kdf_derive_from_key`: independent 32-byte keys from one master key, by id and an
/// 8-character context naming the family (so the same id in two families gives two keys).
public enum KeyDerivation {
    public static func derive(from master: SecretBytes, id: UInt64, context: String) throws(CryptoError) -> SecretBytes
    {
        try Sodium.ready()
        guard master.count == Int(crypto_kdf_KEYBYTES) else { throw .malformed("master key length") }
        let contextBytes = Array(context.utf8)
        guard contextBytes.count == Int(crypto_kdf_CONTEXTBYTES) else { throw .malformed("KDF context") }
        let cContext = contextBytes.map { CChar(bitPattern: $0) }
        let key = SecretBytes(zeroedCount: 32)
        key.withUnsafeMutableBytes { k in
            master.withUnsafeBytes { m in
                _ = crypto_kdf_derive_from_key(
                    k.baseAddress!.assumingMemoryBound(to: UInt8.self), 32, id,
                    cContext, m.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        return key
    }
}
