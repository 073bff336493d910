import Foundation
import Testing

/// `rxvault trend` through the binary: a child's myopia over five yearly prescriptions against
/// hand-computed spherical equivalents and rates, contacts compared at the spectacle plane, the
/// chart as PNG (decoded: size and ink), PDF (its text, page size, rxvault's own attachment
/// checker) and SVG (parsed), and the errors.
@Suite struct TrendTests {
    /// Mia Chen, born 2012-05-01: glasses every 1 September from 2019 to 2023.
    /// The dates are 366 (2020 has a 29 February), 365, 365 and 365 days apart: 1461 days in all,
    /// t = 0, 1.002053, 2.001369, 3.000684 and 4 years of 365.25 days.
    static let child: [(issued: String, od: String, os: String)] = [
        ("2019-09-01", "-0.50", "-0.25"), // SE OD -0.50, OS -0.25
        ("2020-09-01", "-0.75 -0.50 x180", "-0.50"), // SE OD -0.75 - 0.25 = -1.00, OS -0.50
        ("2021-09-01", "-1.25 -0.50 x180", "-1.00 -0.25 x170"), // OD -1.50, OS -1.00 - 0.125 = -1.125
        ("2022-09-01", "-1.50 -0.50 x180", "-1.25"), // OD -1.75, OS -1.25
        ("2023-09-01", "-1.75 -0.50 x180", "-1.50 -0.25 x170") // OD -2.00, OS -1.625
    ]

    /// A vault holding the child's five glasses prescriptions; returns their ids, oldest first.
    static func childVault() throws -> (CLIHarness, [String]) {
        let cli = try CLIHarness()
        try cli.initVault()
        var ids: [String] = []
        for rx in child {
            let expires = String(Int(rx.issued.prefix(4))! + 2) + rx.issued.dropFirst(4)
            ids.append(
                try cli.add([
                    "add", "glasses", "--patient", "Mia Chen", "--dob", "2012-05-01", "--prescriber", "Dr Ana Lee",
                    "--issued", rx.issued, "--expires", expires, "--od", rx.od, "--os", rx.os
                ]))
        }
        return (cli, ids)
    }

