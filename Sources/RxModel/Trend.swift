/// How a patient's eyes change over time: per eye, the spherical equivalent (and cylinder) of each
/// prescription in date order, the change per year between consecutive ones, and one overall rate.
/// For children this is how myopia progression is followed.
///
/// One calculation serves every output: `rxvault trend`'s table and JSON print these numbers and the
/// chart (`RxPrint.TrendChart`) draws them, all through `Trend.text` for the same rounding.
///
/// - Glasses and contacts are compared at one plane, the spectacle plane: a contact lens's power
///   (at the cornea) is converted per principal meridian with F = Fc / (1 + d·Fc) before the
///   spherical equivalent is taken. Contact-lens prescriptions carry no vertex distance, so d is
///   the one written on the patient's glasses prescription nearest in time (for that eye), else
///   12 mm (`assumedVertexDistance`; domain.md: usually 12-14 mm), and each point says which.
/// - An ortho-k (orthokeratology) lens's labelled power (near plano; the reshaping is in its
///   back-surface curves) is not the eye's refraction, and gives no point (issue 26: one +0.50
///   ortho-k record turned a -0.60 D/yr progressor into -0.13 D/yr); it is listed in `skipped`.
///   So is an eye whose lens's brand names an ortho-k design when the lens type does not say
///   otherwise. A soft myopia-control lens (MiSight) is corrected for distance by its labelled
///   power and counts, its point marked (`MyopiaControlDesign`).
/// - A balance lens has no prescribed power and gives no point for its eye. A prescription whose
///   status is `entered-in-error` (it was never the patient's) or `draft` (not final), from a FHIR
///   source or `edit --status`, gives none either. Each is listed in `skipped`. A cancelled one
///   was measured and stays.
/// - The rate between consecutive points is the change divided by the days between their issue
///   dates over 365.25; two prescriptions of the same day have a change but no rate. The overall
///   rate is the least-squares slope over every point of the eye (dioptres per year against the
///   same years), so one noisy measurement weighs less than with first-to-last; it needs two
///   different dates.
public struct Trend: Sendable, Equatable {
    /// Days in a year, for every rate.
    public static let daysPerYear = 365.25
    /// The vertex distance assumed for a contact lens when no glasses prescription of the eye gives one.
    public static let assumedVertexDistance = Hundredths(12)
    /// How the overall rate is found, as the outputs name it.
    public static let fitName = "least squares"

    /// One prescription's value for one eye.
    public struct Point: Sendable, Equatable {
        /// The prescription's id (32 hex digits).
        public let prescription: String
        public let issued: CalendarDate
        public let kind: PrescriptionKind
        /// At the spectacle plane, in dioptres: S + C/2 for glasses, the mean of the converted
        /// meridians for contacts.
        public let sphericalEquivalent: Double
        /// The cylinder at the spectacle plane in minus-cylinder form (0 for none), in dioptres.
        public let cylinder: Double
        /// Contacts: the vertex distance (mm) used to bring the lens to the spectacle plane, and
        /// whether it was assumed. Nil for glasses.
        public let vertexDistance: Hundredths?
        public let vertexDistanceAssumed: Bool
        /// Since the previous point of the eye (nil for the first): the change of spherical
        /// equivalent, the days between, and the change per year (nil on the same day).
        public let change: Double?
        public let days: Int?
        public let ratePerYear: Double?
        /// A soft myopia-control design the contact lens is (`MiSight`): counted, and marked so
        /// the chart's reader sees when treatment began. Nil for any other lens.
        public let myopiaControl: String?
    }

    /// The least-squares line through an eye's points: SE = intercept + slope × years since `origin`.
    public struct Fit: Sendable, Equatable {
        /// Dioptres per year.
        public let slope: Double
        public let intercept: Double
        public let origin: CalendarDate

        /// The line's value on `day`.
        public func value(on day: CalendarDate) -> Double {
            intercept + slope * Double(origin.days(until: day)) / Trend.daysPerYear
        }
    }

    public struct Series: Sendable, Equatable {
        public let eye: Eye
        /// By issue date, glasses before contacts on the same day, then by id.
        public let points: [Point]
        /// Nil with fewer than two different dates.
        public let fit: Fit?
        /// The overall rate (dioptres per year), `fit`'s slope.
        public var ratePerYear: Double? { fit?.slope }

        /// The overall rate as the table and the chart's legend say it:
        /// `-0.31 D/yr (least squares over 5 prescriptions, 2019-09-01 to 2023-09-01)`.
        public var rateSummary: String {
            guard let fit, let first = points.first?.issued, let last = points.last?.issued else {
                return points.count == 1
                    ? "one prescription: no rate yet" : "every prescription on one day: no rate yet"
            }
            return
                "\(Trend.text(fit.slope)) D/yr (\(Trend.fitName) over \(points.count) prescriptions, \(first) to \(last))"
        }
    }

    /// A prescription (and eye, when only one of its eyes is left out) that gives no point, and why.
    public struct Skipped: Sendable, Equatable {
        public let prescription: String
        public let issued: CalendarDate
        public let eye: Eye?
        public let reason: String
        /// The ortho-k design a lens left out for its reshaping power is (`Paragon CRT`, `ortho-k`).
        public let myopiaControl: String?
    }

