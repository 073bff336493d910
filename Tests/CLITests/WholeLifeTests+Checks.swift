import Foundation
import RxTestSupport
import Testing

/// What a life of the vault is held against after its steps (WholeLifeTests): the model's view
/// against the vault's (the owner's list, each client's reads, validity), the export, import,
/// backup and restore round trips, and reading the CLI's outputs.
extension Life {
    // MARK: The model's view against the vault's

    func verify(deep: Bool) throws {
        try Life.expect(try cli.run(["check"]), 0, "check")
        // The owner's list: every prescription, each withdrawn one by its status, none valid
        // that is withdrawn or expired.
        let owner = try listed(["list"])
        try Life.same(Set(owner.map { String($0.id.prefix(8)) }), Set(model.ids), "the owner's list")
        for item in owner {
            let rx = model.prescriptions[String(item.id.prefix(8))]!
            try expectStatus(item.status, rx, "list: \(item.id.prefix(8))", item: item, among: owner)
        }
        let measured = try measurements(of: cli)
        guard measured == model.measurements else {
            throw Mismatch(
                message:
                    "measurement list: \(measured.sorted { $0.key < $1.key }), the model says \(model.measurements.sorted { $0.key < $1.key })"
            )
        }
        let valid = try listed(["query", "--valid-on", Model.today])
        try Life.same(
            Set(valid.map { String($0.id.prefix(8)) }), Set(model.ids.filter { model.prescriptions[$0]!.validToday }),
            "query --valid-on \(Model.today)")
        // Every client, through the CLI with its identity and through the API.
        let owned = try ownerMeasurements()
        for name in model.clientNames {
            let identity = model.clients[name]!
            // The measurements of the patients of its grants made with --measurements, as the owner
            // holds them now (every change re-seals those grants).
            var patients: Set<String> = []
            for id in model.grantedMeasurements(name) { if let p = try patient(of: id) { patients.insert(p.id) } }
            let expected = owned.filter { patients.contains($0.value.patient) }.mapValues(\.axial)
            let measured = try measurements(of: cli, identity: identity)
            try Life.same(
                Set(measured.map { "\($0.key) \($0.value)" }), Set(expected.map { "\($0.key) \($0.value)" }),
                "\(name)'s measurements with its identity")
            let read = try listed(["--identity", identity, "list"])
            try Life.same(
                Set(read.map { String($0.id.prefix(8)) }), model.granted(name), "\(name)'s reads with its identity")
            for item in read {
                try expectStatus(
                    item.status, model.prescriptions[String(item.id.prefix(8))]!, "\(name) reads \(item.id.prefix(8))",
                    item: item, among: read)
            }
            if let server, let token = model.tokens[name] {
                let answer = try RawHTTP.get(server.socket, "/VisionPrescription?_count=200", token: token)
                guard answer.status == 200 else {
                    throw Mismatch(message: "API search by \(name): \(answer.status) \(answer.body.prefix(300))")
                }
                let resources = (answer.json["entry"] as? [[String: Any]] ?? []).compactMap {
                    $0["resource"] as? [String: Any]
                }
                var served: Set<String> = []
                for resource in resources {
                    let ids = (resource["identifier"] as? [[String: Any]] ?? []).compactMap { $0["value"] as? String }
                        .filter { $0.count == 32 && $0.allSatisfy(\.isHexDigit) }
                    guard let id = ids.first.map({ String($0.prefix(8)) }), let rx = model.prescriptions[id] else {
                        throw Mismatch(
                            message: "API: \(name) was served a prescription the model does not have: \(ids)")
                    }
                    served.insert(id)
                    guard resource["status"] as? String == rx.status else {
                        throw Mismatch(
                            message:
                                "API: \(name) reads \(id) with status \(resource["status"] ?? "none"), the model says \(rx.status)"
                        )
                    }
                }
                try Life.same(served, model.granted(name), "\(name)'s reads over the API")
                let observations = try RawHTTP.get(server.socket, "/Observation", token: token)
                guard observations.status == 200 else {
                    throw Mismatch(message: "API Observation search by \(name): \(observations.status)")
                }
                var observed: Set<String> = []
                for entry in observations.json["entry"] as? [[String: Any]] ?? [] {
                    let resource = entry["resource"] as? [String: Any]
                    for identifier in resource?["identifier"] as? [[String: Any]] ?? [] {
                        if let value = identifier["value"] as? String { observed.insert(String(value.prefix(8))) }
                    }
                }
                try Life.same(observed, Set(expected.keys), "\(name)'s measurements over the API")
            }
        }
        if let server {
            for (name, token) in model.removedTokens {
                let answer = try RawHTTP.get(server.socket, "/VisionPrescription", token: token)
                guard answer.status == 401 else {
                    throw Mismatch(message: "API: removed client \(name) answered \(answer.status)")
                }
            }
        }
        if deep { try roundTrips() }
    }

