import Foundation
import RxCrypto
import RxModel
import RxStore

/// Registering and removing client apps (the owner's side).
extension Vault {
    /// Registers a client by its age X25519 recipient. Names are unique, compared without case.
    public func addClient(name: String, recipient: AgeRecipient) throws(VaultError) -> ClientSummary {
        try Self.checkClientName(name)
        let id = ClientID.random()
        let added = clock.timestamp()
        return try perform { write in
            let stamp = try self.stamp(write)
            let existing = try clientSummaries()
            if existing.contains(where: { $0.name.lowercased() == name.lowercased() }) {
                throw VaultError.duplicateClient("a client named '\(name)' already exists")
            }
            if let other = existing.first(where: { $0.recipient == recipient }) {
                throw VaultError.duplicateClient("that recipient is already registered as client '\(other.name)'")
            }
            try store.insert(
                try clientRow(
                    id: id, recipient: recipient, info: ClientInfo(schema: 1, name: name, added: added, by: stamp?.text)
                ))
            try audit(
                AuditEvent(
                    time: added, actor: AuditEvent.ownerActor, action: .clientAdded, client: id.hex, detail: name))
            return ClientSummary(id: id, name: name, recipient: recipient, added: added, stamp: stamp)
        }
    }

    /// Every registered client, oldest first; each row's MAC is verified.
    public func clients() throws(VaultError) -> [ClientSummary] {
        try reading { read throws -> [ClientSummary] in
            _ = try verifiedState(in: read) // the client rows are the owner's last (format 2)
            return try clientSummaries()
        }
    }

    func clientSummaries() throws -> [ClientSummary] {
        try store.clients().map { try openClient($0) }
    }

    /// Finds a client by name (any case) or id prefix.
    public func resolveClient(_ reference: String) throws(VaultError) -> ClientSummary {
        let all = try clients()
        if let byName = all.first(where: { $0.name.lowercased() == reference.lowercased() }) { return byName }
        let lowered = reference.lowercased()
        let matches =
            lowered.count >= RecordID.minimumPrefixLength && RecordID.isHex(lowered)
            ? all.filter { $0.id.hex.hasPrefix(lowered) } : []
        guard let first = matches.first else { throw .clientNotFound(reference) }
        guard matches.count == 1 else { throw .ambiguousID(prefix: reference, matches: matches.count) }
        return first
    }

    /// Revokes every grant of the client (re-keying what it could read), then deletes it.
    public func removeClient(_ client: ClientSummary) throws(VaultError) {
        try perform { write in
            let grants = try storedGrants(clientID: client.id, prescriptionID: nil)
            for grant in grants { try touch(grant.prescriptionID.hex, in: write) }
            for grant in grants { try store.deleteGrant(grant.row.id) }
            for prescription in Set(grants.map(\.prescriptionID)) {
                // The reason is sealed to the remaining grantees: no client names in it.
                try rekey(prescriptionID: prescription, reason: "re-keyed: a client was removed", in: write)
            }
            try store.deleteClient(client.id)
            try audit(
                AuditEvent(
                    time: clock.timestamp(), actor: AuditEvent.ownerActor, action: .clientRemoved,
                    client: client.id.hex,
                    prescriptions: grants.map(\.prescriptionID.hex), detail: client.name))
        }
        purge()
    }

    // MARK: - Rows

    /// Verifies and opens a client row. Format 1 and 2 keep the public key in the row; format 3
    /// keeps it in the sealed info, and the row's lookup tag must be the one it gives.
    func openClient(_ row: ClientRecord) throws -> ClientSummary {
        let id = row.id
        guard MAC.verify(row.mac, clientRowMessage(id: id, lookup: row.lookup, info: row.info), key: grantMACKey) else {
            throw VaultError.integrity("client \(id.short) is forged or altered (its MAC does not verify)")
        }
        let info: ClientInfo = try openOwnerInfo(
            row.info, purpose: .clientInfo, fields: [.text(id.hex), .bytes(row.lookup)],
            place: "client \(id.short)")
        guard header.formatVersion >= 3 else {
            return ClientSummary(
                id: id, name: info.name, recipient: AgeRecipient(publicKey: row.lookup), added: info.added)
        }
        guard let hex = info.publicKey, let publicKey = Hex.decode(hex), publicKey.count == 32,
            try clientLookup(publicKey) == row.lookup
        else {
            throw VaultError.integrity(
                "client \(id.short)'s lookup tag is not its key's (altered, or moved from another row)")
        }
        guard let by = info.by else {
            return ClientSummary(
                id: id, name: info.name, recipient: AgeRecipient(publicKey: publicKey), added: info.added)
        }
        guard let stamp = WriteStamp(text: by) else {
            throw VaultError.integrity("client \(id.short) names no write that registered it")
        }
        return ClientSummary(
            id: id, name: info.name, recipient: AgeRecipient(publicKey: publicKey), added: info.added, stamp: stamp)
    }

