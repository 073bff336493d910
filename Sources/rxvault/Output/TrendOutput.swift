import RxModel
import RxVault

/// `rxvault trend` as a table or as JSON (`rxvault/trend/v1`, docs/format.md). Every number is the
/// `Trend`'s, written by `Trend.text`: the chart shows the same ones.
enum TrendOutput {
    /// A header line, a row per eye and prescription (OD first, oldest first), the overall rate per
    /// eye, and what was left out.
    static func text(_ trend: Trend, patient: PatientSummary) -> String {
        let contacts = trend.points.contains { $0.kind == .contacts }
        var headers = ["EYE", "ISSUED", "KIND", "SE", "CYL", "CHANGE", "RATE/YR", "PRESCRIPTION"]
        if contacts { headers.append("VERTEX") }
        let short = PrescriptionID.shortForms(trend.prescriptions.compactMap { PrescriptionID(hex: $0) })
        var rows: [[String]] = []
        for series in trend.series {
            for point in series.points {
                var row = [
                    series.eye.label, point.issued.description, point.kind.rawValue,
                    Trend.text(point.sphericalEquivalent),
                    Trend.text(point.cylinder), point.change.map(Trend.text) ?? "-", rate(point),
                    PrescriptionID(hex: point.prescription).flatMap { short[$0] }
                        ?? String(point.prescription.prefix(8))
                ]
                if contacts {
                    row.append(
                        point.vertexDistance.map {
                            "\($0.short) mm" + (point.vertexDistanceAssumed ? " (assumed)" : "")
                        } ?? "-")
                }
                rows.append(row)
            }
        }
        var lines = [
            "\(patient.line):", "spherical equivalent (SE) and cylinder at the spectacle plane, in dioptres", "",
            Table.render(headers: headers, rows: rows), ""
        ]
        for series in trend.series { lines.append("\(series.eye.label): \(series.rateSummary)") }
        if contacts {
            lines.append("contacts: converted to the spectacle plane per meridian at the vertex distance shown")
        }
        // Where each soft design began (its points count): what the reader of a treated child's
        // trend looks for. Ortho-k's are under "left out".
        let counted = Set(trend.points.compactMap(\.myopiaControl))
        for start in trend.myopiaControlStarts where counted.contains(start.design) {
            lines.append("myopia control: \(start.design) from \(start.from) (power corrects distance)")
        }
        for skipped in trend.skipped {
            let id = String(skipped.prescription.prefix(8))
            lines.append(
                "left out: \(id) \(skipped.issued)\(skipped.eye.map { " \($0.label)" } ?? ""): \(skipped.reason)")
        }
        return lines.joined(separator: "\n")
    }

    /// The axial-length table (issue 26): a row per eye and measurement, the age at it when the
    /// birth date is known, the change and rate since the eye's previous one, and the overall rate.
    static func text(_ axial: AxialLengthTrend) -> String {
        let ages = axial.series.contains { $0.points.contains { $0.ageYears != nil } }
        var headers = ["EYE", "DATE"]
        if ages { headers.append("AGE") }
        headers += ["AXIAL LENGTH", "CHANGE", "RATE/YR", "MEASUREMENT"]
        var rows: [[String]] = []
        for series in axial.series {
            for point in series.points {
                var row = [series.eye.label, point.date.description]
                if ages { row.append(point.ageYears.map(age) ?? "-") }
                row += [
                    MeasurementOutput.length(point.millimetres), point.change.map(AxialLengthTrend.signed) ?? "-",
                    point.ratePerYear.map(AxialLengthTrend.signed) ?? "-",
                    String(point.measurement.prefix(8)) + (point.cycloplegic ? " (cycloplegic)" : "")
                ]
                rows.append(row)
            }
        }
        var lines = ["axial length, in mm", "", Table.render(headers: headers, rows: rows), ""]
        for series in axial.series {
            let rate = series.ratePerYear.map {
                "\(AxialLengthTrend.rateText($0)) (\(Trend.fitName) over \(series.points.count) measurements)"
            }
            lines.append("\(series.eye.label): \(rate ?? "one date: no rate yet")")
        }
        return lines.joined(separator: "\n")
    }

    /// The visual-acuity table (issue 26): a row per acuity recorded and measurement, as written,
    /// its logMAR value and the change since the previous one of the same kind.
    static func text(_ acuity: VisualAcuityTrend) -> String {
        let ages = acuity.series.contains { $0.points.contains { $0.ageYears != nil } }
        var headers = ["ACUITY", "DATE"]
        if ages { headers.append("AGE") }
        headers += ["AS WRITTEN", "LOGMAR", "CHANGE", "MEASUREMENT"]
        var rows: [[String]] = []
        for series in acuity.series {
            for point in series.points {
                var row = [series.slot.label, point.date.description]
                if ages { row.append(point.ageYears.map(age) ?? "-") }
                row += [
                    point.acuity.written, point.acuity.logMARText,
                    point.change.map(VisualAcuityTrend.signed) ?? "-", String(point.measurement.prefix(8))
                ]
                rows.append(row)
            }
        }
        return [
            "visual acuity (cc: with correction, sc: without); logMAR: lower is better",
            "", Table.render(headers: headers, rows: rows)
        ].joined(separator: "\n")
    }

