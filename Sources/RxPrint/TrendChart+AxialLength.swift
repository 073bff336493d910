import CPoppler
import RxModel

/// The axial-length part of the trend chart (issue 26): each eye's axial length on a millimetre
/// scale at the right of the plot, over the same dates as the refraction, dotted, with triangle
/// markers, in the eye's colour (OD blue, OS orange, as the refraction), and its rate in mm per
/// year in the legend. A myopic eye lengthens as its refraction falls, so the two lines run in
/// opposite directions; the scales are independent.
extension TrendChart {
    /// The millimetre axis: a step of 0.1 mm up to a 1 mm range, 0.2 up to 2, else 0.5.
    struct MillimetreAxis {
        let low: Double, high: Double, step: Double

        init(low lowest: Double, high highest: Double) {
            let span = highest - lowest
            step = span <= 1 ? 0.1 : span <= 2 ? 0.2 : 0.5
            low = ((lowest - step / 2) / step).rounded(.down) * step
            high = ((highest + step / 2) / step).rounded(.up) * step
        }

        var ticks: [Double] {
            let count = Int(((high - low) / step).rounded())
            return (0...count).map { low + Double($0) * step }
        }
    }

    /// Draws the scale, the lines and the markers; returns the scale drawn. With `grid` (the
    /// plot's left edge), its ticks are also drawn across the plot: when there is no refraction,
    /// the millimetres are the chart's only scale.
    @discardableResult
    static func drawAxial(
        _ axial: AxialLengthTrend, on cr: OpaquePointer, x: (CalendarDate) -> Double, plotRight: Double,
        plotBottom: Double, grid: Double? = nil
    ) -> MillimetreAxis {
        let values = axial.series.flatMap { $0.points.map(\.millimetres.doubleValue) }
        let scale = MillimetreAxis(low: values.min() ?? 23, high: values.max() ?? 24)
        let y = { (value: Double) in
            plotBottom - (value - scale.low) / (scale.high - scale.low) * (plotBottom - plotTop)
        }
        PDFPrinter.setFont(cr, size: 13)
        for tick in scale.ticks {
            cairo_set_line_width(cr, 1)
            if let grid, tick > scale.low, tick < scale.high {
                PDFPrinter.grey(cr, 0.88)
                cairo_move_to(cr, grid, y(tick))
                cairo_line_to(cr, plotRight, y(tick))
                cairo_stroke(cr)
            }
            PDFPrinter.grey(cr, 0.25)
            cairo_move_to(cr, plotRight, y(tick))
            cairo_line_to(cr, plotRight + 6, y(tick))
            cairo_stroke(cr)
            PDFPrinter.show(cr, String(format: "%.1f", tick), x: plotRight + 10, y: y(tick) + 4.5)
        }
        Self.axisTitle(cr, "axial length (mm)", x: plotRight + 62, centreY: (plotTop + plotBottom) / 2, rightSide: true)
        for series in axial.series {
            let style = style(series.eye)
            cairo_set_source_rgb(cr, style.red, style.green, style.blue)
            cairo_set_line_width(cr, 2)
            cairo_set_dash(cr, [2, 5], 2, 0)
            polyline(cr, series.points.map { (x($0.date), y($0.millimetres.doubleValue)) })
            cairo_set_dash(cr, nil, 0, 0)
            for point in series.points {
                triangle(cr, style, x: x(point.date), y: y(point.millimetres.doubleValue))
                cairo_set_source_rgb(cr, style.red * 0.8, style.green * 0.8, style.blue * 0.8)
                PDFPrinter.setFont(cr, size: 11)
                let label = point.millimetres.twoDecimals
                PDFPrinter.show(
                    cr, label, x: x(point.date) + 9,
                    y: y(point.millimetres.doubleValue) + (series.eye == .right ? -8 : 16))
            }
        }
        return scale
    }

    /// Each eye's axial-length line with its rate, in the legend's second column.
    static func drawAxialLegend(_ axial: AxialLengthTrend, on cr: OpaquePointer, top: Double) {
        var rowY = top
        for series in axial.series {
            let style = style(series.eye)
            cairo_set_source_rgb(cr, style.red, style.green, style.blue)
            cairo_set_line_width(cr, 2)
            cairo_set_dash(cr, [2, 5], 2, 0)
            cairo_move_to(cr, 800, rowY - 5)
            cairo_line_to(cr, 856, rowY - 5)
            cairo_stroke(cr)
            cairo_set_dash(cr, nil, 0, 0)
            triangle(cr, style, x: 828, y: rowY - 5)
            PDFPrinter.grey(cr, 0)
            PDFPrinter.setFont(cr, size: 13, bold: true)
            PDFPrinter.show(cr, "\(series.eye.label) axial length", x: 870, y: rowY)
            PDFPrinter.setFont(cr, size: 13)
            let rate = series.ratePerYear.map(AxialLengthTrend.rateText) ?? "one date: no rate yet"
            PDFPrinter.show(cr, rate, x: 1010, y: rowY)
            rowY += 30
        }
    }

    /// A filled triangle: an axial-length point, apart from the refraction's circles and squares.
    static func triangle(_ cr: OpaquePointer, _ style: Style, x: Double, y: Double) {
        cairo_move_to(cr, x, y - 7)
        cairo_line_to(cr, x + 7, y + 5)
        cairo_line_to(cr, x - 7, y + 5)
        cairo_close_path(cr)
        cairo_set_source_rgb(cr, style.red, style.green, style.blue)
        cairo_fill(cr)
    }
}
