import Foundation
import RxCrypto
import RxModel
import RxStore

/// What a client may read now, as the owner's server sees it (`rxvault serve`): its live grants,
/// each verified against the owner's manifest.
public struct ClientAccess: Sendable {
    public let client: ClientSummary
    /// The client's grants that work today, by prescription.
    public let grants: [PrescriptionID: GrantSummary]

    public func allows(_ prescription: PrescriptionID) -> Bool { grants[prescription] != nil }
    public func allowsAttachments(of prescription: PrescriptionID) -> Bool {
        grants[prescription]?.includesAttachments ?? false
    }
}

/// Names one state of the vault: the state root's write counter and MAC. Every owner write
/// (a grant, a revoke, a client removed, an edit, an expired grant swept, the server's own audit
/// entries) writes a new root, so two equal stamps mean nothing the owner wrote has changed in
/// between. A server may keep what it verified under a stamp until the stamp changes.
public struct StateStamp: Sendable, Equatable {
    public let counter: Int
    let mac: [UInt8]
}

/// Reads the stamp of a vault in a database on a connection of its own, with no thread waiting
/// on the server meanwhile (`StateStampSource`): `rxvault serve` asks it once for every request
/// that arrived while the previous read was out, instead of once per request on the vault's own
/// connection, where each request waited for the round trips of those before it.
public struct StateStampReader: Sendable {
    let source: any StateStampSource

    /// The stamp as committed when the read began (nil: no state root).
    public func stamp() async throws(VaultError) -> StateStamp? {
        do { return try await source.stamp().map { StateStamp(counter: $0.counter, mac: $0.mac) } } catch {
            throw VaultError.from(error)
        }
    }
}

/// The owner's side of serving client apps over the API: the server holds the owner's keys, so
/// it checks the owner's grants (not a copy's) on every request, and logs each read it serves
/// in the owner's audit log, vouched for by the owner's MAC.
extension Vault {
    /// The owner's clock's today (what expiry is judged by).
    public var today: CalendarDate { clock.today() }

    /// The current state's stamp: one row read, nothing decrypted (equality is all it is for:
    /// whatever is kept under a stamp was verified when it was read). nil for a format-1 vault,
    /// which has no state root: nothing may be kept then.
    public func stateStamp() throws(VaultError) -> StateStamp? {
        guard header.formatVersion >= 2 else { return nil }
        do { return try store.vaultStateStamp().map { StateStamp(counter: $0.counter, mac: $0.mac) } } catch {
            throw VaultError.wrap(error)
        }
    }

    /// A reader of `stateStamp` on a connection of its own, for a vault in a database; nil for
    /// a file, whose stamp is one read of a local page (cheaper than any hand-over to another
    /// connection), and for a format-1 vault, which has none.
    public func stateStampReader(busyTimeoutMilliseconds: Int32) throws(VaultError) -> StateStampReader? {
        guard VaultLocation.isDatabase(path), header.formatVersion >= 2 else { return nil }
        do {
            return StateStampReader(
                source: try VaultLocation.engine(for: path).stampSource(
                    path, busyTimeoutMilliseconds: busyTimeoutMilliseconds))
        } catch {
            throw VaultError.wrap(error)
        }
    }

    /// The registered client with this X25519 public key; nil when there is none.
    public func client(withPublicKey publicKey: [UInt8]) throws(VaultError) -> ClientSummary? {
        try reading { read throws -> ClientSummary? in
            _ = try verifiedState(in: read)
            let lookup = header.formatVersion >= 3 ? try clientLookup(publicKey) : publicKey
            guard let row = try store.client(withLookup: lookup) else { return nil }
            let client = try openClient(row)
            return client.recipient.publicKey == publicKey ? client : nil
        }
    }

    /// The registered client with this id; nil when it was removed.
    public func client(id: ClientID) throws(VaultError) -> ClientSummary? {
        try reading { read throws -> ClientSummary? in
            _ = try verifiedState(in: read)
            return try store.clients().first { $0.id == id }.map { try openClient($0) }
        }
    }

    /// The client's grants that work today. Costs its own grant rows and their prescriptions'
    /// manifest entries, whatever the vault holds.
    public func access(for client: ClientSummary) throws(VaultError) -> ClientAccess {
        try reading { read in
            let today = clock.today()
            var grants: [PrescriptionID: GrantSummary] = [:]
            for stored in try storedGrants(clientID: client.id, prescriptionID: nil) {
                try verifyCurrent(stored.prescriptionID.hex, in: read)
                let grant = try openGrant(stored, client: client)
                if grant.isActive(on: today) { grants[grant.prescriptionID] = grant }
            }
            return ClientAccess(client: client, grants: grants)
        }
    }

    /// What a write of served reads changed: the state it started from and the one it left, and
    /// whether it changed nothing but the audit log (no expired grant swept on the way, no
    /// format upgrade). When `from` is the state a server's cache was read in and `onlyAudit`
    /// holds, the cache is as true in state `to`.
    public struct ServedReadsWrite: Sendable {
        public let from: StateStamp?
        public let to: StateStamp?
        public let onlyAudit: Bool
    }

