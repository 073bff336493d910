import Foundation
import RxTestSupport
import Testing

/// One life of `DeviceLivesTests`: three devices of one vault (A and B files, C a PostgreSQL
/// database), a folder remote, and the model. Every command runs with a fixed clock, so two
/// devices that merged the same writes in different orders write the same merge versions.
final class DeviceLife {
    struct Failure: Error, CustomStringConvertible {
        /// How many actions had run when it failed (0: while setting up).
        let action: Int
        let message: String
        var description: String { "after action \(action): \(message)" }
    }

    struct Mismatch: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    static let statuses = ["active", "cancelled", "draft", "entered-in-error"]
    static let png = Repository.fixture("attachments/valid/png-1x1.png")
    static let now = "2026-06-15T09:00:00Z"

    let cli: CLIHarness
    let database: PostgresDatabaseInfo
    let model = DeviceLivesModel(devices: 3)
    /// Per device: its environment (HOME, RXVAULT_PATH) and where another device finds it.
    var environments: [[String: String?]] = []
    var locations: [String] = []
    let remote: String
    var actionNumber = 0

    static func outcome(of plan: DevicePlan) -> Failure? {
        let life: DeviceLife
        do { life = try DeviceLife() } catch { return Failure(action: 0, message: "setting up: \(error)") }
        for action in plan.actions {
            life.actionNumber += 1
            do {
                try life.perform(action)
            } catch {
                return Failure(action: life.actionNumber, message: "\(action): \(error)")
            }
        }
        do { try life.finish() } catch { return Failure(action: plan.actions.count, message: "at the end: \(error)") }
        return nil
    }