    static func json(_ acuity: VisualAcuityTrend) -> JSONValue {
        .array(
            acuity.series.map { series in
                .object([
                    ("acuity", .string(series.slot.rawValue)),
                    ("eye", series.slot.eye.map { .string($0.rawValue) } ?? .string("both")),
                    ("corrected", .bool(series.slot.corrected)),
                    (
                        "points",
                        .array(
                            series.points.map { p in
                                var point: [(String, JSONValue)] = [
                                    ("measurement", .string(p.measurement)), ("date", .string(p.date.description)),
                                    ("written", .string(p.acuity.written)),
                                    ("notation", .string(p.acuity.notation.rawValue)),
                                    ("logMAR", .number(p.acuity.logMARText))
                                ]
                                if let years = p.ageYears { point.append(("ageYears", .number(age(years)))) }
                                if let change = p.change { point.append(("change", .number(plain(change)))) }
                                return .object(point)
                            })
                    )
                ])
            })
    }

    /// `9.2`: years, one decimal.
    static func age(_ years: Double) -> String { String(format: "%.1f", years) }

    static func json(_ axial: AxialLengthTrend) -> JSONValue {
        .array(
            axial.series.map { series in
                var pairs: [(String, JSONValue)] = [("eye", .string(series.eye.rawValue))]
                if let rate = series.ratePerYear { pairs.append(("ratePerYear", .number(plain(rate)))) }
                pairs.append(
                    (
                        "points",
                        .array(
                            series.points.map { p in
                                var point: [(String, JSONValue)] = [
                                    ("measurement", .string(p.measurement)), ("date", .string(p.date.description)),
                                    ("millimetres", .number(MeasurementOutput.millimetres(p.millimetres))),
                                    ("cycloplegic", .bool(p.cycloplegic))
                                ]
                                if let years = p.ageYears { point.append(("ageYears", .number(age(years)))) }
                                if let change = p.change { point.append(("change", .number(plain(change)))) }
                                if let rate = p.ratePerYear { point.append(("ratePerYear", .number(plain(rate)))) }
                                return .object(point)
                            })
                    ))
                return .object(pairs)
            })
    }

    /// A JSON number with two decimals and no `+`.
    static func plain(_ value: Double) -> String {
        let text = AxialLengthTrend.signed(value)
        return text.hasPrefix("+") ? String(text.dropFirst()) : text
    }

    /// `-0.499` a year, `same day` when the previous one has the same issue date, `-` for the first.
    static func rate(_ point: Trend.Point) -> String {
        if let rate = point.ratePerYear { return Trend.text(rate) }
        return point.days == 0 ? "same day" : "-"
    }

    static func json(
        _ trend: Trend, patient: PatientSummary, axial: AxialLengthTrend? = nil, acuity: VisualAcuityTrend? = nil
    ) -> JSONValue {
        var who: [(String, JSONValue)] = [("id", .string(patient.id.hex)), ("name", .string(patient.name))]
        if let born = patient.birthDate { who.append(("birthDate", .string(born.description))) }
        let eyes: [JSONValue] = trend.series.map { series in
            var pairs: [(String, JSONValue)] = [
                ("eye", .string(series.eye.rawValue)), ("rateSummary", .string(series.rateSummary)),
                ("points", .array(series.points.map(point)))
            ]
            if let rate = series.ratePerYear { pairs.append(("ratePerYear", number(rate))) }
            return .object(pairs)
        }
        let skipped: [JSONValue] = trend.skipped.map { item in
            var pairs: [(String, JSONValue)] = [
                ("prescription", .string(item.prescription)), ("issued", .string(item.issued.description)),
                ("reason", .string(item.reason))
            ]
            if let eye = item.eye { pairs.append(("eye", .string(eye.rawValue))) }
            return .object(pairs)
        }
        return .object([
            ("schema", .string("rxvault/trend/v1")), ("patient", .object(who)), ("daysPerYear", .number("365.25")),
            ("rateMethod", .string("least-squares")), ("eyes", .array(eyes)), ("skipped", .array(skipped)),
            ("axialLength", json(axial ?? AxialLengthTrend([]))),
            ("visualAcuity", json(acuity ?? VisualAcuityTrend([])))
        ])
    }

    static func point(_ point: Trend.Point) -> JSONValue {
        var pairs: [(String, JSONValue)] = [
            ("prescription", .string(point.prescription)), ("issued", .string(point.issued.description)),
            ("kind", .string(point.kind.rawValue)), ("sphericalEquivalent", number(point.sphericalEquivalent)),
            ("cylinder", number(point.cylinder))
        ]
        if let change = point.change { pairs.append(("change", number(change))) }
        if let days = point.days { pairs.append(("days", .int(days))) }
        if let rate = point.ratePerYear { pairs.append(("ratePerYear", number(rate))) }
        if let vertex = point.vertexDistance {
            pairs.append(("vertexDistance", .number(vertex.short)))
            pairs.append(("vertexDistanceAssumed", .bool(point.vertexDistanceAssumed)))
        }
        if let design = point.myopiaControl { pairs.append(("myopiaControl", .string(design))) }
        return .object(pairs)
    }

    /// `Trend.text` as a JSON number (no leading `+`).
    static func number(_ value: Double) -> JSONValue {
        let text = Trend.text(value)
        return .number(text.hasPrefix("+") ? String(text.dropFirst()) : text)
    }
}