    /// The table row of `eye` issued on `day`.
    static func row(_ table: String, _ eye: String, _ day: String) -> [String] {
        table.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }.first {
            $0.first == eye && $0.dropFirst().first == day
        } ?? []
    }

    @Test func aChildsMyopiaHasTheHandComputedValuesAndRates() throws {
        let (cli, ids) = try Self.childVault()
        let table = try cli.run(["trend", "mia chen"])
        #expect(table.status == 0, "\(table)")
        let text = table.stdout
        // EYE ISSUED KIND SE CYL CHANGE RATE/YR PRESCRIPTION
        #expect(
            Self.row(text, "OD", "2019-09-01") == ["OD", "2019-09-01", "glasses", "-0.50", "0.00", "-", "-", ids[0]],
            "\(text)")
        // -0.50 over 366 days: -0.50 x 365.25 / 366 = -0.49898 D/yr.
        #expect(
            Self.row(text, "OD", "2020-09-01") == [
                "OD", "2020-09-01", "glasses", "-1.00", "-0.50", "-0.50", "-0.499", ids[1]
            ], "\(text)")
        // -0.50 over 365 days: -0.50034, printed -0.50.
        #expect(
            Self.row(text, "OD", "2021-09-01") == [
                "OD", "2021-09-01", "glasses", "-1.50", "-0.50", "-0.50", "-0.50", ids[2]
            ], "\(text)")
        // -0.25 over 365 days: -0.25017.
        #expect(
            Self.row(text, "OD", "2023-09-01") == [
                "OD", "2023-09-01", "glasses", "-2.00", "-0.50", "-0.25", "-0.25", ids[4]
            ], "\(text)")
        // OS -1.00 -0.25 x170: SE -1.125; from -0.50 over 365 days: -0.625 x 365.25 / 365 = -0.62543.
        #expect(
            Self.row(text, "OS", "2021-09-01") == [
                "OS", "2021-09-01", "glasses", "-1.125", "-0.25", "-0.625", "-0.625", ids[2]
            ], "\(text)")
        // OS -0.25 over 366 days: -0.24949.
        #expect(Self.row(text, "OS", "2020-09-01")[6] == "-0.249", "\(text)")
        // Least squares, OD: mean t 2.000821, mean SE -1.35, sum (t - mean)(SE - mean) = -3.749760,
        // sum (t - mean)^2 = 9.997265: slope -0.375079 D/yr. OS: mean SE -0.95, sum of products
        // -3.499521: slope -0.350048 D/yr.
        #expect(
            text.contains("OD: -0.375 D/yr (least squares over 5 prescriptions, 2019-09-01 to 2023-09-01)"),
            "\(text)")
        #expect(
            text.contains("OS: -0.35 D/yr (least squares over 5 prescriptions, 2019-09-01 to 2023-09-01)"),
            "\(text)")
        #expect(
            text.split(separator: "\n").prefix(2).joined(separator: " ").contains(
                "Mia Chen (born 2012-05-01): spherical equivalent"),
            "\(text)")

        // The same numbers as JSON.
        let json = try cli.run(["trend", "Mia Chen", "--format", "json"])
        #expect(json.status == 0, "\(json)")
        let document = try cli.json(json.stdout)
        #expect(document["schema"] as? String == "rxvault/trend/v1")
        #expect((document["patient"] as? [String: Any])?["name"] as? String == "Mia Chen")
        let eyes = try #require(document["eyes"] as? [[String: Any]])
        #expect(eyes.map { $0["eye"] as? String } == ["right", "left"])
        #expect(eyes.map { $0["ratePerYear"] as? Double } == [-0.375, -0.35])
        let points = try #require(eyes[0]["points"] as? [[String: Any]])
        #expect(points.map { $0["sphericalEquivalent"] as? Double } == [-0.5, -1.0, -1.5, -1.75, -2.0])
        #expect(points.map { $0["days"] as? Int } == [nil, 366, 365, 365, 365])
        #expect(points.map { $0["ratePerYear"] as? Double } == [nil, -0.499, -0.5, -0.25, -0.25])
        #expect((points[1]["prescription"] as? String)?.hasPrefix(ids[1]) == true)

        // --eye left: only OS.
        let left = try cli.run(["trend", "Mia Chen", "--eye", "os", "--format", "json"])
        #expect(
            try (cli.json(left.stdout)["eyes"] as? [[String: Any]])?.map { $0["eye"] as? String } == ["left"], "\(left)"
        )

        // An owner read, like show: no audit entry.
        let log = try cli.json(try cli.run(["log", "--format", "json"]).stdout)
        #expect((log["entries"] as? [[String: Any]])?.contains { $0["action"] as? String == "export" } == false)
    }

    @Test func contactsAreComparedAtTheSpectaclePlane() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        _ = try cli.add([
            "add", "contacts", "--patient", "Noor Haddad", "--prescriber", "Dr Ana Lee", "--issued", "2025-01-10",
            "--expires", "2026-01-10", "--od", "-5.00 -1.00 x180 bc 8.6 dia 14.2", "--os", "-4.00 bc 8.6 dia 14.2",
            "--brand", "Daily Clear"
        ])
        let trend = try cli.run(["trend", "Noor Haddad"])
        #expect(trend.status == 0, "\(trend)")
        // No glasses give a vertex distance: 12 mm. F = Fc / (1 + 0.012 Fc) per meridian:
        // OD -5.00 / 0.940 = -5.319149 and -6.00 / 0.928 = -6.465517: SE -5.892333, cylinder -1.146368.
        // OS -4.00 / 0.952 = -4.201681.
        #expect(
            Self.row(trend.stdout, "OD", "2025-01-10").prefix(7) == [
                "OD", "2025-01-10", "contacts", "-5.892", "-1.146", "-", "-"
            ], "\(trend)")
        #expect(
            Self.row(trend.stdout, "OS", "2025-01-10").prefix(5) == ["OS", "2025-01-10", "contacts", "-4.202", "0.00"],
            "\(trend)")
        #expect(
            trend.stdout.contains("12 mm (assumed)") && trend.stdout.contains("one prescription: no rate yet"),
            "\(trend)")

        // Glasses a year later at 14 mm: the contacts are converted at 14 mm now.
        // OS -4.00 / (1 - 0.014 x 4) = -4.00 / 0.944 = -4.237288; then glasses -4.25: change -0.012712.
        _ = try cli.add([
            "add", "glasses", "--patient", "Noor Haddad", "--prescriber", "Dr Ana Lee", "--issued", "2026-01-10",
            "--expires", "2028-01-10", "--od", "-5.50", "--os", "-4.25", "--vertex", "14"
        ])
        let json = try cli.json(try cli.run(["trend", "Noor Haddad", "--eye", "left", "--format", "json"]).stdout)
        let points = try #require((json["eyes"] as? [[String: Any]])?.first?["points"] as? [[String: Any]])
        #expect(points.map { $0["kind"] as? String } == ["contacts", "glasses"])
        #expect(points[0]["sphericalEquivalent"] as? Double == -4.237 && points[0]["vertexDistance"] as? Double == 14)
        #expect(points[0]["vertexDistanceAssumed"] as? Bool == false)
        #expect(points[1]["change"] as? Double == -0.013 && points[1]["days"] as? Int == 365)
    }

    /// Width, height, pixels not white, and pixels of OD's blue and OS's orange in a PNG, decoded
    /// by a small zlib-based reader (CRCs checked, every filter type undone).
    static func decodePNG(_ cli: CLIHarness, _ path: String) throws -> [String: Int] {
        let script = """
            import sys, zlib, struct, json
            data = open(sys.argv[1], 'rb').read()
            assert data[:8] == b'\\x89PNG\\r\\n\\x1a\\n', 'not a PNG'
            pos, idat, ihdr = 8, b'', None
            while pos < len(data):
                n, = struct.unpack('>I', data[pos:pos + 4]); kind = data[pos + 4:pos + 8]; body = data[pos + 8:pos + 8 + n]
                assert zlib.crc32(kind + body) == struct.unpack('>I', data[pos + 8 + n:pos + 12 + n])[0], 'bad CRC'
                if kind == b'IHDR': ihdr = struct.unpack('>IIBBBBB', body)
                elif kind == b'IDAT': idat += body
                pos += 12 + n
                if kind == b'IEND': break
            w, h, depth, ctype = ihdr[:4]
            assert depth == 8 and ctype in (2, 6), ihdr
            bpp = 3 if ctype == 2 else 4
            raw = zlib.decompress(idat); stride = w * bpp
            assert len(raw) == h * (stride + 1), 'short image data'
            prev = bytearray(stride); i = 0; inked = blue = orange = 0
            for y in range(h):
                f = raw[i]; line = bytearray(raw[i + 1:i + 1 + stride]); i += 1 + stride
                if f == 1:
                    for x in range(bpp, stride): line[x] = (line[x] + line[x - bpp]) & 255
                elif f == 2:
                    for x in range(stride): line[x] = (line[x] + prev[x]) & 255
                elif f == 3:
                    for x in range(stride): line[x] = (line[x] + ((line[x - bpp] if x >= bpp else 0) + prev[x]) // 2) & 255
                elif f == 4:
                    for x in range(stride):
                        a = line[x - bpp] if x >= bpp else 0; b = prev[x]; c = prev[x - bpp] if x >= bpp else 0
                        p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                        line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
                else: assert f == 0, f
                for x in range(0, stride, bpp):
                    r, g, b = line[x], line[x + 1], line[x + 2]
                    if r < 250 or g < 250 or b < 250: inked += 1
                    if b > r + 80 and b > 120: blue += 1
                    if r > b + 120 and r > 150: orange += 1
                prev = line
            print(json.dumps({'width': w, 'height': h, 'inked': inked, 'blue': blue, 'orange': orange}))
            """
        let decoded = try CLIHarness.spawn(
            ["/usr/bin/env", "python3", "-c", script, path], environment: cli.environment, directory: cli.directory)
        #expect(decoded.status == 0, "\(decoded)")
        return try #require(try JSONSerialization.jsonObject(with: Data(decoded.stdout.utf8)) as? [String: Int])
    }

    @Test func theChartIsAPNGPDFOrSVGOfTheSameNumbers() throws {
        let (cli, ids) = try Self.childVault()
        let png = cli.path("trend.png")
        let drawn = try cli.run(["trend", "Mia Chen", "--out", png])
        #expect(drawn.status == 0 && drawn.stdout.isEmpty, "\(drawn)")
        #expect(drawn.stderr.contains("drew the trend of 5 prescription(s) of Mia Chen to \(png)"), "\(drawn)")
        let mode = try FileManager.default.attributesOfItem(atPath: png)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let pixels = try Self.decodePNG(cli, png)
        #expect(pixels["width"] == 1200 && pixels["height"] == 800, "\(pixels)")
        // Not blank: axes, grid, text, and both eyes' lines in their colours.
        #expect((pixels["inked"] ?? 0) > 20_000, "\(pixels)")
        #expect((pixels["blue"] ?? 0) > 1_000 && (pixels["orange"] ?? 0) > 1_000, "\(pixels)")

        // Again without --force: refused, as export --out is.
        let again = try cli.run(["trend", "Mia Chen", "--out", png])
        #expect(again.status == 73 && again.stderr.contains("already exists"), "\(again)")
        #expect(try cli.run(["trend", "Mia Chen", "--out", png, "--force"]).status == 0)

        // PDF: the rates of the legend and the values by the points are the table's; 720 x 480 pt.
        let pdf = cli.path("trend.pdf")
        #expect(try cli.run(["trend", "Mia Chen", "--out", pdf]).status == 0)
        let text = try PrintTests.poppler(cli, ["pdftotext", "-layout", pdf, "-"])
        #expect(text.status == 0, "\(text)")
        for value in [
            "Mia Chen: spherical equivalent", "2019-09-01 to 2023-09-01",
            "-0.375 D/yr (least squares over 5 prescriptions, 2019-09-01 to 2023-09-01)",
            "-0.35 D/yr (least squares over 5 prescriptions", "OD (right eye)", "OS (left eye)",
            "-1.125", "-1.625", "-1.75", "contacts at spectacle plane", "2020", "2023"
        ] {
            #expect(text.stdout.contains(value), "the PDF shows \(value):\n\(text.stdout)")
        }
        let info = try PrintTests.poppler(cli, ["pdfinfo", pdf])
        let fields = info.stdout.split(separator: "\n").map {
            $0.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
        }
        #expect(fields.contains(["Page size", "720 x 480 pts"]) && fields.contains(["Pages", "1"]), "\(info)")
        // rxvault's own checker accepts it as an attachment.
        let attached = try cli.run(["attach", ids[4], pdf])
        #expect(attached.status == 0, "\(attached)")

        // SVG: well-formed XML, 1200 x 800 px, with drawing in it.
        let svg = cli.path("trend.SVG")
        #expect(try cli.run(["trend", "Mia Chen", "--out", svg]).status == 0)
        let parsed = try CLIHarness.spawn(
            [
                "/usr/bin/env", "python3", "-c",
                """
                import sys, json, xml.etree.ElementTree as ET
                root = ET.parse(sys.argv[1]).getroot()
                print(json.dumps({'tag': root.tag, 'width': root.get('width'), 'height': root.get('height'),
                                  'paths': sum(1 for e in root.iter() if e.tag.endswith('}path'))}))
                """, svg
            ], environment: cli.environment, directory: cli.directory)
        #expect(parsed.status == 0, "\(parsed)")
        let svgInfo = try cli.json(parsed.stdout)
        #expect(svgInfo["tag"] as? String == "{http://www.w3.org/2000/svg}svg", "\(svgInfo)")
        #expect(svgInfo["width"] as? String == "1200px" && svgInfo["height"] as? String == "800px", "\(svgInfo)")
        #expect((svgInfo["paths"] as? Int ?? 0) > 50, "\(svgInfo)")

        // Each chart is in the audit log as an export of the prescriptions drawn.
        let log = try cli.json(try cli.run(["log", "--format", "json"]).stdout)
        let exports = (log["entries"] as? [[String: Any]] ?? []).filter { $0["action"] as? String == "export" }
        #expect(
            exports.compactMap { $0["detail"] as? String } == [
                "trend chart (png)", "trend chart (png)", "trend chart (pdf)", "trend chart (svg)"
            ], "\(exports)")
        #expect((exports.first?["prescriptions"] as? [String])?.count == 5, "\(exports)")
    }

    /// A patient with measurements and no prescription left (removed) gets a chart of what there
    /// is: the millimetre scale alone, no dioptre axis, no glasses and contacts legend, no formula
    /// of the spherical equivalent; and the message counts the measurements drawn.
    @Test func aChartOfMeasurementsAloneHasNoDioptreScale() throws {
        let cli = try CLIHarness(today: "2026-06-01")
        try cli.initVault()
        let rx = try cli.add([
            "add", "glasses", "--patient", "Kid One", "--dob", "2016-05-01", "--prescriber", "Dr C",
            "--issued", "2025-01-01", "--expires", "2027-01-01", "--od", "-1.00", "--os", "-1.25"
        ])
        for (date, od, os) in [("2025-03-01", "24.12", "24.05"), ("2026-03-01", "24.32", "24.25")] {
            _ = try cli.add([
                "measurement", "add", "Kid One", "--date", date, "--axial-length-od", od, "--axial-length-os", os
            ])
        }
        #expect(try cli.run(["remove", rx, "--yes"]).status == 0)
        let pdf = cli.path("kid.pdf")
        let drawn = try cli.run(["trend", "Kid One", "--out", pdf])
        #expect(drawn.status == 0 && drawn.stderr.contains("drew the trend of 2 measurements of Kid One"), "\(drawn)")
        let text = try PrintTests.poppler(cli, ["pdftotext", "-layout", pdf, "-"]).stdout
        #expect(
            text.contains("Kid One: axial length") && text.contains("measurements only: no prescription"), "\(text)")
        #expect(text.contains("24.32") && text.contains("axial length (mm)"), "\(text)")
        for absent in ["spherical equivalent", "dioptres", "glasses", "contacts at spectacle plane", "Spherical"] {
            #expect(!text.contains(absent), "\(absent) in a chart without a refraction: \(text)")
        }
    }

    @Test func errorsSayWhatIsWrong() throws {
        let (cli, ids) = try Self.childVault()
        // A file name that is not .png, .pdf or .svg: a usage error before anything is read.
        let jpeg = try cli.run(["trend", "Mia Chen", "--out", cli.path("trend.jpg")])
        #expect(jpeg.status == 64 && jpeg.stderr.contains("the chart is drawn as .png, .pdf or .svg"), "\(jpeg)")
        #expect(!FileManager.default.fileExists(atPath: cli.path("trend.jpg")))
        let stdout = try cli.run(["trend", "Mia Chen", "--out", "-"])
        #expect(stdout.status == 64, "\(stdout)")
        let both = try cli.run(["trend", "Mia Chen", "--out", cli.path("t.png"), "--format", "json"])
        #expect(both.status == 64, "\(both)")

        let unknown = try cli.run(["trend", "Nobody Known"])
        #expect(unknown.status == 67 && unknown.stderr.contains("Nobody Known"), "\(unknown)")

        // Two patients whose names differ only by date of birth: ambiguous, listed.
        _ = try cli.add([
            "add", "glasses", "--patient", "Mia Chen", "--dob", "1950-01-01", "--prescriber", "Dr Ana Lee",
            "--issued", "2024-01-01", "--expires", "2026-01-01", "--od", "-1.00"
        ])
        let ambiguous = try cli.run(["trend", "Mia Chen"])
        #expect(ambiguous.status == 64 && ambiguous.stderr.contains("born 1950-01-01"), "\(ambiguous)")

        // A patient whose only prescription was removed: no trend (exit 67), and no chart file.
        _ = try cli.add([
            "add", "glasses", "--patient", "Ravi Patel", "--prescriber", "Dr Ana Lee", "--issued", "2024-01-01",
            "--expires", "2026-01-01", "--od", "-1.00"
        ])
        let patients = try #require(
            try cli.json(try cli.run(["patients", "--format", "json"]).stdout)["patients"] as? [[String: Any]])
        let ravi = try #require(patients.first { $0["name"] as? String == "Ravi Patel" })
        let raviRx = try #require((ravi["prescriptions"] as? [[String: Any]])?.first?["id"] as? String)
        #expect(try cli.run(["remove", raviRx, "--yes"]).status == 0)
        let none = try cli.run(["trend", "Ravi Patel", "--out", cli.path("ravi.png")])
        #expect(none.status == 67 && none.stderr.contains("has no prescription with a lens power"), "\(none)")
        #expect(!FileManager.default.fileExists(atPath: cli.path("ravi.png")))

        // A client identity: trend is the owner's.
        let key = cli.path("shop.key")
        #expect(try cli.run(["client", "add", "shop", "--generate", "--identity-out", key]).status == 0)
        #expect(try cli.run(["grant", "shop", ids[0]]).status == 0)
        let client = try cli.run(
            ["--identity", key, "trend", "Mia Chen"], environment: ["RXVAULT_PASSPHRASE_FILE": nil])
        #expect(client.status == 64 && client.stderr.contains("trend needs the owner's passphrase"), "\(client)")
    }
}
