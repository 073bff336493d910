import ArgumentParser
import RxVault

/// The terms a grant states (`grant`, `requests approve`): an end, or none, and whether the
/// attachments and the patient's measurements are included. Nil for what is not stated: a repeated grant keeps it.
struct GrantTermsOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Last day the grant works: YYYY-MM-DD, Nd / Nw / Nm from today, or never.", valueName: "date|30d"))
    var expires: String?
    @Flag(help: "No end: the grant works until revoked (same as --expires never).") var noExpiry = false
    @Flag(
        inversion: .prefixedNo, exclusivity: .exclusive,
        help:
            "Let the client read the attachments, or not (default for a new grant: yes; a repeated grant keeps its setting)."
    )
    var attachments: Bool?
    @Flag(
        inversion: .prefixedNo, exclusivity: .exclusive,
        help:
            "Let the client read the patient's measurements (axial length, acuity), or not (default for a new grant: no; a repeated grant keeps its setting)."
    )
    var measurements: Bool?

    func validate() throws {
        if noExpiry && expires != nil { throw ValidationError("give --expires or --no-expiry, not both") }
    }

    /// The end asked for (nil: not stated), judged against the clock's today.
    func expiry() throws -> GrantExpiry? {
        if noExpiry || expires?.lowercased() == "never" { return .never }
        let today = try Environment.clock().today()
        return try expires.map { .until(try GrantText.parseExpiry($0, today: today)) }
    }

    var statesNothing: Bool { expires == nil && !noExpiry && attachments == nil && measurements == nil }
}
