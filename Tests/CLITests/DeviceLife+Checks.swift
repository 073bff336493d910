import Foundation
import RxTestSupport

/// What `DeviceLife` holds each device to, after every merge or sync and at the end.
extension DeviceLife {
    /// The devices a merge or sync changed, against the model; then every two devices that hold
    /// the same events, against each other.
    func verify(_ devices: [Int]) throws {
        for device in devices { try verify(device) }
        var exports: [Int: String] = [:]
        for a in 0..<3 {
            for b in (a + 1)..<3 where model.known[a] == model.known[b] {
                if exports[a] == nil { exports[a] = try export(of: a) }
                if exports[b] == nil { exports[b] = try export(of: b) }
                guard exports[a] == exports[b] else {
                    throw Mismatch(
                        message:
                            "\(DevicePlan.names[a]) and \(DevicePlan.names[b]) hold the same writes but export differently:\n"
                            + Self.firstDifference(exports[a]!, exports[b]!))
                }
            }
        }
    }

    func verify(_ device: Int) throws {
        let name = DevicePlan.names[device]
        let check = try run(["check"], on: device)
        try expect(check, 0, "\(name): check")
        let listed = try listed(on: device)
        let missing = model.present(on: device).subtracting(listed)
        guard missing.isEmpty else { throw Mismatch(message: "\(name) lost prescriptions \(missing.sorted())") }
        let strangers = listed.subtracting(model.added(on: device))
        guard strangers.isEmpty else {
            throw Mismatch(message: "\(name) lists prescriptions no device it merged added: \(strangers.sorted())")
        }
        for (id, notes) in Dictionary(grouping: model.notes(on: device), by: \.prescription) {
            let history = try run(["history", id, "--format", "json"], on: device)
            try expect(history, 0, "\(name): history \(id)")
            for (_, note) in notes where !history.stdout.contains(note) {
                throw Mismatch(message: "\(name) lost the note '\(note)' of \(id): \(history.stdout.suffix(600))")
            }
        }
        for (id, expected) in model.attachments(on: device) {
            let list = try json(["attachments", id, "--format", "json"], on: device)
            let found = Set(
                (list["attachments"] as? [[String: Any]] ?? []).map { String(($0["id"] as? String ?? "").prefix(8)) })
            let lost = expected.filter { a in !found.contains { $0.hasPrefix(a) || a.hasPrefix($0) } }
            guard lost.isEmpty else { throw Mismatch(message: "\(name) lost attachments \(lost.sorted()) of \(id)") }
        }
        let measured = Set(
            (try json(["measurement", "list", "--format", "json"], on: device)["measurements"] as? [[String: Any]] ?? [])
                .map { String(($0["id"] as? String ?? "").prefix(8)) })
        let lostMeasurements = model.measurements(on: device).filter { m in !measured.contains { m.hasPrefix($0) } }
        guard lostMeasurements.isEmpty else {
            throw Mismatch(message: "\(name) lost measurements \(lostMeasurements.sorted())")
        }
        for client in model.clients(on: device).sorted() {
            let reads = try self.listed(on: device, identity: model.identities[client]!)
            let expected = model.granted(to: client, on: device, existing: listed)
            guard reads == expected else {
                throw Mismatch(
                    message:
                        "\(name): \(client) reads \(reads.sorted()) with its identity; the model says \(expected.sorted())"
                        + " (extra: \(reads.subtracting(expected).sorted()), missing: \(expected.subtracting(reads).sorted()))"
                )
            }
        }
        for client in model.removedClients(on: device).sorted() {
            let r = try run(["--identity", model.identities[client]!, "list", "--format", "json"], on: device)
            guard r.status != 0 || !r.stdout.contains("\"id\"") else {
                throw Mismatch(message: "\(name): \(client), removed, still reads: \(r.stdout.prefix(400))")
            }
        }
    }

    /// Brings the three together (each merges the others until nothing moves), checks them
    /// all, and asks A's `rxvault serve` what each client reads.
    func finish() throws {
        for _ in 0..<3 {
            for (into, from) in [(0, 1), (0, 2), (1, 0), (2, 0), (1, 2), (2, 1)] {
                try expect(try run(["merge", locations[from]], on: into), 0, "at the end, merge into \(into)")
                model.known[into].formUnion(model.known[from])
            }
        }
        try verify([0, 1, 2])
        guard Set(model.known).count == 1 else { throw Mismatch(message: "the model's devices did not converge") }
        let server = try ServerProcess(cli, environment: environments[0])
        defer { server.stop() }
        let listed = try listed(on: 0)
        for client in model.clients(on: 0).sorted() {
            let token = try server.token(identity: model.identities[client]!)
            let answer = try RawHTTP.get(server.socket, "/VisionPrescription?_count=200", token: token)
            guard answer.status == 200 else {
                throw Mismatch(message: "API search by \(client): \(answer.status) \(answer.body.prefix(300))")
            }
            var served: Set<String> = []
            for entry in answer.json["entry"] as? [[String: Any]] ?? [] {
                let resource = entry["resource"] as? [String: Any] ?? [:]
                for identifier in resource["identifier"] as? [[String: Any]] ?? [] {
                    if let value = identifier["value"] as? String, value.count == 32, value.allSatisfy(\.isHexDigit) {
                        served.insert(String(value.prefix(8)))
                    }
                }
            }
            let expected = model.granted(to: client, on: 0, existing: listed)
            guard served == expected else {
                throw Mismatch(
                    message: "API: \(client) is served \(served.sorted()); the model says \(expected.sorted())")
            }
        }
    }

    /// `export --format json` as two devices holding the same writes must agree on it
    /// (`ThreeComputerOrderTests.comparable`).
    func export(of device: Int) throws -> String {
        let object = try json(["export", "--format", "json", "--out", "-"], on: device)
        return ThreeComputerOrderTests.comparable(object)
    }

    static func firstDifference(_ a: String, _ b: String) -> String {
        let x = Array(a)
        let y = Array(b)
        let common = zip(x, y).prefix { $0 == $1 }.count
        let from = max(0, common - 200)
        return
            "  one:   ...\(String(x[from..<min(x.count, common + 300)]))\n  other: ...\(String(y[from..<min(y.count, common + 300)]))"
    }
}
