import Foundation
import RxCrypto
import RxModel
import RxStore

/// What happened, who did it, to what (docs/format.md, "Audit entry").
public struct AuditEvent: Codable, Sendable, Equatable {
    public enum Action: String, Codable, Sendable, CaseIterable {
        case clientAdded = "client-added"
        case clientRemoved = "client-removed"
        case grant
        case revoke
        case grantExpired = "grant-expired"
        case read
        case export
        case backup
        /// Prescriptions added or updated by `import` (the detail names the updated ones).
        case `import`
        /// A client asked for access over the API (`rxvault serve`); the detail is the request's JSON.
        case accessRequested = "access-requested"
        /// The owner approved or denied an access request; the detail is the answer's JSON.
        case accessAnswered = "access-answered"
        /// A key slot was added (`key add`); the detail names the slot, its kind and label.
        case keyAdded = "key-added"
        /// A key slot was removed (`key remove`).
        case keyRemoved = "key-removed"
        /// A slot's passphrase or its key-derivation cost was changed (`passwd`).
        case passphraseChanged = "passphrase-changed"
        /// A vault setting was changed (`config set`); the detail says which, from what to what.
        case settingChanged = "setting-changed"
        /// Another copy of the vault was merged in (`rxvault merge`); the detail says which,
        /// what came in, and the other copy's audit head.
        case merge
    }

    public var time: String
    /// "owner", or the id of the client that acted.
    public var actor: String
    public var action: Action
    /// The client concerned (granted, revoked, reading).
    public var client: String?
    public var prescriptions: [String]
    public var attachments: [String]?
    /// What was done, in a few words ("list", "show", "extract scan.pdf", "until 2027-01-01").
    public var detail: String?
    /// Set on an entry a merge brought in from another copy's log (`rxvault merge`): the hash
    /// (hex) of the entry there, which names it in every copy, so no merge brings it twice.
    public var joined: String? = nil

    public init(
        time: String, actor: String, action: Action, client: String? = nil, prescriptions: [String] = [],
        attachments: [String]? = nil, detail: String? = nil
    ) {
        self.time = time
        self.actor = actor
        self.action = action
        self.client = client
        self.prescriptions = prescriptions
        self.attachments = attachments
        self.detail = detail
    }

    public static let ownerActor = "owner"
}

/// The append-only, encrypted, hash-chained audit log (DESIGN.md, "Audit log").
///
/// Every entry is sealed to the vault's audit X25519 key, so the owner and only the owner can
/// read it, whoever wrote it (clients log their reads without holding any owner key). Each entry's
/// hash covers the previous hash, its sequence number and its sealed bytes; the owner MACs every
/// entry (a client's at the owner's next write, once its authenticator shows the client it names
/// wrote it) and a head record (last sequence and hash), so deleting, editing or reordering an
/// entry the owner has seen is detected by `check`.
enum AuditLog {
    static let zeroHash = [UInt8](repeating: 0, count: 32)

    static func hash(previous: [UInt8], sequence: Int, sealed: [UInt8]) -> [UInt8] {
        // Hashed in two parts: an import's entry is megabytes, not worth copying to hash.
        let h = SHA256()
        h.update(Array("rxvault/v1 audit".utf8) + previous + bigEndian(sequence))
        h.update(sealed)
        return h.finalBytes()
    }

    static func entryMAC(sequence: Int, hash: [UInt8], key: SecretBytes) throws -> [UInt8] {
        try MAC.authenticate(entryMACMessage(sequence: sequence, hash: hash), key: key)
    }

    static func entryMACMessage(sequence: Int, hash: [UInt8]) -> [UInt8] {
        Array("rxvault/v1 audit-entry".utf8) + bigEndian(sequence) + hash
    }

