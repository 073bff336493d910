import RxModel
import RxVault

/// `rxvault due`'s three forms of the same recalls: a table for people, JSON for scripts, and
/// an iCalendar for a calendar app to subscribe to (docs/format.md, "Recalls").
enum RecallOutput {
    /// `expired 20 days ago`, `expires today`, `expires in 12 days`; for an assumed expiry
    /// `no expiry written (assumed to 2027-06-15), expires in 12 days`.
    static func status(_ recall: Recall) -> String {
        let when: String
        switch recall.daysLeft {
        case ..<(-1): when = "expired \(-recall.daysLeft) days ago"
        case -1: when = "expired yesterday"
        case 0: when = "expires today"
        case 1: when = "expires tomorrow"
        default: when = "expires in \(recall.daysLeft) days"
        }
        return recall.isAssumed ? "no expiry written (assumed to \(recall.expires)), \(when)" : when
    }

    /// What to do: an expired prescription cannot be used until the exam renews it.
    static func action(_ recall: Recall) -> String { recall.isOverdue ? "exam overdue" : "book an exam" }

    /// The patient as a row names them: the vault's patient record's name, with the birth date
    /// when another patient in the same listing has the same name (two records of one name
    /// differ by birth date; `add`'s rule).
    static func patients(_ recalls: [Recall]) -> [String] {
        let names = recalls.map { PatientName.key($0.record.prescription.patient.name) }
        let births = Dictionary(grouping: recalls) { PatientName.key($0.record.prescription.patient.name) }
            .mapValues { Set($0.map { $0.record.prescription.patient.birthDate }) }
        return zip(recalls, names).map { recall, key in
            let patient = recall.record.prescription.patient
            guard births[key]!.count > 1 else { return patient.name }
            return patient.name + (patient.birthDate.map { " (born \($0))" } ?? " (no birth date)")
        }
    }

    static let headers = ["EXPIRES", "ID", "KIND", "PATIENT", "STATUS", "TO DO"]

    /// Soonest first, in the colour of the status; on a narrow terminal status and what to do
    /// go beneath the row, so names stay whole.
    static func table(_ recalls: [Recall], style: TableStyle) -> String {
        let short = PrescriptionID.shortForms(recalls.map(\.record.id))
        let rows = zip(recalls, patients(recalls)).map { recall, patient in
            [
                recall.expires.description, short[recall.record.id]!, recall.record.prescription.kind.rawValue,
                patient, status(recall), action(recall)
            ]
        }
        return Table.render(
            headers: headers, rows: rows, tones: recalls.map { $0.isOverdue ? .expired : .expiring },
            tinted: [0, 4], overflow: [.init(columns: [4, 5])], style: style)
    }

    static let schema = "rxvault/due/v1"

    /// `{"schema": "rxvault/due/v1", "today": ..., "withinDays": 60, "due": [...]}`.
    /// An assumed expiry is `"expires": null, "assumedExpiry": ...`, never passed off as written.
    static func json(
        _ recalls: [Recall], today: CalendarDate, withinDays: Int, assuming validity: AssumedValidity? = nil
    ) -> String {
        let items: [JSONValue] = recalls.map { recall in
            let rx = recall.record.prescription
            var patient: [(String, JSONValue)] = [("name", .string(rx.patient.name))]
            if let dob = rx.patient.birthDate { patient.append(("birthDate", .string(dob.description))) }
            if let id = rx.patient.id { patient.append(("id", .string(id))) }
            var pairs: [(String, JSONValue)] = [
                ("id", .string(recall.record.id.hex)), ("kind", .string(rx.kind.rawValue)),
                ("patient", .object(patient)), ("prescriber", .object([("name", .string(rx.prescriber.name))])),
                ("issued", .string(rx.issued.description)),
                ("expires", recall.isAssumed ? .null : .string(recall.expires.description)),
                ("daysLeft", .int(recall.daysLeft)),
                // The status `show` gives it (valid, expiring, expired): a window of a year does
                // not make a prescription "expiring" 200 days out.
                ("status", .string(rx.status(on: today, assuming: validity).rawValue)),
                ("exam", .string(recall.isOverdue ? "overdue" : "due"))
            ]
            if recall.isAssumed { pairs.append(("assumedExpiry", .string(recall.expires.description))) }
            return .object(pairs)
        }
        return JSONValue.object([
            ("schema", .string(schema)), ("today", .string(today.description)), ("withinDays", .int(withinDays)),
            ("due", .array(items))
        ]).write(pretty: true)
    }

    /// One all-day event per recall on its expiry date. The UID is the prescription's id, so a
    /// calendar subscribed to the file moves or drops the event as the recall changes instead
    /// of adding another; a renewal is a new prescription, so a new event. `alarmDays`: a
    /// reminder that many days before each (`due --alarm`), or none.
    static func calendar(_ recalls: [Recall], stamp: String, alarmDays: Int? = nil) -> String {
        let events = zip(recalls, patients(recalls)).map { recall, patient in
            let rx = recall.record.prescription
            let summary =
                recall.isOverdue
                ? "Eye exam overdue: \(patient) (\(rx.kind.rawValue))"
                : "Eye exam due: \(patient) (\(rx.kind.rawValue))"
            let description =
                "rxvault prescription \(recall.record.id.short) (\(rx.kind.rawValue), issued \(rx.issued), "
                + "prescriber \(rx.prescriber.name)) \(recall.isOverdue ? "expired" : "expires") on "
                + "\(recall.expires)\(recall.isAssumed ? " (no expiry written: assumed)" : ""). Renewing it means an eye exam."
            return ICalendar.Event(
                uid: "\(recall.record.id.hex)@rxvault", day: recall.expires, summary: summary, description: description,
                alarmDaysBefore: alarmDays)
        }
        return ICalendar(
            productID: "-//rxvault//rxvault \(RxVaultCommand.version)//EN", name: "rxvault recalls", events: events
        ).text(stamp: stamp)
    }
}
