import Foundation

/// A patient's axial length over time, per eye, beside the refraction trend (`Trend`): the
/// International Myopia Institute follows myopia control by axial elongation in mm per year,
/// which ortho-k and other myopia-control lenses do not mask as they mask refraction.
///
/// Each point carries the change and the rate since the eye's previous measurement; the overall
/// rate is the least-squares slope through all of the eye's points (mm per year, 365.25 days).
/// With the patient's birth date, each point also has the age at the measurement (in years).
public struct AxialLengthTrend: Sendable, Equatable {
    public struct Point: Sendable, Equatable {
        public let measurement: String
        public let date: CalendarDate
        public let millimetres: Hundredths
        public let ageYears: Double?
        public let cycloplegic: Bool
        public let device: String?
        /// Since the eye's previous point (nil for the first, or on the same day).
        public let change: Double?
        public let ratePerYear: Double?
    }

    public struct Series: Sendable, Equatable {
        public let eye: Eye
        public let points: [Point]
        /// The least-squares slope in mm per year; nil without two dates.
        public let ratePerYear: Double?
    }

    public let series: [Series]
    public var isEmpty: Bool { series.isEmpty }
    public func series(_ eye: Eye) -> Series? { series.first { $0.eye == eye } }

    public init(_ measurements: [EyeMeasurement], eyes: Set<Eye> = Set(Eye.allCases), birthDate: CalendarDate? = nil) {
        var series: [Series] = []
        for eye in Eye.allCases where eyes.contains(eye) {
            let readings = measurements.compactMap { m in m.axialLength(eye).map { (m, $0) } }
                .sorted { ($0.0.date, $0.0.id) < ($1.0.date, $1.0.id) }
            guard !readings.isEmpty else { continue }
            var points: [Point] = []
            for (i, (m, value)) in readings.enumerated() {
                var change: Double?
                var rate: Double?
                if i > 0 {
                    let previous = readings[i - 1]
                    change = (value.raw - previous.1.raw).doubleValueOfHundredths
                    let days = previous.0.date.days(until: m.date)
                    rate = days > 0 ? change! / (Double(days) / Trend.daysPerYear) : nil
                }
                points.append(
                    Point(
                        measurement: m.id, date: m.date, millimetres: value,
                        ageYears: birthDate.map { Self.age(born: $0, on: m.date) }, cycloplegic: m.cycloplegic,
                        device: m.device, change: change, ratePerYear: rate))
            }
            series.append(Series(eye: eye, points: points, ratePerYear: Self.slope(points)))
        }
        self.series = series
    }

    /// Years between `born` and `day`, as a decimal (365.25-day years): a chart's age axis.
    public static func age(born: CalendarDate, on day: CalendarDate) -> Double {
        Double(born.days(until: day)) / Trend.daysPerYear
    }

    static func slope(_ points: [Point]) -> Double? {
        guard let origin = points.first?.date, Set(points.map(\.date)).count >= 2 else { return nil }
        return Trend.leastSquares(
            points.map { Double(origin.days(until: $0.date)) / Trend.daysPerYear },
            points.map(\.millimetres.doubleValue)
        ).slope
    }

    /// `+0.25 mm/yr`: signed, two decimals.
    public static func rateText(_ rate: Double) -> String { signed(rate) + " mm/yr" }

    /// `+0.12`, `-0.03`, `0.00`.
    public static func signed(_ value: Double) -> String {
        let hundredths = Int((value * 100).rounded())
        return (hundredths > 0 ? "+" : hundredths < 0 ? "-" : "")
            + String(format: "%.2f", Double(abs(hundredths)) / 100)
    }
}

extension Int {
    fileprivate var doubleValueOfHundredths: Double { Double(self) / 100 }
}