    /// Whether the owner's MAC on `entry` verifies.
    static func hasOwnerMAC(_ entry: AuditEntryRecord, key: SecretBytes) -> Bool {
        entry.mac.map { MAC.verify($0, entryMACMessage(sequence: entry.sequence, hash: entry.hash), key: key) } ?? false
    }

    static func headMAC(sequence: Int, hash: [UInt8], key: SecretBytes) throws -> [UInt8] {
        try MAC.authenticate(headMACMessage(sequence: sequence, hash: hash), key: key)
    }

    static func headMACMessage(sequence: Int, hash: [UInt8]) -> [UInt8] {
        Array("rxvault/v1 audit-head".utf8) + bigEndian(sequence) + hash
    }

    static func bigEndian(_ value: Int) -> [UInt8] {
        (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }

    static func encode(_ event: AuditEvent) throws -> [UInt8] { Array(try JSONEncoderSorted.encode(event)) }

    /// Appends an owner event after the current last entry, MACs it and moves the head to it.
    static func append(_ event: AuditEvent, store: any RecordStore, auditPublicKey: [UInt8], macKey: SecretBytes) throws
    {
        let json = try encode(event)
        try append(store: store, auditPublicKey: auditPublicKey, macKey: macKey) { _, _ in .plain(json: json) }
    }

    /// Appends a read by the client holding `identity`, authenticated to its key and to the
    /// entry's place in the chain. It waits for the owner's countersignature.
    static func appendClientRead(
        _ event: AuditEvent, store: any RecordStore, vaultID: [UInt8], auditPublicKey: [UInt8],
        identity: AgeIdentity
    ) throws {
        let key = try ClientAuditAuthenticator.key(
            vaultID: vaultID, clientPublicKey: identity.recipient.publicKey,
            auditPublicKey: auditPublicKey, secretKey: identity.secretKey,
            peerPublicKey: auditPublicKey)
        try appendClientEntry(event, store: store, vaultID: vaultID, auditPublicKey: auditPublicKey, key: key)
    }

    /// Appends `event` in the client form, authenticated with `key` (the client's key, computed
    /// by the client from its identity or by the owner's server from the audit secret) to the
    /// entry's place in the chain. It waits for the owner's countersignature.
    static func appendClientEntry(
        _ event: AuditEvent, store: any RecordStore, vaultID: [UInt8], auditPublicKey: [UInt8], key: SecretBytes
    ) throws {
        let json = try encode(event)
        try append(store: store, auditPublicKey: auditPublicKey, macKey: nil) { sequence, previous in
            .client(
                authenticator: try ClientAuditAuthenticator.authenticate(
                    json: json, sequence: sequence, previousHash: previous,
                    vaultID: vaultID, key: key), json: json)
        }
    }

    /// Seals what `plaintext` builds for the next place in the chain (its sequence number and the
    /// previous hash, read in the caller's write transaction) and appends it. With `macKey` (the
    /// owner) the entry is MAC'd and the head moved.
    private static func append(
        store: any RecordStore, auditPublicKey: [UInt8], macKey: SecretBytes?,
        plaintext: (_ sequence: Int, _ previousHash: [UInt8]) throws -> AuditPlaintext
    ) throws {
        let last = try store.lastAuditEntry()
        // Cannot overflow: the store reads no sequence number past 2^53 (StoredRange.auditEntry;
        // an edited one is an integrity error there, where Int64.max here used to trap).
        let sequence = (last?.sequence ?? 0) + 1
        let previous = last?.hash ?? zeroHash
        let sealed = try X25519.seal(try plaintext(sequence, previous).bytes, to: auditPublicKey)
        let entryHash = hash(previous: previous, sequence: sequence, sealed: sealed)
        var mac: [UInt8]?
        if let macKey { mac = try entryMAC(sequence: sequence, hash: entryHash, key: macKey) }
        try store.append(AuditEntryRecord(sequence: sequence, entry: sealed, hash: entryHash, mac: mac))
        if let macKey {
            try store.setAuditHead(
                sequence: sequence, hash: entryHash, mac: try headMAC(sequence: sequence, hash: entryHash, key: macKey))
        }
    }

    /// Checks the chain's structure: sequence numbers, hashes, the MACs present and the head.
    /// Returns what is wrong (empty when intact), calling `visit` with each entry and the hash it
    /// chains on as it goes (a review of every entry rides on the same walk: `Vault.reviewAuditLog`).
    /// Entries without a MAC are not judged here: whether one is a client's authenticated read
    /// needs the owner's keys and clients.
    static func verify(
        entries: [AuditEntryRecord], head: (sequence: Int, hash: [UInt8], mac: [UInt8])?, macKey: SecretBytes,
        visit: (_ entry: AuditEntryRecord, _ previousHash: [UInt8]) throws -> Void = { _, _ in }
    ) rethrows -> [AuditFinding] {
        var findings: [AuditFinding] = []
        try AuditChain.forward(entries, macKey: macKey) { entry, previous, found in
            findings += found
            try visit(entry, previous)
            return true
        }
        if let finding = AuditChain.headFinding(head, entries: entries, macKey: macKey) { findings.append(finding) }
        return findings
    }

    /// The owner countersigns the entries appended since its last write that `isAuthentic`
    /// accepts (a client's read, authenticated by the client it names) and moves the head to the
    /// end. An entry it refuses stays unsigned, for `check` and `log` to report, and does not stop
    /// the genuine entries after it from being countersigned. A break in the chain stops it: the
    /// entries from there on are left for `check` to report, never blessed.
    /// Returns how many entries it countersigned, and how many without a MAC it refused.
    @discardableResult
    static func countersign(
        store: any RecordStore, macKey: SecretBytes,
        isAuthentic: (AuditEntryRecord) throws -> Bool
    ) throws -> (countersigned: Int, refused: Int) {
        let head = try store.auditHead()
        let start = head.map { AuditChain.Link($0.sequence, $0.hash) } ?? AuditChain.origin
        var last: AuditEntryRecord?
        var counts = (countersigned: 0, refused: 0)
        try AuditChain.forward(try store.auditEntries(after: start.sequence), after: start) { entry, _, findings in
            // An entry after the head with a MAC was not appended by the owner's code (which moves
            // the head with it): never covered (`Vault.maintain` refuses the write first).
            guard findings.isEmpty, entry.mac == nil else { return false }
            if try isAuthentic(entry) {
                try store.setAuditMAC(
                    sequence: entry.sequence, mac: try entryMAC(sequence: entry.sequence, hash: entry.hash, key: macKey)
                )
                counts.countersigned += 1
            } else {
                counts.refused += 1
            }
            last = entry
            return true
        }
        if let last {
            try store.setAuditHead(
                sequence: last.sequence, hash: last.hash,
                mac: try headMAC(sequence: last.sequence, hash: last.hash, key: macKey))
        }
        return counts
    }
}

extension AuditEvent {
    /// What the `Codable` decoding reads, read with `JSONTree`: `grants` and `log` open every
    /// entry, and an import's entry names every prescription it added (100,000 ids through
    /// JSONDecoder were most of `grants` on a large vault). Tests compare the two.
    init(json bytes: some Collection<UInt8>) throws {
        let c = try JSONValueReader(try JSONTree(parsing: bytes)).object()
        func strings(_ value: JSONValueReader) throws(DecodingError) -> [String] {
            try value.array().map { v throws(DecodingError) in try v.string() }
        }
        self.init(
            time: try c.required("time").string(), actor: try c.required("actor").string(),
            action: try c.required("action").raw(Action.self), client: try c.optional("client")?.string(),
            prescriptions: try strings(try c.required("prescriptions")),
            attachments: try c.optional("attachments").map { v throws(DecodingError) in try strings(v) },
            detail: try c.optional("detail")?.string())
        joined = try c.optional("joined")?.string()
    }
}