    /// A client row in the current format: found by its lookup tag, its public key sealed in its info.
    func clientRow(id: ClientID, recipient: AgeRecipient, info: ClientInfo) throws -> ClientRecord {
        var info = info
        info.publicKey = Hex.encode(recipient.publicKey)
        let lookup = try clientLookup(recipient.publicKey)
        let sealed = try sealOwnerInfo(info, purpose: .clientInfo, fields: [.text(id.hex), .bytes(lookup)])
        return ClientRecord(
            id: id, lookup: lookup, info: sealed,
            mac: try MAC.authenticate(clientRowMessage(id: id, lookup: lookup, info: sealed), key: grantMACKey))
    }

    /// The lookup tag of a client's row (format 3), as the owner computes it.
    func clientLookup(_ publicKey: [UInt8]) throws -> [UInt8] {
        try ClientLookup.tag(
            vaultID: header.vaultID, clientPublicKey: publicKey, auditPublicKey: header.auditPublicKey,
            secretKey: auditSecretKey, peerPublicKey: publicKey)
    }

    /// Format 1 and 2: `lookup` is the public key; format 3: the lookup tag. Same message shape.
    func clientRowMessage(id: ClientID, lookup: [UInt8], info: [UInt8]) -> [UInt8] {
        AssociatedData.build(.clientRow, [.bytes(header.vaultID), .text(id.hex), .bytes(lookup), .bytes(info)])
    }

    static func checkClientName(_ name: String) throws(VaultError) {
        let trimmed = name.trimmingCharacters(in: .whitespaces)
        // The name is not echoed: it may hold the very characters refused here.
        if let problem = TextField.clientName.problem(with: name) { throw .invalidInput("client name: \(problem)") }
        guard !trimmed.isEmpty, trimmed == name else {
            throw .invalidInput("client name: 1 to 100 characters, no leading or trailing spaces")
        }
        if name.count >= RecordID.minimumPrefixLength && RecordID.isHex(name.lowercased()) {
            throw .invalidInput("client name '\(name)' looks like an id; choose a name with other letters")
        }
    }

    // MARK: - Owner-only info

    func sealOwnerInfo<T: Encodable>(_ value: T, purpose: AssociatedData.Purpose, fields: [AssociatedData.Field]) throws
        -> [UInt8]
    {
        try sealOwnerInfo(plaintext: Array(try JSONEncoderSorted.encode(value)), purpose: purpose, fields: fields)
    }

    /// As above, for a value that writes its own JSON (one sealed by the thousand).
    func sealOwnerInfo(plaintext: [UInt8], purpose: AssociatedData.Purpose, fields: [AssociatedData.Field]) throws
        -> [UInt8]
    {
        try AEAD.seal(
            plaintext, key: ownerInfoKey,
            associatedData: AssociatedData.build(purpose, [.bytes(header.vaultID)] + fields))
    }

    func openOwnerInfo<T: Decodable>(
        _ sealed: [UInt8], purpose: AssociatedData.Purpose, fields: [AssociatedData.Field], place: String
    ) throws -> T {
        try openOwnerInfo(sealed, purpose: purpose, fields: fields, place: place) {
            try JSONDecoder().decode(T.self, from: Data($0))
        }
    }

    /// As above, with the plaintext read by `read` (a faster reader than JSONDecoder, for
    /// records opened by the thousand).
    func openOwnerInfo<T>(
        _ sealed: [UInt8], purpose: AssociatedData.Purpose, fields: [AssociatedData.Field], place: String,
        read: (UnsafeRawBufferPointer) throws -> T
    ) throws -> T {
        do {
            let plain = try AEAD.open(
                sealed, key: ownerInfoKey,
                associatedData: AssociatedData.build(purpose, [.bytes(header.vaultID)] + fields))
            return try plain.withUnsafeBytes { try read($0) }
        } catch {
            throw VaultError.integrity("\(place) failed authentication (altered, moved or damaged)")
        }
    }

    /// Appends an owner event to the audit log (inside the current write transaction).
    func audit(_ event: AuditEvent) throws {
        try AuditLog.append(event, store: store, auditPublicKey: header.auditPublicKey, macKey: auditMACKey)
    }
}