    /// Each myopia-control design's first prescription, oldest first: where the chart marks the
    /// start of a treatment (a soft lens's counted points and an ortho-k lens's left-out ones alike).
    public var myopiaControlStarts: [(design: String, from: CalendarDate)] {
        var first: [String: CalendarDate] = [:]
        let dated =
            points.compactMap { p in p.myopiaControl.map { ($0, p.issued) } }
            + skipped.compactMap { s in s.myopiaControl.map { ($0, s.issued) } }
        for (design, day) in dated where first[design].map({ day < $0 }) ?? true { first[design] = day }
        return first.map { (design: $0.key, from: $0.value) }.sorted { ($0.from, $0.design) < ($1.from, $1.design) }
    }

    /// The eyes with at least one point, right first.
    public let series: [Series]
    public let skipped: [Skipped]

    /// Every point, both eyes.
    public var points: [Point] { series.flatMap(\.points) }
    public var isEmpty: Bool { series.isEmpty }
    /// The first and last issue dates drawn.
    public var dateRange: ClosedRange<CalendarDate>? {
        let dates = points.map(\.issued)
        guard let first = dates.min(), let last = dates.max() else { return nil }
        return first...last
    }
    /// The prescriptions with a point, in date order, each once.
    public var prescriptions: [String] {
        var seen = Set<String>()
        return series.flatMap(\.points).sorted { Self.order($0, $1) }.map(\.prescription).filter {
            seen.insert($0).inserted
        }
    }
    public func series(_ eye: Eye) -> Series? { series.first { $0.eye == eye } }

    /// The trend of `prescriptions` (one patient's, each at its current version), for `eyes`.
    public init(_ prescriptions: [(id: String, prescription: Prescription)], eyes: Set<Eye> = Set(Eye.allCases)) {
        var skipped: [Skipped] = []
        var counted: [(id: String, prescription: Prescription)] = []
        for item in prescriptions {
            // Recorded by mistake, or not final: not a measurement of the eye. A cancelled one was
            // measured (withdrawn for another reason) and stays.
            let status = item.prescription.recordStatus
            if status == .enteredInError || status == .draft {
                skipped.append(
                    Skipped(
                        prescription: item.id, issued: item.prescription.issued, eye: nil,
                        reason: "its status is \(status.rawValue)", myopiaControl: nil))
            } else if item.prescription.kind == .contacts, item.prescription.contactLensType == .orthoK {
                // An ortho-k lens's labelled power (near plano) is not the eye's refraction: one
                // +0.50 ortho-k record would halve a myopic child's progression.
                let names = Eye.allCases.compactMap { MyopiaControlDesign(item.prescription, eye: $0)?.name }
                let design = names.first { $0 != "ortho-k" } ?? "ortho-k"
                skipped.append(
                    Skipped(
                        prescription: item.id, issued: item.prescription.issued, eye: nil,
                        reason: Self.orthoKReason(design), myopiaControl: design))
            } else {
                counted.append(item)
            }
        }
        var series: [Series] = []
        for eye in Eye.allCases where eyes.contains(eye) {
            var points: [Point] = []
            for (id, rx) in counted {
                guard let lens = rx[eye] else { continue }
                if lens.balance {
                    skipped.append(
                        Skipped(
                            prescription: id, issued: rx.issued, eye: eye,
                            reason: "a balance lens has no prescribed power", myopiaControl: nil))
                    continue
                }
                // One eye's brand naming an ortho-k design, without the lens type (an import's
                // source may have none): that eye only (ortho-k is fitted to one eye too).
                let design = MyopiaControlDesign(rx, eye: eye)
                if case .cornealReshaping(let name)? = design {
                    skipped.append(
                        Skipped(
                            prescription: id, issued: rx.issued, eye: eye, reason: Self.orthoKReason(name),
                            myopiaControl: name))
                    continue
                }
                points.append(
                    Self.point(id: id, rx: rx, eye: eye, lens: lens, myopiaControl: design?.name, among: counted))
            }
            points.sort { Self.order($0, $1) }
            guard !points.isEmpty else { continue }
            series.append(Series(eye: eye, points: Self.withChanges(points), fit: Self.fit(points)))
        }
        self.series = series
        self.skipped = skipped.sorted {
            ($0.issued, $0.prescription, $0.eye?.rawValue ?? "") < ($1.issued, $1.prescription, $1.eye?.rawValue ?? "")
        }
    }

    static func order(_ a: Point, _ b: Point) -> Bool {
        (a.issued, a.kind == .glasses ? 0 : 1, a.prescription) < (b.issued, b.kind == .glasses ? 0 : 1, b.prescription)
    }