    /// Withdrawn: its code; else expired by its date, or valid/expiring. Never valid when the
    /// model says withdrawn or expired. Superseded (the model does not follow patients or kinds)
    /// only for an active one, and only by a prescription the same reader sees that the model
    /// holds active and issued on a later day.
    func expectStatus(
        _ shown: String, _ rx: Model.Prescription, _ context: String, item: Listed? = nil, among: [Listed] = []
    ) throws {
        if shown == "superseded", rx.status == "active", let newer = item?.supersededBy,
            among.contains(where: { $0.id == newer }),
            let other = model.prescriptions[String(newer.prefix(8))], other.status == "active", other.issued > rx.issued
        {
            return
        }
        let expected: Set<String> =
            rx.status != "active" ? [rx.status] : rx.expired ? ["expired"] : ["valid", "expiring"]
        guard expected.contains(shown) else {
            throw Mismatch(message: "\(context): shown as \(shown), the model says \(expected.sorted())")
        }
    }

    /// Export, import into a new vault, export again: the same prescriptions. Backup, verify and
    /// restore on a fresh HOME: the same export.
    func roundTrips() throws {
        roundTrip += 1
        let stepNumber = "\(self.stepNumber)-\(roundTrip)"
        let exported = cli.path("round-\(stepNumber).json")
        try Life.expect(try cli.run(["export", "--format", "json", "--out", exported, "--force"]), 0, "export json")
        let original = try prescriptions(in: exported)

        let other = try CLIHarness(passphrase: "another vault", today: Model.today)
        try other.initVault()
        try Life.expect(try other.run(["import", exported]), 0, "import of the export into a new vault")
        try Life.expect(try other.run(["check"]), 0, "check after import into a new vault")
        let again = other.path("again.json")
        try Life.expect(try other.run(["export", "--format", "json", "--out", again]), 0, "export json (round trip)")
        guard try prescriptions(in: again, vaultLocal: true) == (try prescriptions(in: exported, vaultLocal: true))
        else {
            throw Mismatch(message: "export, import into a new vault, export again: the prescriptions differ")
        }
        // The export carries the patient records' measurements (export JSON revision 1.2).
        guard try measurements(of: other) == model.measurements else {
            throw Mismatch(message: "export, import into a new vault: the measurements differ")
        }

        let backup = cli.path("backup-\(stepNumber).age")
        try Life.expect(try cli.run(["backup", backup]), 0, "backup")
        try Life.expect(try cli.run(["backup", "verify", backup]), 0, "backup verify")
        let home = cli.path("home-\(stepNumber)")
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        let fresh: [String: String?] = ["HOME": home, "RXVAULT_PATH": nil, "XDG_STATE_HOME": nil, "XDG_DATA_HOME": nil]
        try Life.expect(try cli.run(["restore", backup], environment: fresh), 0, "restore on a fresh HOME")
        try Life.expect(try cli.run(["check"], environment: fresh), 0, "check of the restored vault")
        let restored = cli.path("restored-\(stepNumber).json")
        try Life.expect(
            try cli.run(["export", "--format", "json", "--out", restored], environment: fresh), 0,
            "export of the restored vault")
        guard try prescriptions(in: restored) == original else {
            throw Mismatch(message: "backup then restore: the export differs")
        }
        guard try measurements(of: cli, environment: fresh) == model.measurements else {
            throw Mismatch(message: "backup then restore: the measurements differ")
        }
    }

    // MARK: Reading outputs

    struct Listed {
        let id: String
        let status: String
        let issued: String
        let expires: String?
        /// The id of the newer prescription that supersedes it, when the status is `superseded`.
        var supersededBy: String? = nil
    }

