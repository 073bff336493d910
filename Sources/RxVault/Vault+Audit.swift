import Foundation
import RxCrypto
import RxModel
import RxStore

/// Reading and checking the audit log (the owner's side).
extension Vault {
    /// One entry as the owner reads it.
    public struct AuditRecord: Sendable {
        public let sequence: Int
        public let event: AuditEvent
        /// False while a client's entry awaits the owner's countersignature.
        public let countersigned: Bool
    }

    /// The log, oldest first, filtered. Fails with an integrity error if the chain is broken.
    public func log(client: ClientSummary? = nil, prescription: PrescriptionID? = nil, since: CalendarDate? = nil) throws(VaultError) -> [AuditRecord] {
        try read {
            _ = try verifiedState()   // the head is the owner's last (format 2)
            let (findings, _) = try AuditLog.verify(store: store, macKey: auditMACKey)
            if let first = findings.first { throw VaultError.integrity(first) }
            return try store.auditEntries().map { row in
                AuditRecord(sequence: row.sequence, event: try openAuditEntry(row), countersigned: row.mac != nil)
            }.filter { record in
                let e = record.event
                if let client, e.client != client.id.hex && e.actor != client.id.hex { return false }
                if let prescription, !e.prescriptions.contains(prescription.hex) { return false }
                if let since, String(e.time.prefix(10)) < since.description { return false }
                return true
            }
        }
    }

    func auditEvents() throws -> [AuditEvent] {
        try store.auditEntries().map { try openAuditEntry($0) }
    }

    /// Whether an entry a client appended is what a client may write: a read by itself.
    func isClientRead(_ row: AuditEntryRecord, clients: Set<String>) -> Bool {
        guard let event = try? openAuditEntry(row) else { return false }
        return event.action == .read && event.actor == event.client && clients.contains(event.actor)
    }

    func openAuditEntry(_ row: AuditEntryRecord) throws -> AuditEvent {
        do {
            let plain = try X25519.open(row.entry, publicKey: header.auditPublicKey, secretKey: auditSecretKey)
            return try plain.withUnsafeBytes { try JSONDecoder().decode(AuditEvent.self, from: Data($0)) }
        } catch {
            throw VaultError.integrity("audit entry \(row.sequence) does not decrypt")
        }
    }

    /// Housekeeping every owner write does first, in the same transaction: revoke expired
    /// grants (re-keying) and countersign the entries clients appended to the log.
    func maintain() throws -> Bool {
        // Countersign first: the sweep appends owner entries, which move the head past them.
        let clientIDs = Set(try store.clients().map(\.id))
        try AuditLog.countersign(store: store, macKey: auditMACKey) { [self] entry in isClientRead(entry, clients: clientIDs) }
        return try sweepExpiredGrants()
    }
}
