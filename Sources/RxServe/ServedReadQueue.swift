import Foundation
import RxVault

/// The reads the server answered and has not written to the owner's audit log yet: a value the
/// gateway holds, so a read is queued in the same turn that answers it, and `ServeAPI.flush`
/// takes them for `AuditWriter` each second.
struct ServedReadQueue {
    /// What makes two reads the same entry: the client, what it read, and how.
    private struct ReadKey: Hashable {
        let client: ClientID
        let detail: String
        let prescriptions: [PrescriptionID]
        let attachments: [AttachmentID]
    }

    /// Reads served and not yet written, in order: when each was first served, and how often.
    private var pendingReads: [(key: ReadKey, first: Date, count: Int)] = []
    private var pendingIndex: [ReadKey: Int] = [:]
    /// Entries a failed write left, to go first in the next one.
    private var unwritten: [AuditEvent] = []
    /// The public key of each client whose reads were served, as it was served: an append
    /// (`ServeSettings.ownerWrites` false) authenticates a read for its client with it, even
    /// once the client is removed.
    private var clientKeys: [ClientID: [UInt8]] = [:]
    /// Counts the files served, so a batch the switch to another file overtook is marked too.
    private(set) var generation = 0

    mutating func add(
        client: ClientSummary, prescriptions: [PrescriptionID], attachments: [AttachmentID], detail: String
    ) {
        clientKeys[client.id] = client.recipient.publicKey
        let key = ReadKey(client: client.id, detail: detail, prescriptions: prescriptions, attachments: attachments)
        if let index = pendingIndex[key] {
            pendingReads[index].count += 1
        } else {
            pendingIndex[key] = pendingReads.count
            pendingReads.append((key, Date(), 1))
        }
    }

    /// Reads served from a file that was then replaced and not written yet go to the new file
    /// (the same vault, proved by its key), saying where they were served from: the old file is
    /// deleted, or kept aside by whoever replaced it, and either way no one reads its log again.
    static let replacedNote = " (served from the file since replaced)"

    mutating func markServedFromReplacedFile() {
        unwritten = (unwritten + queuedEvents()).map(Self.servedFromReplacedFile)
        generation += 1
    }

    static func servedFromReplacedFile(_ event: AuditEvent) -> AuditEvent {
        var marked = event
        if marked.detail?.hasSuffix(replacedNote) != true { marked.detail = (marked.detail ?? "") + replacedNote }
        return marked
    }

    /// Reads served and not written yet (entries, one per distinct read): what is lost if the
    /// server stops before a file it may write them to is back.
    var count: Int { unwritten.count + pendingReads.count }

    /// Entries for the queued reads, one per distinct read since the last write: a client that
    /// reads the same thing many times within that second gets one entry (at the first read's
    /// time) that says how many ("api read VisionPrescription (37 times)"). Under load, an
    /// entry per request would cost the writer more than answering them.
    private mutating func queuedEvents() -> [AuditEvent] {
        let events = pendingReads.map { key, first, count in
            let client = key.client.hex
            return AuditEvent(
                time: Timestamp.iso(first), actor: client, action: .read, client: client,
                prescriptions: key.prescriptions.map(\.hex),
                attachments: key.attachments.isEmpty ? nil : key.attachments.map(\.hex),
                detail: count > 1 ? key.detail + " (\(count) times)" : key.detail)
        }
        pendingReads = []
        pendingIndex = [:]
        return events
    }

    /// The reads to write now, and which file they were served from (`AuditWriter.write`
    /// writes them only into that one).
    struct Batch: Sendable {
        let events: [AuditEvent]
        let generation: Int
        let clientKeys: [ClientID: [UInt8]]
    }

    mutating func take() -> Batch {
        let events = unwritten + queuedEvents()
        unwritten = []
        return Batch(events: events, generation: generation, clientKeys: clientKeys)
    }

    /// A write that failed or did not reach the live file: its entries go first next time.
    mutating func requeue(_ batch: Batch) {
        unwritten =
            (batch.generation == generation ? batch.events : batch.events.map(Self.servedFromReplacedFile)) + unwritten
    }
}