    /// Appends the reads a server answered without an owner write: `serve` on a database, whose
    /// role may do no more than read the vault and append to its log (docs/deploy.md). Each read
    /// is a client-form entry, authenticated for its client with the key the audit secret gives
    /// (`clientKeys`: the public key each client was served under, so that a client removed since
    /// is still named by its own key), all in one store write: the engine's write lock keeps two
    /// servers from forking the chain. The state root does not move; the owner's next write
    /// countersigns them (`maintain`).
    @discardableResult
    public func appendServedReads(_ events: [AuditEvent], clientKeys: [ClientID: [UInt8]]) throws(VaultError)
        -> ServedReadsWrite
    {
        do {
            try store.write {
                var keys: [ClientID: SecretBytes] = [:]
                for event in events {
                    guard let id = event.client.flatMap(ClientID.init(hex:)), let publicKey = clientKeys[id] else {
                        throw VaultError.internalError("a served read names no client the server knows")
                    }
                    let key = try keys[id] ?? clientEntryKey(publicKey: publicKey)
                    keys[id] = key
                    try AuditLog.appendClientEntry(
                        event, store: store, vaultID: header.vaultID, auditPublicKey: header.auditPublicKey, key: key)
                }
            }
        } catch {
            throw VaultError.wrap(error)
        }
        // Nothing the server's cache was read from has changed: the stamp is the same.
        return ServedReadsWrite(from: nil, to: nil, onlyAudit: false)
    }

    /// The key that seals the API's challenge ids and bearer tokens: the same for every server of
    /// this vault (it comes from the root key), so instances behind one balancer accept what any
    /// of them issued. The caller keeps it only while it serves.
    public func apiSessionKey() throws(VaultError) -> SecretBytes {
        do { return try Subkey.apiSessions.derive(from: rootKey) } catch { throw .internalError(error.description) }
    }

    /// The key a client's entries are authenticated with, as the owner computes it (from the
    /// audit secret and the client's public key; the client computes the same from its identity).
    func clientEntryKey(publicKey: [UInt8]) throws -> SecretBytes {
        try ClientAuditAuthenticator.key(
            vaultID: header.vaultID, clientPublicKey: publicKey, auditPublicKey: header.auditPublicKey,
            secretKey: auditSecretKey, peerPublicKey: publicKey)
    }

    /// Appends the reads a server answered, one owner-MAC'd entry each, in one write; nil when
    /// the file was renamed over while the write waited for the lock (a sync tool, a restore):
    /// then nothing is written to the old file, whose write counter would otherwise pass the new
    /// file's (and the rollback anchor with it), so that the new one would be refused as an older
    /// copy. The caller writes the reads to the new file.
    @discardableResult
    public func logServedReads(_ events: [AuditEvent]) throws(VaultError) -> ServedReadsWrite? {
        guard !events.isEmpty else { return ServedReadsWrite(from: nil, to: nil, onlyAudit: false) }
        var from: StateStamp?
        var onlyAudit = false
        struct Overtaken: Error {}
        do {
            try ownerWrite { write in
                // The root is rewritten only when the write finishes: here it is still the one the
                // write started from. The housekeeping before this (countersigning client entries,
                // sweeping expired grants) has run: a sweep re-keys prescriptions, so it touched them.
                from = try store.vaultState().map { StateStamp(counter: $0.writeCounter, mac: $0.mac) }
                onlyAudit =
                    write.touched.isEmpty && write.pendingIndex.isEmpty
                    && write.headerBefore.formatVersion == header.formatVersion
                for event in events { try audit(event) }
                if fileWasReplaced { throw Overtaken() }
            }
        } catch is Overtaken {
            return nil
        } catch {
            throw VaultError.wrap(error)
        }
        return ServedReadsWrite(from: from, to: lastWrite?.stamp, onlyAudit: onlyAudit)
    }
}

/// A patient's measurements a client may read through `serve` (format 6), with the granted
/// prescriptions whose grants carry them (the audit log names those as read).
public struct GrantedMeasurements: Sendable {
    /// The patient as the grants name it, with its measurements (oldest first).
    public let patient: PatientSummary
    public let via: [PrescriptionID]

    public var records: [MeasurementRecord] {
        patient.measurements.map { MeasurementRecord(patient: patient, measurement: $0) }
    }
}

extension Vault {
    /// The measurements `access` lets its client read: for each live grant that includes them,
    /// its prescription's patient's, as the patient record holds them now (what the grant's
    /// sealed box carries, re-sealed at every change). One entry per patient, by name.
    public func grantedMeasurements(_ access: ClientAccess) throws(VaultError) -> [GrantedMeasurements] {
        let carriers = access.grants.values.filter(\.includesMeasurements).map(\.prescriptionID).sorted()
        guard !carriers.isEmpty else { return [] }
        var via: [String: [PrescriptionID]] = [:]
        var patients: [String: PatientSummary] = [:]
        for id in carriers {
            let record = try prescription(id)
            guard let patientID = record.prescription.patient.id else { continue }
            if patients[patientID] == nil {
                guard let summary = try reading({ read in try patientSummary(patientID, in: read) }) else { continue }
                // Only what the grant carries: the patient as a prescription names it, and its measurements.
                patients[patientID] = PatientSummary(
                    id: summary.id, name: summary.name, birthDate: summary.birthDate, merged: [],
                    family: summary.family, given: summary.given, measurements: summary.measurements)
            }
            via[patientID, default: []].append(id)
        }
        return PatientDirectory.ordered(Array(patients.values)).map {
            GrantedMeasurements(patient: $0, via: via[$0.id.hex] ?? [])
        }
    }
}
