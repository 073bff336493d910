import ArgumentParser
import Foundation
import RxModel
import RxVault

extension RxVaultCommand {
    /// `rxvault measurement add|list|edit|remove` (issue 26): a child's myopia-management record,
    /// kept in the patient's sealed record (DESIGN.md, "Measurements").
    struct MeasurementCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "measurement",
            abstract: "Record axial length and visual acuity (myopia management).",
            discussion: flowing(
                """
                A measurement is one visit's axial length per eye (mm, 15.00-35.00) and visual
                acuities, per eye (--va-od, --va-os) and both eyes (--va-ou), with the patient's
                correction or without it (--va-od-uncorrected, ...). An acuity is written as
                Snellen in feet (20/20) or metres (6/6, 6/7.5), decimal (1.0) or 'logMAR 0.10'
                (the word is required: 0.1 alone is decimal 0.1); it is kept as written, with
                its logMAR value in JSON and FHIR. 'rxvault trend' shows the axial length beside
                the refraction. A client reads a patient's measurements only through a grant made
                with --measurements ('rxvault grant'), with 'measurement list --identity FILE'
                or the API's /Observation.

                Examples:
                  rxvault measurement add "Mia Chen" --date 2026-03-01 \\
                      --axial-length-od 24.12 --axial-length-os 24.05 \\
                      --device "IOLMaster 700" --va-od 6/6 --va-os 6/7.5
                  rxvault measurement list "Mia Chen"
                  rxvault measurement list "Mia Chen" --format fhir > mia.json
                  rxvault measurement edit 3f9a2c1e --va-os-uncorrected 6/12
                  rxvault measurement remove 3f9a2c1e --yes
                """),
            subcommands: [Add.self, List.self, Edit.self, Remove.self])

        struct Add: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "add", abstract: "Add a measurement to a patient.",
                discussion: flowing(
                    """
                    PATIENT is the patient's name (case and spacing do not matter) or id prefix, as
                    'rxvault patients' shows them; the patient must exist. The date may not be in
                    the future, nor before the patient's birth date. Prints the new id.
                    """))

            @Argument(
                help: "The patient's name, part of it, or id prefix.", completion: .custom(Completion.patientNames))
            var patient: String
            @Option(help: ArgumentHelp("The day measured (YYYY-MM-DD).", valueName: "date")) var date: String
            @Flag(help: "Measured under cycloplegia (drops).") var cycloplegic = false
            @OptionGroup var values: MeasurementValueOptions
            @OptionGroup var options: VaultOptions

            func run() throws {
                try CommandRunner.run {
                    try options.requireOwner("measurement add")
                    var m = EyeMeasurement(
                        id: "", date: try MeasurementValueOptions.date(date), cycloplegic: cycloplegic)
                    try values.apply(to: &m)
                    guard !m.isEmpty else {
                        throw CLIError(
                            .usage, "nothing to record",
                            hint: "give --axial-length-od/--axial-length-os or a visual acuity (--va-od, ...)")
                    }
                    let vault = try options.openVault(command: "measurement add")
                    let summary = try PatientArgument.find(patient, in: vault, writing: true)
                    let added = try vault.addMeasurement(m, patient: summary.id)
                    Terminal.out(added.measurement.short)
                }
            }
        }

        enum ListFormat: String, ExpressibleByArgument, CaseIterable {
            case table, json, fhir
        }

        struct List: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "list", abstract: "List measurements, or export them as FHIR.",
                discussion: flowing(
                    """
                    Without PATIENT, every patient's. PATIENT is matched as 'trend' matches it. On a
                    terminal narrower than the table, the notes, the acuities and then the axial
                    lengths go on lines beneath their row (--wide keeps one line).
                    --format json prints {"schema": "rxvault/measurements/v1", ...}; --format fhir
                    prints a FHIR R4 collection Bundle of Observations (LOINC-coded axial lengths
                    and acuities) with their Patients, and records the export in the audit log
                    (docs/format.md, "Measurements").
                    """))

            @Argument(
                help: "The patient's name, part of it, or id prefix.", completion: .custom(Completion.patientNames))
            var patient: String?
            @Option(help: "Output format.") var format: ListFormat = .table
            @Flag(help: "Keep each measurement on one line however wide the terminal (table).") var wide = false
            @OptionGroup var options: VaultOptions

            func run() throws {
                try CommandRunner.run(json: format != .table) {
                    if options.identity != nil {
                        // As a client: the measurements its grants carry, logged as a read.
                        let client = try options.openClient()
                        let records = try client.measurements(of: patient)
                        warnIfNotLogged(client)
                        try write(
                            records,
                            none: "no measurements granted (a grant made with --measurements carries them)")
                        return
                    }
                    let vault = try options.openVault(command: "measurement list")
                    let id = try patient.map { try vault.findPatient($0).id }
                    let records = try vault.measurements(of: id)
                    try write(records, none: "no measurements; 'rxvault measurement add' records one") {
                        // Like an export: the audit entry first; if it cannot be written, nothing is
                        // printed. It names whose measurements left, as an export names prescriptions.
                        var patients: [String] = []
                        for record in records where !patients.contains(record.patient.id.short) {
                            patients.append(record.patient.id.short)
                        }
                        let whose = patients.isEmpty ? "" : " of patient(s) \(patients.joined(separator: ", "))"
                        try vault.recordExport(
                            prescriptions: [], attachments: [],
                            format: "measurements (FHIR, \(records.count) measurement(s)\(whose))", client: nil,
                            recipients: nil)
                    }
                }
            }

            /// Writes `records` in `format` to stdout, the owner's and a client's alike (not named
            /// `print`, which would hide Swift's own); `none` is said on stderr when a table would
            /// be empty, and `beforeFHIR` runs before a FHIR Bundle leaves.
            private func write(
                _ records: [MeasurementRecord], none: String, beforeFHIR: () throws -> Void = {}
            ) throws {
                switch format {
                case .json: Terminal.out(MeasurementOutput.json(records).write(pretty: true))
                case .fhir:
                    try beforeFHIR()
                    Terminal.out(String(decoding: FHIR.measurementBundle(records), as: UTF8.self))
                case .table:
                    guard !records.isEmpty else { return Terminal.err("rxvault: \(none)") }
                    Terminal.out(MeasurementOutput.text(records, style: .forStandardOutput(wide: wide)))
                }
            }
        }

        /// What `edit --clear` can take away.
        enum ClearableField: String, ExpressibleByArgument, CaseIterable {
            case axialLengthOD = "axial-length-od"
            case axialLengthOS = "axial-length-os"
            case device
            case vaOD = "va-od"
            case vaOS = "va-os"
            case vaOU = "va-ou"
            case vaODUncorrected = "va-od-uncorrected"
            case vaOSUncorrected = "va-os-uncorrected"
            case vaOUUncorrected = "va-ou-uncorrected"
        }

        struct Edit: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "edit", abstract: "Change a measurement.",
                discussion: flowing(
                    """
                    Each value given replaces the stored one; --clear FIELD removes one (repeat it);
                    --cycloplegic true|false sets the flag. The same rules as 'add' apply.

                    Examples:
                      rxvault measurement edit 3f9a2c1e --axial-length-od 24.21
                      rxvault measurement edit 3f9a2c1e --clear device --cycloplegic false
                    """))

            @Argument(help: "The measurement's id (any unique prefix, 8+ digits).") var id: String
            @Option(help: ArgumentHelp("A new day measured (YYYY-MM-DD).", valueName: "date")) var date: String?
            @Option(help: ArgumentHelp("Measured under cycloplegia: true or false.", valueName: "bool"))
            var cycloplegic: Bool?
            @Option(help: ArgumentHelp("Remove a value (axial-length-od, device, va-os, ...).", valueName: "field"))
            var clear: [ClearableField] = []
            @OptionGroup var values: MeasurementValueOptions
            @OptionGroup var options: VaultOptions

            func run() throws {
                try CommandRunner.run {
                    try options.requireOwner("measurement edit")
                    guard !values.isEmpty || date != nil || cycloplegic != nil || !clear.isEmpty else {
                        throw CLIError(.usage, "nothing to change", hint: "give a value to replace, or --clear FIELD")
                    }
                    let day = try date.map(MeasurementValueOptions.date)
                    // Read every value before the vault opens: a wrong one exits 65 first.
                    var probe = EyeMeasurement(id: "", date: day ?? CalendarDate.earliest)
                    try values.apply(to: &probe)
                    let vault = try options.openVault(command: "measurement edit")
                    let edited = try vault.editMeasurement(id) { (m: inout EyeMeasurement) throws(VaultError) in
                        for field in clear { Self.clear(field, in: &m) }
                        if let day { m.date = day }
                        if let cycloplegic { m.cycloplegic = cycloplegic }
                        if values.axialLengthOD != nil { m.axialLengthRight = probe.axialLengthRight }
                        if values.axialLengthOS != nil { m.axialLengthLeft = probe.axialLengthLeft }
                        if values.device != nil { m.device = probe.device }
                        for (slot, _) in values.acuityTexts { m.acuity[slot] = probe.acuity[slot] }
                    }
                    Terminal.out(edited.measurement.short)
                }
            }

            static func clear(_ field: ClearableField, in m: inout EyeMeasurement) {
                switch field {
                case .axialLengthOD: m.axialLengthRight = nil
                case .axialLengthOS: m.axialLengthLeft = nil
                case .device: m.device = nil
                case .vaOD: m.acuity[.od] = nil
                case .vaOS: m.acuity[.os] = nil
                case .vaOU: m.acuity[.ou] = nil
                case .vaODUncorrected: m.acuity[.odUncorrected] = nil
                case .vaOSUncorrected: m.acuity[.osUncorrected] = nil
                case .vaOUUncorrected: m.acuity[.ouUncorrected] = nil
                }
            }
        }

        struct Remove: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "remove", abstract: "Delete a measurement.",
                discussion: flowing(
                    """
                    The patient's record is sealed again without it (the old row is overwritten in
                    the file and its write-ahead log). Asks on a terminal; scripts pass --yes.
                    """))

            @Argument(help: "The measurement's id (any unique prefix, 8+ digits).") var id: String
            @Flag(name: [.customShort("y"), .long], help: "Do not ask for confirmation.") var yes = false
            @OptionGroup var options: VaultOptions

            func run() throws {
                try CommandRunner.run {
                    try options.requireOwner("measurement remove")
                    let confirmation = Confirmation(
                        yes: yes, noInput: options.noInput, command: "measurement remove", verb: "remove")
                    let vault = try options.openVault(command: "measurement remove")
                    let found = try vault.measurement(id)
                    try confirmation.require(
                        "Remove measurement \(found.measurement.short) of \(found.patient.name), \(found.measurement.date)?"
                    )
                    try vault.removeMeasurement(found.measurement.id)
                    Terminal.out("removed measurement \(found.measurement.short)")
                }
            }
        }
    }
}
