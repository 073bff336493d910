import Foundation
import Testing

/// Measurements granted to clients (issue 26, format 6) through the binary: `grant --measurements`
/// seals a prescription's patient's measurements to the client, every change to them reaches it,
/// `--no-measurements` takes them out, and a client reads them with `measurement list --identity`
/// and through `serve` as FHIR Observations. A client without such a grant, or with a grant on
/// another patient, reads none; `check`, backups and restores hold throughout.
@Suite struct MeasurementGrantTests {
    /// Mia Chen (two prescriptions, two measurements), Leo Park (one prescription, one
    /// measurement); the app is granted Mia's newer prescription with her measurements, the shop
    /// Mia's older one without, and the app Leo's prescription without his.
    struct Household {
        let cli: CLIHarness
        let mia: String
        let miaOlder: String
        let leo: String
        let app: String
        let shop: String
    }

    func household() throws -> Household {
        let cli = try CLIHarness()
        try MeasurementTests().child(cli)
        let ids = try cli.json(try cli.run(["list", "--format", "json"]).stdout)["prescriptions"] as? [[String: Any]]
        let mia = try #require(ids?.first { $0["issued"] as? String == "2026-03-01" }?["id"] as? String)
        let miaOlder = try #require(ids?.first { $0["issued"] as? String == "2025-03-01" }?["id"] as? String)
        _ = try cli.add([
            "measurement", "add", "Mia Chen", "--date", "2025-03-01", "--axial-length-od", "23.80",
            "--axial-length-os", "23.71", "--device", "IOLMaster 700", "--va-od", "6/6"
        ])
        _ = try cli.add([
            "measurement", "add", "Mia Chen", "--date", "2026-03-01", "--axial-length-od", "24.10",
            "--axial-length-os", "23.98"
        ])
        let leo = try cli.add([
            "add", "glasses", "--patient", "Leo Park", "--prescriber", "Dr Ana Lee", "--issued", "2026-03-01",
            "--expires", "2028-03-01", "--od", "-0.50", "--os", "-0.50"
        ])
        _ = try cli.add(["measurement", "add", "Leo Park", "--date", "2026-03-01", "--axial-length-od", "23.00"])
        for name in ["app", "shop"] {
            let recipient = try cli.ageKeygen("\(name).key")
            #expect(try cli.run(["client", "add", name, "--recipient", recipient]).status == 0)
        }
        let granted = try cli.run(["grant", "app", mia, "--measurements"])
        #expect(granted.status == 0 && granted.stdout.contains("with the patient's measurements"), "\(granted)")
        #expect(try cli.run(["grant", "app", leo]).status == 0)
        #expect(try cli.run(["grant", "shop", miaOlder]).status == 0)
        return Household(
            cli: cli, mia: mia, miaOlder: miaOlder, leo: leo, app: cli.path("app.key"), shop: cli.path("shop.key"))
    }

    /// What `measurement list --identity` gives the client: "patient date OD OS" per measurement.
    func granted(_ cli: CLIHarness, _ identity: String, patient: String? = nil) throws -> [String] {
        let r = try cli.run(
            ["measurement", "list"] + (patient.map { [$0] } ?? []) + ["--format", "json", "--identity", identity])
        #expect(r.status == 0, "\(r)")
        return (try cli.json(r.stdout)["measurements"] as? [[String: Any]] ?? []).map { m in
            let name = (m["patient"] as? [String: Any])?["name"] as? String ?? "?"
            let od = (m["axialLengthOD"] as? NSNumber).map { String(format: "%.2f", $0.doubleValue) } ?? "-"
            let os = (m["axialLengthOS"] as? NSNumber).map { String(format: "%.2f", $0.doubleValue) } ?? "-"
            return "\(name) \(m["date"] as? String ?? "?") \(od) \(os)"
        }
    }

