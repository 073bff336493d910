import CPoppler
import RxModel

/// Draws a `Trend` with cairo (`rxvault trend --out`): the spherical equivalent of each eye over
/// time, one line per eye, as a PNG, a PDF or an SVG.
///
/// Every number on the chart is one of the `Trend`'s, written by `Trend.text` (the table's
/// rounding): the value by each point, the rate per year in the legend. What tells the series
/// apart survives printing in grey: OD is a solid blue line with round markers, OS a dashed orange
/// line with square ones; glasses are filled markers, contacts hollow ones (at the spectacle plane,
/// as the legend says).
///
/// The chart is laid out on a 1200 × 800 canvas: a PNG of 1200 × 800 pixels, an SVG of
/// 1200 × 800 px, a PDF page of 720 × 480 pt (the same drawing at 0.6, 25.4 × 16.9 cm). Text is
/// DejaVu Sans through cairo's own text API, so the PDF's text can be searched and `pdftotext`
/// reads it; the PDF is an ordinary one that rxvault's attachment checker accepts.
public enum TrendChart {
    public enum Format: String, Sendable, CaseIterable {
        case png, pdf, svg

        /// The format a file name asks for by its extension (any case); nil for any other.
        public init?(fileName: String) {
            guard let dot = fileName.lastIndex(of: "."), !fileName[dot...].contains("/") else { return nil }
            self.init(rawValue: fileName[fileName.index(after: dot)...].lowercased())
        }
    }

    public static let width = 1200.0, height = 800.0
    /// The PDF page is the canvas at this scale (720 × 480 pt).
    public static let pdfScale = 0.6

