/// A patient's visual acuities over time, one series per acuity recorded (`AcuitySlot`: each eye
/// and both, with and without correction), beside the refraction and axial-length trends (issue
/// 26). Each point keeps the acuity as written and its logMAR value, the scale a chart plots
/// (lower is better: 0.00 is 20/20 or 6/6, 0.30 is 20/40 or 6/12, one line of a logMAR chart is
/// 0.10), so notations mixed over the years (Snellen at one practice, decimal at another) line up.
///
/// There is no rate per year: an acuity changes in steps of a chart line when the correction
/// falls behind the eye, not steadily as an axial length grows. Its change since the series'
/// previous point is given, in logMAR (a positive change is worse sight).
public struct VisualAcuityTrend: Sendable, Equatable {
    public struct Point: Sendable, Equatable {
        public let measurement: String
        public let date: CalendarDate
        public let acuity: VisualAcuity
        public let ageYears: Double?
        /// logMAR since the series' previous point (nil for the first), between the two values as
        /// shown (two decimals), so a reader subtracting them gets the same.
        public let change: Double?
    }

    public struct Series: Sendable, Equatable {
        public let slot: AcuitySlot
        public let points: [Point]
    }

    /// In `AcuitySlot` order: OD, OS, OU with correction, then the same without.
    public let series: [Series]
    public var isEmpty: Bool { series.isEmpty }

    /// `eyes`: the eyes asked for; both eyes' acuities (OU) only when both are.
    public init(_ measurements: [EyeMeasurement], eyes: Set<Eye> = Set(Eye.allCases), birthDate: CalendarDate? = nil) {
        var series: [Series] = []
        for slot in AcuitySlot.allCases {
            if let eye = slot.eye {
                guard eyes.contains(eye) else { continue }
            } else {
                guard eyes.count == Eye.allCases.count else { continue }
            }
            let readings = measurements.compactMap { m in m.acuity[slot].map { (m, $0) } }
                .sorted { ($0.0.date, $0.0.id) < ($1.0.date, $1.0.id) }
            guard !readings.isEmpty else { continue }
            var points: [Point] = []
            for (m, acuity) in readings {
                points.append(
                    Point(
                        measurement: m.id, date: m.date, acuity: acuity,
                        ageYears: birthDate.map { AxialLengthTrend.age(born: $0, on: m.date) },
                        change: points.last.map { Self.hundredths(acuity.logMAR) - Self.hundredths($0.acuity.logMAR) }
                    ))
            }
            series.append(Series(slot: slot, points: points))
        }
        self.series = series
    }

    /// A logMAR value as shown, to the hundredth (`VisualAcuity.logMARText`).
    static func hundredths(_ logMAR: Double) -> Double { (logMAR * 100).rounded() / 100 }

    /// Every date with an acuity, for a chart's date axis.
    public var dates: [CalendarDate] { series.flatMap { $0.points.map(\.date) } }

    /// `+0.10`, `-0.20`, `0.00`: a logMAR change, signed, two decimals.
    public static func signed(_ value: Double) -> String { AxialLengthTrend.signed(value) }
}
