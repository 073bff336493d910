import ArgumentParser
import Foundation
import RxModel
import RxVault

/// The query filters, shared by `query` and `export` (docs/guide.md, "Queries").
struct FilterOptions: ParsableArguments {
    @Option(help: "Patient's name contains this (any case).", completion: .custom(Completion.patientNames)) var patient:
        String?
    @Option(help: "glasses or contacts.") var kind: PrescriptionKind?
    @Option(
        help: ArgumentHelp(
            "Only these statuses: active, cancelled, draft, entered-in-error (FHIR), superseded (comma-separated) or all.",
            valueName: "codes")) var status: String?
    @Option(
        help: ArgumentHelp(
            "Issued on or before the day and not expired on it (with no expiry date: by the assumed one, else issued at most two years before).",
            valueName: "yyyy-mm-dd"))
    var validOn: String?
    @Flag(help: "Expired before today.") var expired = false
    @Option(help: ArgumentHelp("Expires within this many days from today (e.g. 60d, 8w).", valueName: "days"))
    var expiringWithin: String?
    @Option(help: ArgumentHelp("Issued on or after the day.", valueName: "yyyy-mm-dd")) var issuedAfter: String?
    @Option(help: ArgumentHelp("Issued on or before the day.", valueName: "yyyy-mm-dd")) var issuedBefore: String?
    @Option(help: "A lens brand contains this (any case).") var brand: String?
    @Option(help: "The prescriber's name contains this (any case).") var prescriber: String?
    @Flag(help: "Only the newest prescription per patient and kind.") var latest = false
    @Flag(help: "Only prescriptions with attachments.") var hasAttachments = false
    @Option(
        name: .customLong("sphere-min"), parsing: .unconditional,
        help: ArgumentHelp("Some eye's sphere at least this.", valueName: "D")) var sphereMin: String?
    @Option(
        name: .customLong("sphere-max"), parsing: .unconditional,
        help: ArgumentHelp("Some eye's sphere at most this.", valueName: "D")) var sphereMax: String?
    @Option(
        name: .customLong("cyl-min"), parsing: .unconditional,
        help: ArgumentHelp("Some eye's cylinder at least this.", valueName: "D")) var cylMin: String?
    @Option(
        name: .customLong("cyl-max"), parsing: .unconditional,
        help: ArgumentHelp("Some eye's cylinder at most this.", valueName: "D")) var cylMax: String?
    @Flag(name: .customLong("add"), help: "Only prescriptions with a near addition (multifocal).") var hasAdd = false
    @Option(
        help:
            "Sort by issued (newest first), expires (soonest first), patient or kind (default: issued; expires with --expiring-within)."
    ) var sort: SortKey?
    @Flag(help: "Reverse the order.") var reverse = false
    @Option(help: "At most this many results.") var limit: Int?

    enum SortKey: String, ExpressibleByArgument, CaseIterable { case issued, expires, patient, kind }

    /// Whether any filter at all was given (export without ids or filters exports everything).
    var isEmpty: Bool {
        filterValues.allSatisfy { $0 == nil } && !expired && !latest && !hasAttachments && !hasAdd && limit == nil
    }

    private var filterValues: [String?] {
        [
            patient, kind?.rawValue, status, validOn, expiringWithin, issuedAfter, issuedBefore, brand, prescriber,
            sphereMin, sphereMax, cylMin, cylMax
        ]
    }

    func filter() throws -> PrescriptionFilter {
        func date(_ text: String?, _ flag: String) throws -> CalendarDate? {
            guard let text else { return nil }
            guard let d = CalendarDate(iso: text) else {
                throw CLIError(.invalidInput, "--\(flag) '\(text)': \(CalendarDate.problem(iso: text)!)")
            }
            return d
        }
        func power(_ text: String?, _ flag: String) throws -> Hundredths? {
            guard let text else { return nil }
            if let comma = LensNotation.decimalComma(in: text) {
                throw CLIError(.invalidInput, "--\(flag) \(comma.problem)")
            }
            guard let value = Hundredths(parsing: text) else {
                throw CLIError(.invalidInput, "--\(flag) '\(text)': not a number such as -2.25")
            }
            return value
        }
        var f = PrescriptionFilter()
        f.patient = patient
        f.kind = kind
        if let status {
            // `superseded` is derived (a newer prescription replaces it), not a FHIR code: it is
            // taken out here and the rest read as the FHIR statuses they are.
            let codes = status.split(separator: ",", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            let fhir = codes.filter { $0 != "superseded" }
            guard let statuses = fhir.isEmpty ? [] : RecordStatus.list(fhir.joined(separator: ",")) else {
                throw CLIError(
                    .invalidInput,
                    "--status '\(status)': give all or some of \((RecordStatus.allCases.map(\.rawValue) + ["superseded"]).joined(separator: ", ")), comma-separated, or all"
                )
            }
            f.statuses = statuses
            f.includesSuperseded = codes.contains("superseded")
        }
        f.validOn = try date(validOn, "valid-on")
        f.expired = expired
        if let text = expiringWithin {
            guard let days = Duration.days(text) else {
                throw CLIError(
                    .invalidInput, "--expiring-within '\(text)': give a number of days such as 60d, 8w or 2m")
            }
            f.expiringWithinDays = days
        }
        f.issuedAfter = try date(issuedAfter, "issued-after")
        f.issuedBefore = try date(issuedBefore, "issued-before")
        f.brand = brand
        f.prescriber = prescriber
        f.latest = latest
        f.hasAttachments = hasAttachments
        f.sphereMin = try power(sphereMin, "sphere-min")
        f.sphereMax = try power(sphereMax, "sphere-max")
        f.cylinderMin = try power(cylMin, "cyl-min")
        f.cylinderMax = try power(cylMax, "cyl-max")
        f.hasAdd = hasAdd
        // Expiring soon is a to-do list: the soonest expiry first, unless another order is asked for.
        f.sort = PrescriptionFilter.Sort(rawValue: (sort ?? (expiringWithin != nil ? .expires : .issued)).rawValue)!
        f.reverse = reverse
        if let limit, limit < 1 { throw CLIError(.usage, "--limit must be at least 1") }
        f.limit = limit
        return f
    }
}