    /// The point of one eye of one prescription, at the spectacle plane; `myopiaControl` names
    /// the soft myopia-control design of a contact lens (`MyopiaControlDesign`).
    static func point(
        id: String, rx: Prescription, eye: Eye, lens: LensSpecification, myopiaControl: String?,
        among all: [(id: String, prescription: Prescription)]
    ) -> Point {
        let sphere = lens.sphere.doubleValue
        let cylinder = lens.cylinder?.doubleValue ?? 0
        guard rx.kind == .contacts else {
            return Point(
                prescription: id, issued: rx.issued, kind: rx.kind, sphericalEquivalent: lens.sphericalEquivalent,
                cylinder: -abs(cylinder), vertexDistance: nil, vertexDistanceAssumed: false, change: nil, days: nil,
                ratePerYear: nil, myopiaControl: nil)
        }
        let written = nearestVertexDistance(eye: eye, on: rx.issued, among: all)
        let vertex = written ?? assumedVertexDistance
        // Each principal meridian (sphere, sphere + cylinder) from the cornea to the spectacle plane.
        let first = VertexConversion.spectaclePower(sphere, vertexDistance: vertex.doubleValue)
        let second = VertexConversion.spectaclePower(sphere + cylinder, vertexDistance: vertex.doubleValue)
        return Point(
            prescription: id, issued: rx.issued, kind: .contacts, sphericalEquivalent: (first + second) / 2,
            cylinder: -abs(second - first), vertexDistance: vertex, vertexDistanceAssumed: written == nil,
            change: nil, days: nil, ratePerYear: nil, myopiaControl: myopiaControl)
    }

    /// The vertex distance written for `eye` on the glasses prescription issued nearest `day`
    /// (the earlier one when two are as near), among those that write one.
    static func nearestVertexDistance(
        eye: Eye, on day: CalendarDate, among all: [(id: String, prescription: Prescription)]
    ) -> Hundredths? {
        let candidates = all.compactMap { _, rx -> (Int, Int, Hundredths)? in
            guard rx.kind == .glasses, let lens = rx[eye], !lens.balance, let vertex = lens.vertexDistance else {
                return nil
            }
            let gap = day.days(until: rx.issued)
            return (abs(gap), gap > 0 ? 1 : 0, vertex)
        }
        return candidates.min { ($0.0, $0.1, $0.2.raw) < ($1.0, $1.1, $1.2.raw) }?.2
    }

    /// `ortho-k, not a refraction (Paragon CRT)`: short, as a line of the table says it at 80 columns.
    static func orthoKReason(_ design: String) -> String {
        "ortho-k, not a refraction" + (design == "ortho-k" ? "" : " (\(design))")
    }

    /// The points with their change and rate since the one before.
    static func withChanges(_ points: [Point]) -> [Point] {
        points.indices.map { i in
            let p = points[i]
            guard i > 0 else { return p }
            let previous = points[i - 1]
            let change = p.sphericalEquivalent - previous.sphericalEquivalent
            let days = previous.issued.days(until: p.issued)
            return Point(
                prescription: p.prescription, issued: p.issued, kind: p.kind,
                sphericalEquivalent: p.sphericalEquivalent,
                cylinder: p.cylinder, vertexDistance: p.vertexDistance, vertexDistanceAssumed: p.vertexDistanceAssumed,
                change: change, days: days, ratePerYear: days > 0 ? change / (Double(days) / daysPerYear) : nil,
                myopiaControl: p.myopiaControl)
        }
    }

    /// The least-squares line of SE against years since the first point; nil without two dates.
    static func fit(_ points: [Point]) -> Fit? {
        guard let origin = points.first?.issued, Set(points.map(\.issued)).count >= 2 else { return nil }
        let line = leastSquares(
            points.map { Double(origin.days(until: $0.issued)) / daysPerYear }, points.map(\.sphericalEquivalent))
        return Fit(slope: line.slope, intercept: line.intercept, origin: origin)
    }

    /// The ordinary least-squares line through (xs, ys); the xs must not all be equal. Shared by
    /// the refraction's fit and the axial length's rate (`AxialLengthTrend`).
    static func leastSquares(_ xs: [Double], _ ys: [Double]) -> (slope: Double, intercept: Double) {
        let n = Double(xs.count)
        let meanX = xs.reduce(0, +) / n
        let meanY = ys.reduce(0, +) / n
        var covariance = 0.0
        var variance = 0.0
        for (x, y) in zip(xs, ys) {
            covariance += (x - meanX) * (y - meanY)
            variance += (x - meanX) * (x - meanX)
        }
        let slope = covariance / variance
        return (slope, meanY - slope * meanX)
    }

    // MARK: - Text

    /// A value in dioptres as every output prints it: rounded to the thousandth (half away from
    /// zero), signed, two decimals, three when the thousandth is not 0 (`-2.625`, `-5.319`,
    /// `+0.50`, `0.00`).
    public static func text(_ value: Double) -> String {
        let thousandths = Int((value * 1000).rounded())
        let sign = thousandths > 0 ? "+" : thousandths < 0 ? "-" : ""
        let magnitude = abs(thousandths)
        var fraction = String(magnitude % 1000).padding(toLength: 3, leftPadding: true)
        if fraction.hasSuffix("0") { fraction.removeLast() }
        return "\(sign)\(magnitude / 1000).\(fraction)"
    }

    /// `-0.50 D/yr`, or nil without a rate.
    public static func rateText(_ rate: Double?) -> String? { rate.map { text($0) + " D/yr" } }
}
