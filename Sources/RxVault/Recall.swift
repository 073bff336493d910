import RxModel

/// A prescription coming due (`rxvault due`): the one a patient wears now, of one kind, whose
/// expiry is near or past. Renewing it means an eye exam (a prescription is renewed by the
/// prescriber after examining the eyes, not by copying it), so each recall is also an exam due.
public struct Recall: Sendable {
    public let record: PrescriptionRecord
    /// The expiry date it is due by: the written one, else the one assumed (`isAssumed`); a
    /// prescription with neither is never due.
    public let expires: CalendarDate
    /// No expiry date was written: `expires` was assumed at import or from the vault's
    /// `assumed-validity` setting (`Prescription.expiry(assuming:)`).
    public let isAssumed: Bool
    /// Days from today to the expiry date: 0 on the day, negative once it has passed.
    public let daysLeft: Int

    /// Past its expiry: the exam is overdue and the prescription cannot be used meanwhile.
    public var isOverdue: Bool { daysLeft < 0 }

    /// The recalls among `records` (every prescription a reader sees) on `today`: for each patient
    /// and kind, the prescriptions that are neither withdrawn nor superseded (`Supersession`:
    /// the newest, or the few issued together on that day) expiring within `days` of today or
    /// already expired; soonest expiry first, then patient, kind and id, so the order is stable
    /// from one run to the next. `validity`: the vault's `assumed-validity` setting, by which a
    /// prescription with no expiry written comes due.
    public static func due(
        _ records: [PrescriptionRecord], today: CalendarDate, within days: Int,
        assuming validity: AssumedValidity? = nil
    ) -> [Recall] {
        let superseded = Supersession.superseding(records, among: records)
        // Past 9999-12-31 there is no day: every expiry is within reach.
        let horizon = today.adding(days: days) ?? .latest
        let recalls = records.compactMap { record -> Recall? in
            let rx = record.prescription
            guard !rx.recordStatus.isWithdrawn, superseded[record.id] == nil,
                let expiry = rx.expiry(assuming: validity), expiry.date <= horizon
            else { return nil }
            return Recall(
                record: record, expires: expiry.date, isAssumed: expiry.isAssumed,
                daysLeft: today.days(until: expiry.date))
        }
        return recalls.sorted {
            let (a, b) = ($0.record.prescription, $1.record.prescription)
            return (
                $0.expires, PatientName.key(a.patient.name), a.kind.rawValue, $0.record.id.hex
            ) < ($1.expires, PatientName.key(b.patient.name), b.kind.rawValue, $1.record.id.hex)
        }
    }
}
