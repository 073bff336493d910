import ArgumentParser
import Foundation
import RxModel
import RxPrint
import RxVault

extension RxVaultCommand {
    struct TrendCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "trend",
            abstract: "Show how a patient's eyes change over time, as a table or a chart.",
            discussion: flowing(
                """
                Each eye's spherical equivalent (SE = sphere + cylinder / 2) and cylinder over the
                patient's prescriptions, oldest first, with the change since the previous one and the
                change per year (the change over the days between the issue dates / 365.25). The
                overall rate per eye is the least-squares slope through all its prescriptions. For
                children this is how myopia progression is followed.

                Glasses and contacts are compared at the spectacle plane: a contact lens's power is
                converted per principal meridian with F = Fc / (1 + d*Fc), d the vertex distance of the
                patient's glasses prescription nearest in time (12 mm assumed when none gives one).
                Balance lenses have no power and give no value.

                Under the refraction: each eye's axial length (mm, with its rate per year) and each
                visual acuity recorded ('rxvault measurement'), as written and in logMAR (lower is
                better), with the age when the birth date is known.

                --out FILE draws the chart instead (one line per eye, glasses filled and contacts
                hollow, the rate per year in the legend): .png (1200x800 pixels), .pdf (720x480 pt) or
                .svg (1200x800 px), by the file name's extension. The chart file is written like an
                export (mode 0600, --force to replace it) and recorded in the audit log.

                PATIENT is matched as 'query --patient' matches: a name containing it (any case;
                an equal name first), else an id prefix, as 'rxvault patients' shows them. Two or
                more patients matching is an error listing them.
                --format json prints {"schema": "rxvault/trend/v1", ...} (docs/format.md).

                Examples:
                  rxvault trend "Mia Chen"
                  rxvault trend "Mia Chen" --eye right --format json
                  rxvault trend "Mia Chen" --out trend.png
                  rxvault trend 3f9a2c1e --out trend.pdf --force
                """))

        @Argument(help: "The patient's name, part of it, or id prefix.", completion: .custom(Completion.patientNames))
        var patient: String
        @Option(help: "Only this eye: right (od) or left (os).") var eye: Eye?
        @Option(help: "Output format (of the table; --out draws a chart instead).") var format: DocumentFormat = .table
        @Option(help: ArgumentHelp("Draw the chart to this file: .png, .pdf or .svg (mode 0600).", valueName: "file"))
        var out: String?
        @Flag(help: "Replace the chart file if it exists.") var force = false
        @OptionGroup var options: VaultOptions

        func validate() throws {
            if let out {
                guard TrendChart.Format(fileName: out) != nil else {
                    throw ValidationError(
                        "--out \(out): the chart is drawn as .png, .pdf or .svg, chosen by the file name's extension")
                }
                if format == .json {
                    throw ValidationError(
                        "--format json prints the table as JSON; --out draws the chart: give one of them")
                }
            } else if force {
                throw ValidationError("--force replaces the chart file: it needs --out")
            }
        }

        func run() throws {
            try CommandRunner.run(json: format == .json) {
                try options.requireOwner("trend")
                // Before any passphrase or work: a path that can never be written costs nothing.
                if let out { _ = try WriteTarget.file(for: out, replace: force) }
                let vault = try options.openVault(command: "trend")
                let summary = try PatientArgument.find(patient, in: vault, writing: false)
                let records = try vault.patients().first { $0.0.id == summary.id }?.1 ?? []
                let eyes = eye.map { [$0] } ?? Set(Eye.allCases)
                let trend = Trend(records.map { ($0.id.hex, $0.prescription) }, eyes: eyes)
                let axial = AxialLengthTrend(summary.measurements, eyes: eyes, birthDate: summary.birthDate)
                let acuity = VisualAcuityTrend(summary.measurements, eyes: eyes, birthDate: summary.birthDate)
                guard !trend.isEmpty || !axial.isEmpty || !acuity.isEmpty else {
                    let which = eye.map { " for the \($0 == .right ? "right" : "left") eye" } ?? ""
                    // With --eye, what the patient has for both eyes or the other eye is only
                    // left out: say so, rather than suggest there is nothing.
                    let elsewhere =
                        eye != nil
                        && (!summary.measurements.isEmpty
                            || !Trend(records.map { ($0.id.hex, $0.prescription) }, eyes: Set(Eye.allCases)).isEmpty)
                    throw CLIError(
                        .notFound,
                        "\(summary.line) has no prescription with a lens power, no axial length and no visual acuity\(which): no trend to show",
                        hint: elsewhere
                            ? "without --eye the trend shows what there is (both eyes' acuities, the other eye)"
                            : records.isEmpty ? "'rxvault add glasses --patient ...' records one" : nil)
                }
                guard let out, let chartFormat = TrendChart.Format(fileName: out) else {
                    switch format {
                    case .json:
                        Terminal.out(
                            TrendOutput.json(trend, patient: summary, axial: axial, acuity: acuity).write(pretty: true))
                    default:
                        var parts: [String] = []
                        if !trend.isEmpty { parts.append(TrendOutput.text(trend, patient: summary)) }
                        if !axial.isEmpty { parts.append(TrendOutput.text(axial)) }
                        if !acuity.isEmpty { parts.append(TrendOutput.text(acuity)) }
                        if trend.isEmpty { parts[0] = "\(summary.line):\n" + parts[0] }
                        Terminal.out(parts.joined(separator: "\n\n"))
                    }
                    return
                }
                let bytes: [UInt8]
                do {
                    bytes = try TrendChart.render(
                        trend, patient: summary.name, format: chartFormat, axial: axial, acuity: acuity,
                        birthDate: summary.birthDate)
                } catch {
                    throw CLIError(.failure, "cannot draw the chart: \(error)")
                }
                // Like an export: the audit entry first; if it cannot be written, neither is the file.
                // It names the prescriptions drawn and, as `measurement list --format fhir` does,
                // whose measurements the chart carries.
                let measured = Set(
                    axial.series.flatMap { $0.points.map(\.measurement) }
                        + acuity.series.flatMap { $0.points.map(\.measurement) }
                ).count
                let carried =
                    measured == 0 ? "" : ", \(counted(measured, "measurement")) of patient \(summary.id.short)"
                try SafeFileWriter.write(to: out, replace: force) { writer in
                    try writer.write(bytes)
                    try vault.recordExport(
                        prescriptions: trend.prescriptions, attachments: [],
                        format: "trend chart (\(chartFormat.rawValue)\(carried))",
                        client: nil, recipients: nil)
                }
                // What the chart shows: its prescriptions, and its measurements when it has any.
                let drawn = [
                    trend.prescriptions.isEmpty && measured > 0 ? nil : "\(trend.prescriptions.count) prescription(s)",
                    measured == 0 ? nil : counted(measured, "measurement")
                ].compactMap { $0 }.joined(separator: " and ")
                Terminal.err("rxvault: drew the trend of \(drawn) of \(summary.name) to \(out)")
            }
        }
    }
}