    init() throws {
        cli = try CLIHarness(passphrase: "three devices passphrase", today: "2026-06-15")
        database = try PostgresServer.shared().createDatabase()
        for (key, value) in database.environment { cli.environment[key] = value }
        cli.environment["RXVAULT_NOW"] = Self.now
        remote = cli.path("remote")
        try cli.initVault()
        let homes = ["A", "B", "C"].map { cli.path("home-\($0)") }
        for home in homes { try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true) }
        locations = [cli.vaultPath, cli.path("b.rxv"), database.url]
        environments = (0..<3).map { ["HOME": homes[$0], "RXVAULT_PATH": locations[$0]] }
        // Something to act on before the devices part: a prescription granted to a client.
        try perform(.write(0, .add(contacts: false, variant: 0)))
        try perform(.write(0, .clientAdd(name: 0)))
        try perform(.write(0, .grant(client: 0, pick: 0, measurements: false)))
        for device in [1, 2] {
            try expect(
                try run(["copy", locations[0], locations[device]], on: 0), 0, "copy to \(DevicePlan.names[device])")
            model.known[device] = model.known[0]
        }
    }

    // MARK: Running commands

    func run(_ arguments: [String], on device: Int) throws -> CLIHarness.Result {
        try cli.run(arguments, environment: environments[device])
    }

    func expect(_ result: CLIHarness.Result, _ status: Int32, _ what: String) throws {
        guard !result.signalled, result.status == status else {
            throw Mismatch(
                message: "\(what): exit \(result.status), expected \(status)\nstdout: \(result.stdout.suffix(1200))"
                    + "\nstderr: \(result.stderr.suffix(1200))")
        }
    }

    func json(_ arguments: [String], on device: Int) throws -> [String: Any] {
        let r = try run(arguments, on: device)
        try expect(r, 0, "\(DevicePlan.names[device]): \(arguments.joined(separator: " "))")
        guard let object = try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any] else {
            throw Mismatch(message: "\(arguments.joined(separator: " ")) printed no JSON: \(r.stdout.prefix(300))")
        }
        return object
    }

    /// The prescriptions listed (8 hex digits), by the owner or a client.
    func listed(on device: Int, identity: String? = nil) throws -> Set<String> {
        let items =
            try json((identity.map { ["--identity", $0] } ?? []) + ["list", "--format", "json"], on: device)[
                "prescriptions"] as? [[String: Any]] ?? []
        return Set(items.map { String(($0["id"] as? String ?? "").prefix(8)) })
    }

    func patient(of prescription: String, on device: Int) throws -> (id: String, birthDate: String?)? {
        let patient = try json(["show", prescription, "--format", "json"], on: device)["patient"] as? [String: Any]
        guard let id = patient?["id"] as? String else { return nil }
        return (String(id.prefix(12)), patient?["birthDate"] as? String)
    }

    static func pick<T: Comparable>(_ n: Int, _ among: Set<T>) -> T? {
        let sorted = among.sorted()
        return sorted.isEmpty ? nil : sorted[n % sorted.count]
    }

    // MARK: Actions

    func perform(_ action: DevicePlan.Action) throws {
        switch action {
        case .write(let device, let write):
            try perform(write, on: device)
        case .merge(let into, let from):
            let r = try run(["merge", locations[from]], on: into)
            try expect(r, 0, "\(action)")
            model.known[into].formUnion(model.known[from])
            try verify([into])
        case .syncFolder(let device):
            let r = try run(["sync", remote], on: device)
            try expect(r, 0, "\(action)")
            model.known[device].formUnion(model.remote)
            model.remote = model.known[device]
            try verify([device])
        case .syncDatabase(let device):
            let r = try run(["sync", locations[2]], on: device)
            try expect(r, 0, "\(action)")
            model.known[device].formUnion(model.known[2])
            model.known[2] = model.known[device]
            try verify([device, 2])
        }
    }

    func perform(_ write: DevicePlan.Write, on device: Int) throws {
        let present = model.present(on: device)
        let what = "\(DevicePlan.names[device]): \(write)"
        switch write {
        case .add(let contacts, let variant):
            var arguments = contacts ? CLIHarness.contactsArguments : CLIHarness.glassesArguments
            arguments[arguments.firstIndex(of: "--patient")! + 1] =
                ["Quintessa Marlowe", "Bartholomew Oyelaran", "Ingrid Vasquez-Thorne"][variant % 3]
            var r = try run(arguments, on: device)
            // Two devices that each added a patient of one name hold two records of it once
            // merged: the owner is asked which (64), and gives the first one's id, as told.
            let matches = r.stderr.matches(of: /\n +([0-9a-f]{8}) ([^\n]*)/).map { (String($0.1), String($0.2)) }
            if r.status == 64, !matches.isEmpty {
                let dated = arguments.contains("--dob")
                let chosen = matches.first { $0.1.contains("(born ") == dated } ?? matches[0]
                arguments[arguments.firstIndex(of: "--patient")! + 1] = chosen.0
                r = try run(arguments, on: device)
            }
            try expect(r, 0, what)
            model.record(.add(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), on: device)
        case .note(let pick):
            guard let id = Self.pick(pick, present) else { return }
            let note = "note E\(model.events.count) on \(DevicePlan.names[device])"
            try expect(try run(["edit", id, "--note", note], on: device), 0, what)
            model.record(.edit(id, note: note), on: device)
        case .status(let pick, let status):
            guard let id = Self.pick(pick, present) else { return }
            try expect(try run(["edit", id, "--status", Self.statuses[status % 4]], on: device), 0, what)
            model.record(.other("status"), on: device)
        case .remove(let pick):
            guard let id = Self.pick(pick, present) else { return }
            try expect(try run(["remove", id, "--yes"], on: device), 0, what)
            model.record(.remove(id), on: device)
        case .attach(let pick):
            guard let id = Self.pick(pick, present) else { return }
            // The same picture each time: a second one on a prescription is asked for.
            let r = try run(["attach", id, Self.png, "--allow-duplicate"], on: device)
            try expect(r, 0, what)
            model.record(.attach(id, attachment: r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), on: device)
        case .detach(let pick):
            let attached = model.attachments(on: device).flatMap { id, set in set.map { "\(id) \($0)" } }
            guard let chosen = Self.pick(pick, Set(attached)) else { return }
            let parts = chosen.split(separator: " ").map(String.init)
            try expect(try run(["detach", parts[0], parts[1], "--yes"], on: device), 0, what)
            model.record(.detach(parts[0], attachment: parts[1]), on: device)
        case .clientAdd(let n):
            let name = "app\(DevicePlan.names[device].lowercased())\(n)"
            guard model.identities[name] == nil else { return }
            let identity = cli.path("\(name).key")
            try expect(
                try run(["client", "add", name, "--generate", "--identity-out", identity], on: device), 0, what)
            model.identities[name] = identity
            model.record(.clientAdd(name), on: device)
        case .clientRemove(let pick):
            guard let name = Self.pick(pick, model.clients(on: device)) else { return }
            try expect(try run(["client", "remove", name, "--yes"], on: device), 0, what)
            model.record(.clientRemove(name), on: device)
        case .grant(let client, let pick, let measurements):
            guard let name = Self.pick(client, model.clients(on: device)), let id = Self.pick(pick, present) else {
                return
            }
            let newRow = model.liveRows(client: name, prescription: id, on: device).isEmpty
            let r = try run(["grant", name, id, "--no-expiry"] + (measurements ? ["--measurements"] : []), on: device)
            try expect(r, 0, what)
            model.record(.grant(client: name, prescription: id, newRow: newRow), on: device)
        case .revoke(let client, let pick):
            guard let name = Self.pick(client, model.clients(on: device)) else { return }
            // Half the time one it holds, else any (67 when it holds none).
            let held = model.granted(to: name, on: device, existing: present)
            guard let id = held.isEmpty || pick % 2 == 1 ? Self.pick(pick, present) : Self.pick(pick, held) else {
                return
            }
            try expect(try run(["revoke", name, id], on: device), held.contains(id) ? 0 : 67, what)
            if held.contains(id) { model.record(.revoke(client: name, prescription: id), on: device) }
        case .patientRename(let pick, let n):
            guard let id = Self.pick(pick, present), let patient = try patient(of: id, on: device) else { return }
            try expect(try run(["patient", "rename", patient.id, "Renamed \(n)"], on: device), 0, what)
            model.record(.other("rename"), on: device)
        case .patientMerge(let pick, let other):
            guard let a = Self.pick(pick, present), let b = Self.pick(other, present),
                let into = try patient(of: a, on: device), let from = try patient(of: b, on: device), into.id != from.id
            else { return }
            let differ = into.birthDate != nil && from.birthDate != nil && into.birthDate != from.birthDate
            try expect(try run(["patient", "merge", into.id, from.id, "--yes"], on: device), differ ? 65 : 0, what)
            if !differ { model.record(.other("patient merge"), on: device) }
        case .keyAdd(let n):
            let file = try cli.write("partner passphrase \(n)\n", to: "partner-\(n)")
            try expect(
                try run(
                    [
                        "key", "add", "--label", "partner \(DevicePlan.names[device]) \(n)", "--kdf", "interactive",
                        "--new-passphrase-file", file
                    ], on: device), 0, what)
            model.record(.other("key add"), on: device)
        case .keyRemove(let pick):
            let slots = try json(["key", "list", "--format", "json"], on: device)["slots"] as? [[String: Any]] ?? []
            let partners = Set(
                slots.compactMap { ($0["label"] as? String)?.hasPrefix("partner") == true ? $0["slot"] as? Int : nil })
            guard let slot = Self.pick(pick, partners) else { return }
            try expect(try run(["key", "remove", String(slot), "--yes"], on: device), 0, what)
            model.record(.other("key remove"), on: device)
        case .configSet(let size):
            try expect(
                try run(["config", "set", "max-attachment-size", ["16MiB", "32MiB", "64MiB"][size % 3]], on: device),
                0, what)
            model.record(.other("config set"), on: device)
        case .measurementAdd(let pick, let variant):
            guard let id = Self.pick(pick, present), let patient = try patient(of: id, on: device) else { return }
            let r = try run(
                [
                    "measurement", "add", patient.id, "--date",
                    "2025-\(String(format: "%02d", 1 + variant % 12))-\(String(format: "%02d", 1 + variant % 28))",
                    "--axial-length-od", String(format: "%.2f", 22 + Double(variant % 300) / 100)
                ], on: device)
            try expect(r, 0, what)
            model.record(.measurementAdd(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), on: device)
        case .measurementRemove(let pick):
            guard let id = Self.pick(pick, model.measurements(on: device)) else { return }
            try expect(try run(["measurement", "remove", id, "--yes"], on: device), 0, what)
            model.record(.measurementRemove(id), on: device)
        }
    }
}
