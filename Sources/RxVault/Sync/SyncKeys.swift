import RxCrypto

/// The keys `rxvault sync` uses for a folder remote, derived from the vault's root key
/// (`Subkey.syncSealing`, `Subkey.syncChunkNames`): every device that opens the vault has them,
/// the remote never does. A head or chunk sealed for one vault opens for no other, and a chunk
/// is bound to its name, a head to its device.
struct SyncKeys {
    let sealing: SecretBytes
    let naming: SecretBytes
    let vaultID: [UInt8]

    init(rootKey: SecretBytes, vaultID: [UInt8]) throws(VaultError) {
        do {
            sealing = try Subkey.syncSealing.derive(from: rootKey)
            naming = try Subkey.syncChunkNames.derive(from: rootKey)
        } catch {
            throw .internalError("cannot derive the sync keys: \(error)")
        }
        self.vaultID = vaultID
    }

    /// A chunk's name: a keyed hash of what it holds (HMAC-SHA-512-256), so equal chunks have one
    /// name and the name tells nothing to whoever lacks the key.
    func chunkID(of plaintext: [UInt8]) throws(VaultError) -> ChunkID {
        do { return ChunkID(bytes: try MAC.authenticate(plaintext, key: naming)) } catch {
            throw .internalError("cannot name a chunk: \(error)")
        }
    }

    /// The chunk sealed for the remote. The nonce is the first 24 bytes of its name (a keyed
    /// hash of the plaintext under another key): the same chunk sealed on two devices is the
    /// same file, and a nonce repeats only with its plaintext.
    func seal(chunk plaintext: [UInt8], id: ChunkID) throws(VaultError) -> [UInt8] {
        do {
            return try AEAD.seal(
                plaintext, key: sealing, associatedData: chunkAssociatedData(id),
                nonce: Array(id.bytes.prefix(AEAD.nonceLength)))
        } catch {
            throw .internalError("cannot seal a chunk: \(error)")
        }
    }

    /// The chunk's plaintext, or nil when the box is not this vault's chunk of that name.
    func open(chunk box: [UInt8], id: ChunkID) -> [UInt8]? {
        guard let plain = try? AEAD.open(box, key: sealing, associatedData: chunkAssociatedData(id)) else { return nil }
        let bytes = plain.withUnsafeBytes { Array($0) }
        guard (try? chunkID(of: bytes)) == id else { return nil }
        return bytes
    }

    func seal(head: [UInt8], replica: ReplicaID) throws(VaultError) -> [UInt8] {
        do { return try AEAD.seal(head, key: sealing, associatedData: headAssociatedData(replica)) } catch {
            throw .internalError("cannot seal the head: \(error)")
        }
    }

    func open(head box: [UInt8], replica: ReplicaID) -> [UInt8]? {
        guard let plain = try? AEAD.open(box, key: sealing, associatedData: headAssociatedData(replica)) else {
            return nil
        }
        return plain.withUnsafeBytes { Array($0) }
    }

    private func chunkAssociatedData(_ id: ChunkID) -> [UInt8] {
        Array("rxvault sync chunk 1".utf8) + vaultID + id.bytes
    }

    private func headAssociatedData(_ replica: ReplicaID) -> [UInt8] {
        Array("rxvault sync head 1".utf8) + vaultID + replica.bytes
    }
}

/// The name of one chunk of a vault snapshot in a folder remote (`SyncKeys.chunkID`).
struct ChunkID: Hashable, Sendable {
    static let byteCount = 32
    let bytes: [UInt8]

    init(bytes: [UInt8]) { self.bytes = bytes }

    init?(hex: String) {
        guard hex.count == Self.byteCount * 2, let bytes = Hex.decode(hex) else { return nil }
        self.bytes = bytes
    }

    var hex: String { Hex.encode(bytes) }
}
