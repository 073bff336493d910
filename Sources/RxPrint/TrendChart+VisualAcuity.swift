import CPoppler
import RxModel

/// The visual-acuity strip of the trend chart (issue 26): under the refraction plot and over the
/// same dates, each acuity recorded on a logMAR scale with better sight up (0.00 is 20/20 or 6/6),
/// as acuity charts are read. Each eye in its colour (OD blue, OS orange, both eyes grey), solid
/// with the patient's correction and dotted without, each point labelled as written, so Snellen,
/// decimal and logMAR records of different visits line up on one scale.
extension TrendChart {
    /// The strip's height on the canvas, and the room taken from the refraction plot for it.
    static let acuityStripHeight = 90.0
    static let acuityRoom = 130.0

    /// The logMAR axis: whole tenths (a chart line each) with half a line of room above and below
    /// the values, at least 0.30 tall; a step of 0.1 up to 0.5, 0.2 up to 1.0, else 0.5.
    struct LogMARAxis {
        let best: Double, worst: Double, step: Double

        init(best lowest: Double, worst highest: Double) {
            var low = lowest - 0.05
            var high = highest + 0.05
            if high - low < 0.3 {
                let middle = (low + high) / 2
                (low, high) = (middle - 0.15, middle + 0.15)
            }
            step = high - low <= 0.5 ? 0.1 : high - low <= 1.0 ? 0.2 : 0.5
            best = (low / step).rounded(.down) * step
            worst = (high / step).rounded(.up) * step
        }

        var ticks: [Double] {
            let count = Int(((worst - best) / step).rounded())
            return (0...count).map { best + Double($0) * step }
        }
    }

    static func acuityStyle(_ slot: AcuitySlot) -> (red: Double, green: Double, blue: Double) {
        guard let eye = slot.eye else { return (0.35, 0.35, 0.35) }
        let eyeStyle = style(eye)
        return (eyeStyle.red, eyeStyle.green, eyeStyle.blue)
    }

    /// Draws the strip from `top` (its scale, frame, lines, markers and labels); returns its bottom.
    static func drawAcuity(
        _ acuity: VisualAcuityTrend, on cr: OpaquePointer, x: (CalendarDate) -> Double, top: Double,
        plotRight: Double
    ) -> Double {
        let bottom = top + acuityStripHeight
        let values = acuity.series.flatMap { $0.points.map(\.acuity.logMAR) }
        let scale = LogMARAxis(best: values.min() ?? 0, worst: values.max() ?? 0.3)
        let y = { (logMAR: Double) in top + (logMAR - scale.best) / (scale.worst - scale.best) * (bottom - top) }
        cairo_set_line_width(cr, 1)
        PDFPrinter.setFont(cr, size: 12)
        for tick in scale.ticks {
            PDFPrinter.grey(cr, 0.9)
            cairo_move_to(cr, plotLeft, y(tick))
            cairo_line_to(cr, plotRight, y(tick))
            cairo_stroke(cr)
            PDFPrinter.grey(cr, 0.25)
            let rounded = (tick * 100).rounded() / 100
            let label = String(format: "%.1f", rounded == 0 ? 0 : rounded)
            PDFPrinter.show(cr, label, x: plotLeft - 12 - PDFPrinter.advance(cr, label), y: y(tick) + 4)
        }
        let strip = Box(x: plotLeft, y: top, width: plotRight - plotLeft, height: bottom - top)
        frame(cr, strip)
        Self.axisTitle(cr, "VA logMAR", x: 34, centreY: (top + bottom) / 2, rightSide: false)
        for series in acuity.series {
            let colour = acuityStyle(series.slot)
            cairo_set_source_rgb(cr, colour.red, colour.green, colour.blue)
            cairo_set_line_width(cr, 2)
            if !series.slot.corrected { cairo_set_dash(cr, [2, 4], 2, 0) }
            polyline(cr, series.points.map { (x($0.date), y($0.acuity.logMAR)) })
            cairo_set_dash(cr, nil, 0, 0)
            for point in series.points {
                cairo_set_source_rgb(cr, colour.red, colour.green, colour.blue)
                cairo_new_sub_path(cr)
                cairo_arc(
                    cr, x(point.date), y(point.acuity.logMAR), series.slot.corrected ? 4.5 : 3.5, 0, 2 * Double.pi)
                cairo_fill(cr)
            }
        }
        // Each point labelled as written, inside the strip and clear of the other labels and
        // points; one with no room is left to the table.
        PDFPrinter.setFont(cr, size: 10)
        var taken: [Box] = acuity.series.flatMap { series in
            series.points.map { Box(x: x($0.date) - 4, y: y($0.acuity.logMAR) - 4, width: 8, height: 8) }
        }
        for series in acuity.series {
            let colour = acuityStyle(series.slot)
            for point in series.points {
                let (px, py) = (x(point.date), y(point.acuity.logMAR))
                let label = "\(series.slot.eyeLabel) \(point.acuity.written)"
                let (width, height) = (PDFPrinter.advance(cr, label), 10.0)
                // Above or below the point first (the series' own line runs through its sides),
                // then beside it.
                let above = Box(x: px - width / 2, y: py - 6 - height, width: width, height: height)
                let below = Box(x: px - width / 2, y: py + 6, width: width, height: height)
                let candidates = [
                    series.slot.corrected ? above : below, series.slot.corrected ? below : above,
                    Box(x: px + 7, y: py - height / 2, width: width, height: height),
                    Box(x: px - 7 - width, y: py - height / 2, width: width, height: height)
                ]
                guard let box = place(candidates, in: strip, clearOf: &taken) else { continue }
                cairo_set_source_rgb(cr, colour.red * 0.8, colour.green * 0.8, colour.blue * 0.8)
                PDFPrinter.show(cr, label, x: box.x, y: box.y + height - 1.5)
            }
        }
        return bottom
    }

    /// One legend line for the strip: what its lines and colours mean.
    static func drawAcuityLegend(on cr: OpaquePointer, top: Double) {
        PDFPrinter.grey(cr, 0.2)
        PDFPrinter.setFont(cr, size: 12)
        PDFPrinter.show(
            cr,
            "Visual acuity, logMAR (better up; 0.0 = 20/20, 6/6): solid with correction, dotted without; "
                + "OD blue, OS orange, both eyes grey.", x: 40, y: top)
    }
}