    @Test func aGrantWithMeasurementsCarriesEveryChangeUntilTakenOut() throws {
        let h = try household()
        let cli = h.cli
        #expect(
            try granted(cli, h.app) == ["Mia Chen 2025-03-01 23.80 23.71", "Mia Chen 2026-03-01 24.10 23.98"])
        // The shop's grant is on Mia too, without measurements; the app's grant on Leo is without.
        #expect(try granted(cli, h.shop).isEmpty)
        let none = try cli.run(["measurement", "list", "--identity", h.shop])
        #expect(none.status == 0 && none.stderr.contains("no measurements granted"), "\(none)")
        // A patient the client holds no measurements of is "not found", as one that does not exist.
        let leo = try cli.run(["measurement", "list", "Leo", "--identity", h.app])
        #expect(leo.status == 67 && leo.stderr.contains("no patient") && !leo.stdout.contains("23.00"), "\(leo)")
        #expect(try granted(cli, h.app, patient: "mia").count == 2)

        let grants =
            try cli.json(try cli.run(["grants", "--format", "json"]).stdout)["grants"] as? [[String: Any]] ?? []
        #expect(grants.count == 3)
        #expect(grants.filter { $0["measurements"] as? Bool == true }.map { $0["client"] as? String } == ["app"])
        let table = try cli.run(["grants"])
        #expect(table.status == 0 && table.stdout.contains("MEASUREMENTS"), "\(table)")

        // Added, edited, removed: each reaches the client at once.
        let third = try cli.add(["measurement", "add", "Mia Chen", "--date", "2026-06-01", "--axial-length-od", "24.30"]
        )
        #expect(try granted(cli, h.app).last == "Mia Chen 2026-06-01 24.30 -")
        #expect(try cli.run(["measurement", "edit", third, "--axial-length-os", "24.02"]).status == 0)
        #expect(try granted(cli, h.app).last == "Mia Chen 2026-06-01 24.30 24.02")
        #expect(try cli.run(["measurement", "remove", third, "--yes"]).status == 0)
        #expect(try granted(cli, h.app).count == 2)
        // A rename reaches the measurements' patient as it reaches the prescription's.
        #expect(try cli.run(["patient", "rename", "Mia Chen", "Mia Chen-Ross"]).status == 0)
        #expect(try granted(cli, h.app).first == "Mia Chen-Ross 2025-03-01 23.80 23.71")

        // Granting again without restating keeps them; --no-measurements takes them out.
        let again = try cli.run(["grant", "app", h.mia, "--expires", "2027-01-01"])
        #expect(again.status == 0 && !again.stdout.contains("measurements"), "\(again)")
        #expect(try granted(cli, h.app).count == 2)
        let out = try cli.run(["grant", "app", h.mia, "--no-measurements"])
        #expect(out.status == 0 && out.stdout.contains("now without the patient's measurements (was with)"), "\(out)")
        #expect(try granted(cli, h.app).isEmpty)
        // The prescription itself stays granted.
        let list = try cli.run(["list", "--format", "json", "--identity", h.app])
        #expect((try cli.json(list.stdout)["prescriptions"] as? [[String: Any]])?.count == 2, "\(list)")