    /// The chart of `trend` for `patient` (the title names them), in `format`.
    /// `axial`: the patient's axial lengths, drawn on a second scale (mm, at the right) over the
    /// same dates (issue 26); `acuity`: the visual acuities, in a strip under the plot on a logMAR
    /// scale; `birthDate`: when known, the age at each date tick under it.
    public static func render(
        _ trend: Trend, patient: String, format: Format, axial: AxialLengthTrend = AxialLengthTrend([]),
        acuity: VisualAcuityTrend = VisualAcuityTrend([]), birthDate: CalendarDate? = nil
    ) throws(PDFPrinter.Failure) -> [UInt8] {
        let sink = PDFPrinter.Sink()
        let closure = Unmanaged.passUnretained(sink).toOpaque()
        let write: cairo_write_func_t = { closure, data, length in
            guard let closure, let data else { return CAIRO_STATUS_WRITE_ERROR }
            Unmanaged<PDFPrinter.Sink>.fromOpaque(closure).takeUnretainedValue().bytes.append(
                contentsOf: UnsafeBufferPointer(start: data, count: Int(length)))
            return CAIRO_STATUS_SUCCESS
        }
        let surface: OpaquePointer?
        switch format {
        case .png: surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, Int32(width), Int32(height))
        case .pdf: surface = cairo_pdf_surface_create_for_stream(write, closure, width * pdfScale, height * pdfScale)
        case .svg: surface = cairo_svg_surface_create_for_stream(write, closure, width, height)
        }
        guard let surface, cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS else {
            if let surface { cairo_surface_destroy(surface) }
            throw PDFPrinter.Failure(description: "cannot start the \(format.rawValue) chart")
        }
        defer { cairo_surface_destroy(surface) }
        switch format {
        case .pdf:
            cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_TITLE, "Trend: \(patient)")
            cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_CREATOR, "rxvault")
        case .svg: cairo_svg_surface_set_document_unit(surface, CAIRO_SVG_UNIT_PX)
        case .png: break
        }
        guard let cr = cairo_create(surface) else { throw PDFPrinter.Failure(description: "cannot draw the chart") }
        if format == .pdf { cairo_scale(cr, pdfScale, pdfScale) }
        draw(trend, patient: patient, axial: axial, acuity: acuity, birthDate: birthDate, on: cr)
        if format == .pdf { cairo_show_page(cr) }
        let drawn = cairo_status(cr)
        cairo_destroy(cr)
        var finished = CAIRO_STATUS_SUCCESS
        if format == .png {
            cairo_surface_flush(surface)
            finished = cairo_surface_write_to_png_stream(surface, write, closure)
        } else {
            cairo_surface_finish(surface)
            finished = cairo_surface_status(surface)
        }
        guard drawn == CAIRO_STATUS_SUCCESS, finished == CAIRO_STATUS_SUCCESS else {
            let status = drawn != CAIRO_STATUS_SUCCESS ? drawn : finished
            throw PDFPrinter.Failure(
                description: "cairo could not write the chart: \(String(cString: cairo_status_to_string(status)))")
        }
        return sink.bytes
    }

    // MARK: Drawing

    /// The plot area on the canvas.
    static let plotLeft = 110.0, plotRight = 1160.0, plotTop = 120.0, plotBottom = 590.0

    struct Style {
        let red: Double, green: Double, blue: Double
        let dash: [Double]
        let squareMarker: Bool
    }

    static func style(_ eye: Eye) -> Style {
        eye == .right
            ? Style(red: 0.12, green: 0.38, blue: 0.74, dash: [], squareMarker: false)
            : Style(red: 0.85, green: 0.37, blue: 0.05, dash: [12, 7], squareMarker: true)
    }

    static func draw(
        _ trend: Trend, patient: String, axial: AxialLengthTrend, acuity: VisualAcuityTrend,
        birthDate: CalendarDate?, on cr: OpaquePointer
    ) {
        cairo_set_source_rgb(cr, 1, 1, 1)
        cairo_paint(cr)

        // The dates of every series: the measurements may start before the first prescription.
        // So may an ortho-k treatment, whose prescriptions give no point but are marked.
        let measured =
            axial.series.flatMap { $0.points.map(\.date) } + acuity.dates + trend.myopiaControlStarts.map(\.from)
        let allDates = (trend.dateRange.map { [$0.lowerBound, $0.upperBound] } ?? []) + measured
        let range = allDates.min().flatMap { first in allDates.max().map { first...$0 } }
        // Room at the right for the millimetre scale when there is one, and under the plot for
        // the acuity strip.
        let plotRight = axial.isEmpty ? Self.plotRight : Self.plotRight - 70
        let plotBottom = acuity.isEmpty ? Self.plotBottom : Self.plotBottom - acuityRoom
        // A patient with measurements and no prescription to plot (all removed, or only ortho-k):
        // no dioptre scale, legend or formula for a refraction that is not there.
        let refraction = !trend.points.isEmpty
        var shown = refraction ? ["spherical equivalent"] : []
        if !axial.isEmpty { shown.append("axial length") }
        if !acuity.isEmpty { shown.append("visual acuity") }
        let title =
            shown.count <= 1
            ? shown.first ?? "trend" : shown.dropLast().joined(separator: ", ") + " and " + shown.last!
        PDFPrinter.grey(cr, 0)
        PDFPrinter.setFont(cr, size: shown.count == 3 ? 22 : 26, bold: true)
        PDFPrinter.show(cr, "\(patient): \(title)", x: 40, y: 58)
        PDFPrinter.grey(cr, 0.35)
        PDFPrinter.setFont(cr, size: 15)
        let dates =
            range.map { $0.lowerBound == $0.upperBound ? "\($0.lowerBound)" : "\($0.lowerBound) to \($0.upperBound)" }
            ?? "no prescriptions"
        let subtitle =
            refraction
            ? "\(trend.prescriptions.count) prescription(s) · dioptres at the spectacle plane"
            : trend.skipped.isEmpty
                ? "measurements only: no prescription"
                : "\(Set(trend.skipped.map(\.prescription)).count) prescription(s), none with a refraction to plot"
        PDFPrinter.show(cr, "\(dates) · \(subtitle)", x: 40, y: 88)

        let values = trend.points.map(\.sphericalEquivalent)
        let axisY = YAxis(low: values.min() ?? -1, high: values.max() ?? 0)
        let axisX = XAxis(
            first: range?.lowerBound ?? CalendarDate(year: 2000, month: 1, day: 1)!,
            last: range?.upperBound ?? CalendarDate(year: 2001, month: 1, day: 1)!)
        let x = { (day: CalendarDate) in
            plotLeft + Double(axisX.start.days(until: day)) / Double(axisX.start.days(until: axisX.end))
                * (plotRight - plotLeft)
        }
        let y = { (value: Double) in
            plotBottom - (value - axisY.low) / (axisY.high - axisY.low) * (plotBottom - plotTop)
        }

        // Grid, axes and their labels.
        cairo_set_line_width(cr, 1)
        PDFPrinter.setFont(cr, size: 13)
        for tick in axisY.ticks where refraction {
            let at = y(tick)
            PDFPrinter.grey(cr, tick == 0 ? 0.55 : 0.88)
            cairo_move_to(cr, plotLeft, at)
            cairo_line_to(cr, plotRight, at)
            cairo_stroke(cr)
            PDFPrinter.grey(cr, 0.25)
            let label = Hundredths(raw: Int((tick * 100).rounded())).signedPower
            PDFPrinter.show(cr, label, x: plotLeft - 12 - PDFPrinter.advance(cr, label), y: at + 4.5)
        }
        for (day, label) in axisX.ticks {
            let at = x(day)
            PDFPrinter.grey(cr, 0.88)
            cairo_move_to(cr, at, plotTop)
            cairo_line_to(cr, at, plotBottom)
            cairo_stroke(cr)
            PDFPrinter.grey(cr, 0.25)
            PDFPrinter.show(cr, label, x: at - PDFPrinter.advance(cr, label) / 2, y: plotBottom + 24)
            // The child's age on the axis: what a myopia chart is read against.
            if let birthDate, birthDate <= day {
                let age = "age " + String(format: "%.1f", AxialLengthTrend.age(born: birthDate, on: day))
                PDFPrinter.show(cr, age, x: at - PDFPrinter.advance(cr, age) / 2, y: plotBottom + 42)
            }
        }
        let plot = Box(x: plotLeft, y: plotTop, width: plotRight - plotLeft, height: plotBottom - plotTop)
        frame(cr, plot)
        if refraction {
            Self.axisTitle(cr, "spherical equivalent (D)", x: 34, centreY: (plotTop + plotBottom) / 2, rightSide: false)
        }

        // One line per eye and its markers.
        for series in trend.series {
            let style = style(series.eye)
            cairo_set_source_rgb(cr, style.red, style.green, style.blue)
            cairo_set_line_width(cr, 2.5)
            cairo_set_dash(cr, style.dash, Int32(style.dash.count), 0)
            polyline(cr, series.points.map { (x($0.issued), y($0.sphericalEquivalent)) })
            cairo_set_dash(cr, nil, 0, 0)
            for point in series.points {
                marker(cr, style, x: x(point.issued), y: y(point.sphericalEquivalent), hollow: point.kind == .contacts)
            }
        }
        var taken: [Box] = trend.series.flatMap { series in
            series.points.map { Box(x: x($0.issued) - 8, y: y($0.sphericalEquivalent) - 8, width: 16, height: 16) }
        }
        // Where a myopia-control treatment began (`MiSight from 2023-03-01`): a dotted line, its
        // name at the top, so the rate before and after can be read against it.
        PDFPrinter.setFont(cr, size: 11)
        var labelY = plotTop + 14
        for start in trend.myopiaControlStarts {
            let at = x(start.from)
            PDFPrinter.grey(cr, 0.45)
            cairo_set_line_width(cr, 1)
            cairo_set_dash(cr, [2, 3], 2, 0)
            cairo_move_to(cr, at, plotTop)
            cairo_line_to(cr, at, plotBottom)
            cairo_stroke(cr)
            cairo_set_dash(cr, nil, 0, 0)
            let label = "\(start.design) from \(start.from)"
            let width = PDFPrinter.advance(cr, label)
            // Right of the line, else left of it when it would leave the plot.
            let left = at + 4 + width > plotRight ? at - 4 - width : at + 4
            PDFPrinter.show(cr, label, x: left, y: labelY)
            taken.append(Box(x: left, y: labelY - 11, width: width, height: 13))
            labelY += 14
        }
        // Each point's value beside it: OD's above, OS's below, else right or left of the marker
        // where that does not cover another value or marker (a crowded value is left to the table).
        PDFPrinter.setFont(cr, size: 12)
        for series in trend.series {
            let style = style(series.eye)
            for point in series.points {
                let px = x(point.issued)
                let py = y(point.sphericalEquivalent)
                let label = Trend.text(point.sphericalEquivalent)
                let width = PDFPrinter.advance(cr, label)
                let height = 12.0
                let above = Box(x: px - width / 2, y: py - 12 - height, width: width, height: height)
                let below = Box(x: px - width / 2, y: py + 12, width: width, height: height)
                let right = Box(x: px + 12, y: py - height / 2, width: width, height: height)
                let left = Box(x: px - 12 - width, y: py - height / 2, width: width, height: height)
                let candidates = series.eye == .right ? [above, below, right, left] : [below, above, right, left]
                guard let box = place(candidates, in: plot, clearOf: &taken) else { continue }
                cairo_set_source_rgb(cr, style.red * 0.8, style.green * 0.8, style.blue * 0.8)
                PDFPrinter.show(cr, label, x: box.x, y: box.y + height - 1.5)
            }
        }

        if !refraction && axial.isEmpty {
            // Acuities alone: the plot above the strip has nothing to scale; say why it is empty.
            PDFPrinter.grey(cr, 0.45)
            PDFPrinter.setFont(cr, size: 15)
            let note = "no refraction or axial length to plot: visual acuity below"
            PDFPrinter.show(
                cr, note, x: (plotLeft + plotRight - PDFPrinter.advance(cr, note)) / 2, y: (plotTop + plotBottom) / 2)
        }
        let axialScale =
            axial.isEmpty
            ? nil
            : drawAxial(
                axial, on: cr, x: x, plotRight: plotRight, plotBottom: plotBottom, grid: refraction ? nil : plotLeft)

        // The legend: each eye with its rate, then what the markers mean.
        var legendY = plotBottom + (birthDate == nil ? 68 : 76)
        if !acuity.isEmpty {
            let stripBottom = drawAcuity(
                acuity, on: cr, x: x, top: plotBottom + (birthDate == nil ? 36 : 52), plotRight: plotRight)
            drawAcuityLegend(on: cr, top: stripBottom + 22)
            legendY = stripBottom + 54
        }
        if axialScale != nil { drawAxialLegend(axial, on: cr, top: legendY) }
        PDFPrinter.setFont(cr, size: 15)
        for series in trend.series {
            let style = style(series.eye)
            cairo_set_source_rgb(cr, style.red, style.green, style.blue)
            cairo_set_line_width(cr, 2.5)
            cairo_set_dash(cr, style.dash, Int32(style.dash.count), 0)
            cairo_move_to(cr, 40, legendY - 5)
            cairo_line_to(cr, 96, legendY - 5)
            cairo_stroke(cr)
            cairo_set_dash(cr, nil, 0, 0)
            marker(cr, style, x: 68, y: legendY - 5, hollow: false)
            PDFPrinter.grey(cr, 0)
            PDFPrinter.setFont(cr, size: 15, bold: true)
            let name = series.eye == .right ? "OD (right eye)" : "OS (left eye)"
            PDFPrinter.show(cr, name, x: 110, y: legendY)
            PDFPrinter.setFont(cr, size: axial.isEmpty ? 15 : 12)
            PDFPrinter.show(cr, series.rateSummary, x: 245, y: legendY)
            legendY += 30
        }
        PDFPrinter.grey(cr, 0.4)
        PDFPrinter.setFont(cr, size: 12)
        let formula =
            "Spherical equivalent = sphere + cylinder/2. Contact lenses converted per meridian, F = Fc / (1 + d·Fc). "
        // Rates are drawn for the refraction and the axial length; acuities have changes only.
        let rate = refraction || !axial.isEmpty ? "Rate per year = change / (days / 365.25). " : ""
        PDFPrinter.show(cr, (refraction ? formula : "") + rate + "Made by rxvault.", x: 40, y: height - 22)
        guard refraction else { return }
        let neutral = Style(red: 0.3, green: 0.3, blue: 0.3, dash: [], squareMarker: false)
        marker(cr, neutral, x: 68, y: legendY - 5, hollow: false)
        PDFPrinter.grey(cr, 0)
        PDFPrinter.setFont(cr, size: 14)
        PDFPrinter.show(cr, "glasses", x: 85, y: legendY)
        marker(cr, neutral, x: 170, y: legendY - 5, hollow: true)
        PDFPrinter.grey(cr, 0)
        let vertex =
            trend.points.contains { $0.kind == .contacts && $0.vertexDistanceAssumed }
            ? " (\(Trend.assumedVertexDistance.short) mm vertex distance assumed where no glasses give one)" : ""
        PDFPrinter.show(cr, "contacts at spectacle plane\(vertex)", x: 187, y: legendY)
    }

    /// A rectangle on the canvas, to keep the values by the points apart.
    struct Box {
        let x: Double, y: Double, width: Double, height: Double

        func overlaps(_ other: Box) -> Bool {
            x < other.x + other.width && other.x < x + width && y < other.y + other.height && other.y < y + height
        }

        func contains(_ other: Box) -> Bool {
            other.x >= x && other.y >= y && other.x + other.width <= x + width && other.y + other.height <= y + height
        }
    }

    /// The first of `candidates` inside `area` and clear of everything `taken` (then taken too);
    /// nil when none is: a crowded label is left to the table.
    static func place(_ candidates: [Box], in area: Box, clearOf taken: inout [Box]) -> Box? {
        guard let box = candidates.first(where: { box in area.contains(box) && !taken.contains { $0.overlaps(box) } })
        else { return nil }
        taken.append(box)
        return box
    }

    /// A line through `points`, in the colour, width and dash set.
    static func polyline(_ cr: OpaquePointer, _ points: [(x: Double, y: Double)]) {
        for (i, point) in points.enumerated() {
            if i == 0 { cairo_move_to(cr, point.x, point.y) } else { cairo_line_to(cr, point.x, point.y) }
        }
        cairo_stroke(cr)
    }

    /// The dark frame around a plot area.
    static func frame(_ cr: OpaquePointer, _ area: Box) {
        PDFPrinter.grey(cr, 0.2)
        cairo_set_line_width(cr, 1.5)
        cairo_rectangle(cr, area.x, area.y, area.width, area.height)
        cairo_stroke(cr)
    }

    /// A vertical axis's title, centred on `centreY` at `x`: read bottom to top on the left axis,
    /// top to bottom on the right one (the axial length's millimetres), as charts set them.
    static func axisTitle(_ cr: OpaquePointer, _ title: String, x: Double, centreY: Double, rightSide: Bool) {
        cairo_save(cr)
        cairo_translate(cr, x, centreY)
        cairo_rotate(cr, rightSide ? Double.pi / 2 : -Double.pi / 2)
        PDFPrinter.setFont(cr, size: 14)
        PDFPrinter.show(cr, title, x: -PDFPrinter.advance(cr, title) / 2, y: 0)
        cairo_restore(cr)
    }

    /// A round (OD) or square (OS) marker, filled (glasses) or hollow (contacts).
    static func marker(_ cr: OpaquePointer, _ style: Style, x: Double, y: Double, hollow: Bool) {
        if style.squareMarker {
            cairo_rectangle(cr, x - 6.5, y - 6.5, 13, 13)
        } else {
            cairo_new_sub_path(cr)
            cairo_arc(cr, x, y, 7, 0, 2 * Double.pi)
        }
        if hollow {
            cairo_set_source_rgb(cr, 1, 1, 1)
            cairo_fill_preserve(cr)
        } else {
            cairo_set_source_rgb(cr, style.red, style.green, style.blue)
            cairo_fill_preserve(cr)
        }
        cairo_set_source_rgb(cr, style.red, style.green, style.blue)
        cairo_set_line_width(cr, 2.5)
        cairo_stroke(cr)
    }

    /// The dioptre axis: a step of 0.25 D for a range up to 1.5 D, 0.50 up to 4, 1.00 up to 10,
    /// else 2.00 (at most about a dozen lines), from the step at or below the lowest value less a
    /// quarter step to the one at or above the highest plus a quarter step.
    struct YAxis {
        let low: Double, high: Double, step: Double

        init(low lowest: Double, high highest: Double) {
            let span = highest - lowest
            step = span <= 1.5 ? 0.25 : span <= 4 ? 0.5 : span <= 10 ? 1 : 2
            low = ((lowest - step / 4) / step).rounded(.down) * step
            high = ((highest + step / 4) / step).rounded(.up) * step
        }

        var ticks: [Double] {
            let count = Int(((high - low) / step).rounded())
            return (0...count).map { low + Double($0) * step }
        }
    }

    /// The date axis: the dates drawn with a margin each side (half a year around a single date);
    /// ticks on 1 January of every year (or every 2nd, 5th...) over more than two and a half
    /// years, else on the first of every 1st, 2nd, 3rd or 6th month.
    struct XAxis {
        let start: CalendarDate, end: CalendarDate
        let ticks: [(CalendarDate, String)]

        init(first: CalendarDate, last: CalendarDate) {
            let span = first.days(until: last)
            let pad = span == 0 ? 183 : max(30, span / 20)
            start = first.adding(days: -pad) ?? first
            end = last.adding(days: pad) ?? last
            let years = Double(start.days(until: end)) / Trend.daysPerYear
            var ticks: [(CalendarDate, String)] = []
            if years > 2.5 {
                let every = [1, 2, 5, 10, 20, 50, 100].first { years / Double($0) <= 12 } ?? 200
                var year = start.year + 1
                while year % every != 0 { year += 1 }
                while let day = CalendarDate(year: year, month: 1, day: 1), day <= end {
                    ticks.append((day, String(year)))
                    year += every
                }
            } else {
                let months = years * 12
                let every = [1, 2, 3, 6].first { months / Double($0) <= 12 } ?? 12
                var (year, month) = (start.year, start.month + 1)
                if month > 12 { (year, month) = (year + 1, 1) }
                while (month - 1) % every != 0 {
                    month += 1
                    if month > 12 { (year, month) = (year + 1, 1) }
                }
                while let day = CalendarDate(year: year, month: month, day: 1), day <= end {
                    ticks.append((day, day.description.prefix(7).description))
                    month += every
                    if month > 12 { (year, month) = (year + 1, month - 12) }
                }
            }
            self.ticks = ticks
        }
    }
}