    func json(_ arguments: [String]) throws -> [String: Any] {
        let r = try cli.run(arguments)
        try Life.expect(r, 0, arguments.joined(separator: " "))
        guard let object = try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any] else {
            throw Mismatch(
                message: "\(arguments.joined(separator: " ")) printed no JSON object: \(r.stdout.prefix(300))")
        }
        return object
    }

    func listed(_ arguments: [String]) throws -> [Listed] {
        let items = try json(arguments + ["--format", "json"])["prescriptions"] as? [[String: Any]] ?? []
        return items.map {
            Listed(
                id: $0["id"] as? String ?? "", status: $0["status"] as? String ?? "",
                issued: $0["issued"] as? String ?? "",
                expires: $0["expires"] as? String, supersededBy: $0["supersededBy"] as? String)
        }
    }

    /// The owner's measurements: id (8 hex digits) -> the right eye's axial length and the patient
    /// record's id (12 hex digits, as `patient(of:)` gives it).
    func ownerMeasurements() throws -> [String: (axial: String, patient: String)] {
        var found: [String: (axial: String, patient: String)] = [:]
        for m in try json(["measurement", "list", "--format", "json"])["measurements"] as? [[String: Any]] ?? [] {
            let id = String((m["id"] as? String ?? "").prefix(8))
            let patient = ((m["patient"] as? [String: Any])?["id"] as? String ?? "").prefix(12)
            found[id] = ((m["axialLengthOD"] as? Double).map { String(format: "%.2f", $0) } ?? "none", String(patient))
        }
        return found
    }

    /// `measurement list --format json`: id (8 hex digits) -> the right eye's axial length, two
    /// decimals; as a client with `identity`.
    func measurements(
        of harness: CLIHarness, identity: String? = nil, environment: [String: String?] = [:]
    ) throws -> [String: String] {
        let r = try harness.run(
            ["measurement", "list", "--format", "json"] + (identity.map { ["--identity", $0] } ?? []),
            environment: environment)
        try Life.expect(r, 0, "measurement list")
        let object = try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        var found: [String: String] = [:]
        for m in object?["measurements"] as? [[String: Any]] ?? [] {
            let id = String((m["id"] as? String ?? "").prefix(8))
            found[id] = (m["axialLengthOD"] as? Double).map { String(format: "%.2f", $0) } ?? "none"
        }
        return found
    }

    /// The patient record a prescription names: its id (a prefix) and birth date.
    func patient(of prescription: String) throws -> (id: String, birthDate: String?)? {
        let patient = try json(["show", prescription, "--format", "json"])["patient"] as? [String: Any]
        guard let id = patient?["id"] as? String else { return nil }
        return (String(id.prefix(12)), patient?["birthDate"] as? String)
    }

    /// An export's prescriptions as canonical JSON (sorted keys), without the export's time and
    /// vault binding. What is the vault's own and not the prescription's is left out with
    /// `vaultLocal` (an import into a new vault starts at version 1 and gives patients and
    /// attachments ids of that vault): prescription ids, content and attachments stay.
    func prescriptions(in file: String, vaultLocal: Bool = false) throws -> String {
        let object =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? [String: Any]
            ?? [:]
        var items = object["prescriptions"] as? [[String: Any]] ?? []
        if vaultLocal {
            items = items.map { item in
                var item = item
                item["version"] = nil
                if var rx = item["prescription"] as? [String: Any], var patient = rx["patient"] as? [String: Any] {
                    patient["id"] = nil
                    rx["patient"] = patient
                    item["prescription"] = rx
                }
                let attachments = (item["attachments"] as? [[String: Any]] ?? []).map { a in
                    var a = a
                    a["id"] = nil
                    return a
                }
                item["attachments"] = attachments.sorted {
                    ($0["sha256"] as? String ?? "") < ($1["sha256"] as? String ?? "")
                }
                return item
            }
        }
        let sorted = items.sorted { ($0["id"] as? String ?? "") < ($1["id"] as? String ?? "") }
        return String(
            decoding: try JSONSerialization.data(withJSONObject: sorted, options: [.sortedKeys]), as: UTF8.self)
    }

    static func expect(_ result: CLIHarness.Result, _ status: Int32, _ what: String) throws {
        guard !result.signalled, result.status == status else {
            throw Mismatch(
                message:
                    "\(what): \(result.signalled ? "killed by signal" : "exit") \(result.status), expected \(status)\n"
                    + "stdout: \(result.stdout.suffix(800))\nstderr: \(result.stderr.suffix(800))")
        }
    }

    static func same(_ found: Set<String>, _ expected: Set<String>, _ what: String) throws {
        guard found == expected else {
            throw Mismatch(
                message:
                    "\(what): extra \(found.subtracting(expected).sorted()), missing \(expected.subtracting(found).sorted())"
            )
        }
    }
}