        // The client's reads of measurements are in the owner's log, verified.
        let log = try cli.run(["log", "--format", "json"])
        #expect(log.status == 0 && log.stdout.contains("\"measurements\""), "\(log.stdout.suffix(2000))")
        let check = try cli.run(["check"])
        #expect(check.status == 0, "\(check)")
        let status = try cli.run(["status"])
        #expect(status.stdout.contains("format version 8") || status.stdout.contains("format: 7"), "\(status)")
    }

    /// Revoking the grant ends the measurements with it; removing the client, every grant. The
    /// file never shows a measurement in the clear. (A grant row put back from an older copy:
    /// RxVaultTests/FormatSixTests.)
    @Test func revokedGrantsAndRemovedClientsCarryNothing() throws {
        let h = try household()
        let cli = h.cli
        #expect(try cli.run(["revoke", "app", h.mia]).status == 0)
        #expect(try granted(cli, h.app).isEmpty)
        #expect(try cli.run(["grant", "app", h.mia, "--measurements"]).status == 0)
        #expect(try granted(cli, h.app).count == 2)
        #expect(try cli.run(["client", "remove", "app", "--yes"]).status == 0)
        let removed = try cli.run(["measurement", "list", "--identity", h.app])
        #expect(removed.status != 0 && !removed.stdout.contains("23.80"), "\(removed)")
        #expect(!cli.vaultFileBytes().contains("IOLMaster"))
        #expect(try cli.run(["check"]).status == 0)
    }

    @Test func backupsAndRestoresKeepTheGrantedMeasurements() throws {
        let h = try household()
        let cli = h.cli
        #expect(try cli.run(["backup", cli.path("b.age")]).status == 0)
        #expect(try cli.run(["backup", "verify", cli.path("b.age")]).status == 0)
        let restored = cli.path("restored.rxv")
        #expect(try cli.run(["restore", cli.path("b.age"), "--to", restored]).status == 0)
        let r = try cli.run(["measurement", "list", "--format", "json", "--identity", h.app, "--vault", restored])
        #expect(r.status == 0 && r.stdout.contains("24.1"), "\(r)")
        #expect(try cli.run(["check", "--vault", restored]).status == 0)
    }

    /// `serve`: /Observation gives the app the Observations of its grant with measurements (FHIR
    /// R4, validated), one by id, filtered by patient; the shop gets none, and an id of another
    /// client's is "not found".
    @Test func theAPIServesGrantedMeasurementsAsObservations() throws {
        let h = try household()
        let cli = h.cli
        let server = try ServerProcess(cli)
        defer { _ = server.stop() }
        let app = try server.token(identity: h.app)
        let shop = try server.token(identity: h.shop)

        let search = try server.curl("GET", "/Observation", token: app)
        #expect(search.status == 200, "\(search.body)")
        // Two visits: axial length of each eye twice, and one acuity.
        #expect(search.json["total"] as? Int == 5, "\(search.body)")
        #expect(
            try ServerProcess.validateFHIR(search.body, in: cli.directory).types == "Bundle,"
                + Array(repeating: "Observation", count: 5).joined(separator: ","))
        let entries = search.json["entry"] as? [[String: Any]] ?? []
        let resource = try #require(entries.first?["resource"] as? [String: Any])
        let id = try #require(resource["id"] as? String)
        let subject = try #require((resource["subject"] as? [String: Any])?["reference"] as? String)
        // The same Patient the app's VisionPrescription names.
        let rx = try server.curl("GET", "/VisionPrescription?patient=\(subject)", token: app)
        #expect(rx.json["total"] as? Int == 1, "\(rx.body)")

        let one = try server.curl("GET", "/Observation/\(id)", token: app)
        #expect(one.status == 200 && one.body.contains("\"Observation\""), "\(one.body)")
        #expect(try ServerProcess.validateFHIR(one.body, in: cli.directory).types == "Observation")
        #expect(try server.curl("GET", "/Observation?patient=\(subject)", token: app).json["total"] as? Int == 5)
        #expect(try server.curl("GET", "/Observation?patient=Patient/nobody", token: app).json["total"] as? Int == 0)
        #expect(try server.curl("GET", "/Observation?colour=red", token: app).status == 400)

        #expect(try server.curl("GET", "/Observation", token: shop).json["total"] as? Int == 0)
        #expect(try server.curl("GET", "/Observation/\(id)", token: shop).status == 404)
        #expect(try server.curl("GET", "/Observation", token: nil).status == 401)

        // A change the owner makes counts at the next request; taking the measurements out, too.
        #expect(
            try cli.run(["measurement", "add", "Mia Chen", "--date", "2026-06-01", "--axial-length-od", "24.30"]).status
                == 0)
        #expect(try server.curl("GET", "/Observation", token: app).json["total"] as? Int == 6)
        #expect(try cli.run(["grant", "app", h.mia, "--no-measurements"]).status == 0)
        #expect(try server.curl("GET", "/Observation", token: app).json["total"] as? Int == 0)
        #expect(try server.curl("GET", "/Observation/\(id)", token: app).status == 404)
    }
}
