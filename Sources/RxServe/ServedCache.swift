import NIOCore
import RxModel
import RxVault

/// What the server keeps between requests, for one state of the vault and one day.
///
/// Working out a client's grants costs its grant rows, each checked against the owner's
/// manifest and opened; reading a prescription costs its row, the manifest, a decryption and
/// the FHIR rendering. None of that changes until the owner writes, and every owner write - a
/// grant, a revoke, a client removed, an edit, an expired grant swept, even the server's own
/// audit entries - writes a new state root (`StateStamp`). So each request first reads the
/// stamp (one row) and the day, and everything kept under another stamp or day is dropped:
/// a revoke made with the CLI still counts at the next request, and a grant's last day ends
/// at midnight (or when RXVAULT_TODAY moves). Tests/CLITests/ServePropertyTests.swift checks
/// exactly that, step after step.
///
/// The stamp is read before what is kept under it, so a write in between can only leave newer
/// data under an older stamp, which the next request drops; never older data under a newer one.
/// Nothing is kept for a format-1 vault (no state root) until its first write upgrades it.
/// The server's own audit writes (every second under load) carry what is kept to the state they
/// leave when they changed nothing else and started from the state it was read in.
struct ServedCache {
    private(set) var stamp: StateStamp?
    let today: CalendarDate
    /// Client id -> its view; nil when the client is no longer registered.
    var clients: [ClientID: ClientView?] = [:]
    var records: [PrescriptionID: PrescriptionRecord] = [:]
    /// The newest version of a prescription as the read endpoint sends it to one client (its
    /// `meta.lastUpdated` is that client's: `ClientLastUpdated`).
    var rendered: [RenderedKey: ByteBuffer] = [:]
    /// The time the newest attachment of a prescription was added (nil inside: it has none).
    var newestAttachment: [PrescriptionID: String?] = [:]

    struct RenderedKey: Hashable {
        let client: ClientID
        let prescription: PrescriptionID
    }

    /// Prescriptions (and renderings, one per client and prescription) kept at most (about 2 KiB
    /// each): a vault whose owner granted far more than this is served with the cache emptied
    /// when it fills.
    static let maxPrescriptions = 8192

    var keeps: Bool { stamp != nil }

    /// After a write of the server's own that changed nothing but the audit log (the served
    /// reads, `Vault.logServedReads`), from the state this was read in: it holds in the new one.
    /// Without this every flush (each second under load) would empty the cache.
    mutating func carry(to stamp: StateStamp) {
        self.stamp = stamp
    }

    /// Whether what is kept was read in this state on this day.
    func isCurrent(stamp: StateStamp?, today: CalendarDate) -> Bool {
        stamp != nil && stamp == self.stamp && today == self.today
    }

    mutating func keep(_ record: PrescriptionRecord) {
        guard keeps else { return }
        if records.count >= Self.maxPrescriptions {
            records = [:]
            rendered = [:]
        }
        records[record.id] = record
    }

    mutating func keep(rendered buffer: ByteBuffer, of key: RenderedKey) {
        guard keeps else { return }
        if rendered.count >= Self.maxPrescriptions { rendered = [:] }
        rendered[key] = buffer
    }

    mutating func keep(newestAttachment added: String?, of id: PrescriptionID) {
        guard keeps else { return }
        if newestAttachment.count >= Self.maxPrescriptions { newestAttachment = [:] }
        newestAttachment[id] = .some(added)
    }
}
