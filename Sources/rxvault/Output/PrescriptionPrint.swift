import RxModel
import RxPrint
import RxValidate
import RxVault

/// `export --format pdf`: each prescription as a page laid out like the paper one (patient,
/// prescriber and licence, dates and validity, a row per eye with every value, PD, notes, what
/// the lens is beyond rxvault's fields as kept from FHIR (tint, wear duration, lens notes), the
/// attachments it has), for an optician or a drawer. The values are the ones `show` prints.
enum PrescriptionPrint {
    /// `supersededBy`: the newer prescription that replaces this one, if any; the page then says
    /// `superseded by <id>` where it would say `valid`, as `show` does.
    /// `assumedValidity`: the vault's setting; an assumed expiry reads `no expiry written (assumed
    /// to ...)`, never as a date the prescriber wrote.
    static func page(
        _ item: ExportItem, shortID: String, today: CalendarDate, supersededBy: PrescriptionID? = nil,
        assumedValidity: AssumedValidity? = nil
    )
        -> PrintedPage
    {
        let view = PrescriptionView(
            record: item.record, today: today, cylinderForm: nil, supersededBy: supersededBy,
            assumedValidity: assumedValidity)
        let rx = view.prescription
        var fields: [(label: String, value: String)] = [
            ("Patient", rx.patient.name + (rx.patient.birthDate.map { ", born \($0)" } ?? "")),
            ("Prescriber", rx.prescriber.name),
            ("Licence", rx.prescriber.licence ?? "not recorded")
        ]
        if let contact = rx.prescriber.contact { fields.append(("Contact", contact)) }
        fields += PrescriptionText.practice(rx.prescriber).map { (capitalised($0.0), $0.1) }
        if let exam = rx.examDate { fields.append(("Exam date", exam.description)) }
        fields += [
            ("Issued", rx.issued.description),
            (
                "Expires",
                rx.expires?.description
                    ?? view.assumedExpiry.map { "no expiry written (assumed to \($0))" } ?? "no expiry date"
            )
        ]
        if let reason = rx.shortExpiryReason { fields.append(("Short expiry", reason)) }
        fields += [
            // A withdrawn prescription says so instead of a validity: it must not be dispensed from.
            (
                "Validity",
                view.status.isWithdrawn
                    ? "NOT VALID: \(view.statusText) (withdrawn; do not dispense)"
                    : view.status == .superseded
                        ? "superseded by \(supersededBy.map(\.short) ?? "a newer prescription") on \(today)"
                        : view.status == .noExpiryWritten
                            ? "\(view.statusText): over \(PrescriptionStatus.undatedYears) years old on \(today); ask the prescriber whether it stands"
                            : "\(view.statusText) on \(today)"
            )
        ]
        if let pd = rx.pupillaryDistance {
            fields.append(("PD", pd.far.plain + " mm" + (pd.near.map { " far, \($0.plain) mm near" } ?? "")))
        }
        if let type = rx.contactLensType { fields.append(("Lens type", type.label)) }
        fields += PrescriptionText.lensMakers(view).map { (capitalised($0.0), $0.1) }
        let (headers, rows) = PrescriptionText.eyeGrid(view)
        // What the lens itself is, kept from FHIR beside rxvault's fields (tint, wear duration, notes).
        let kept = view.eyes.flatMap { eye, _ in
            (rx.fhir?.clinical(eye) ?? []).map { "\(eye.label) \($0.label): \($0.text)" }
        }
        let attachments = item.attachments.map { file -> String in
            let m = file.info.metadata
            let detail =
                m.type == .png
                ? (m.width.flatMap { w in m.height.map { h in "\(w)x\(h) px" } } ?? "image")
                : (m.pages.map { $0 == 1 ? "1 page" : "\($0) pages" } ?? "document")
            return
                "\(m.name): \(m.type.rawValue.uppercased()), \(detail), \(ByteCount(m.size)), added \(m.added.prefix(10))"
        }
        return PrintedPage(
            title: rx.kind == .glasses ? "Spectacle prescription" : "Contact lens prescription",
            subtitle: "rxvault prescription \(shortID), version \(item.record.version)"
                + (view.status.isWithdrawn ? ", \(view.statusText.uppercased()): NOT VALID" : ""),
            fields: fields,
            grid: PrintedPage.Grid(headers: headers, rows: rows),
            sections: [
                PrintedPage.Section(heading: "Notes", lines: [rx.note ?? "none"])
            ] + (kept.isEmpty ? [] : [PrintedPage.Section(heading: "Lens details (from FHIR)", lines: kept)]) + [
                PrintedPage.Section(heading: "Attachments", lines: attachments.isEmpty ? ["none"] : attachments)
            ],
            footer: "Printed by rxvault \(RxVaultCommand.version) on \(today) from prescription \(item.record.id.hex). "
                + "Powers (SPH, CYL, ADD) in dioptres, AXIS in degrees, prism in prism dioptres, VERTEX, PD, BC and DIA in mm; "
                + "SE is the spherical equivalent. A copy for reference: the prescriber's record is the original.")
    }

    /// `address` -> `Address`, `OD manufacturer` as it is.
    private static func capitalised(_ label: String) -> String { label.prefix(1).uppercased() + label.dropFirst() }
}
