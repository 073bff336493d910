import Foundation
import RxTestSupport
import Testing

/// "the test that would have found all of this": from a seed, random lives of a vault
/// driven through the built binary, every writing command mixed (add, edit with status, remove,
/// imports of rxvault JSON and of foreign FHIR with kept elements and every status, attach,
/// detach, grant, revoke, client add and remove, patient rename and merge, key add and remove,
/// passwd, config set, upgrade from each `Fixtures/vaults` format) while `rxvault serve` runs and
/// the file is now and then replaced by rename, as a sync tool does. After every step the vault
/// is held against a model: `check` passes; the owner's list, validity query and every client's
/// reads (through the CLI with its identity and through the API) are what the model says, and
/// nothing the model calls withdrawn or expired reads as valid. Every few steps, and at the end
/// of each life: export json, import into a new vault, export again gives the same
/// prescriptions; backup, backup verify and restore on a fresh HOME give the same export.
///
/// Two strengths. The default suite (`swift test`, `scripts/test`) runs a quick pass: the first
/// `RXVAULT_WHOLE_LIFE_LIVES` (2) lives from the fixed seed, 12 steps each, one from a new vault
/// and one from a format fixture. CI (`.ci/run`, a step of its own) runs it at full strength with
/// a time budget, `RXVAULT_WHOLE_LIFE_SECONDS=150`: lives of 24 steps from the fixed seed until
/// the budget is spent. `RXVAULT_WHOLE_LIFE_STEPS` sets the steps per life either way;
/// `RXVAULT_WHOLE_LIFE_SEED=N` replays seed N, `=random` draws one (printed), and a longer budget
/// runs more lives. A failing life is shrunk (steps taken away while it still fails, within
/// `RXVAULT_WHOLE_LIFE_SHRINK_SECONDS`) and reported with its steps.
@Suite(.serialized) struct WholeLifeTests {
    static let environment = ProcessInfo.processInfo.environment
    /// The full-strength run's time budget; nil: the default suite's quick pass.
    static let budget = environment["RXVAULT_WHOLE_LIFE_SECONDS"].flatMap(Double.init)
    static let shrinkBudget = environment["RXVAULT_WHOLE_LIFE_SHRINK_SECONDS"].flatMap(Double.init) ?? 120
    static let stepsPerLife = environment["RXVAULT_WHOLE_LIFE_STEPS"].flatMap(Int.init) ?? (budget == nil ? 12 : 24)
    /// The quick pass: how many lives, and where they start (a new vault, then the format
    /// fixtures in turn), so both kinds of origin are in every run of the suite.
    static let quickLives = environment["RXVAULT_WHOLE_LIFE_LIVES"].flatMap(Int.init) ?? 2
    static let quickOrigins: [Plan.Origin] = [.fresh, .format(2), .format(3), .format(1)]
    /// Lives run side by side.
    static let lifeBatch = 2

    @Test func livesOfAVaultHoldAgainstTheModel() throws {
        // A fixed seed by default, so CI runs the same lives every time (a failure there is the
        // code's, never the draw's); `RXVAULT_WHOLE_LIFE_SEED=random` explores, and prints its seed.
        let given = Self.environment["RXVAULT_WHOLE_LIFE_SEED"]
        let seed =
            given == "random" ? UInt64.random(in: 1...UInt64(UInt32.max)) : given.flatMap(UInt64.init) ?? 0x0022_5EED
        print(
            "whole-life: seed \(seed) (RXVAULT_WHOLE_LIFE_SEED=\(seed) replays it), "
                + (Self.budget.map { "budget \(Int($0)) s" }
                    ?? "quick pass of \(Self.quickLives) lives (RXVAULT_WHOLE_LIFE_SECONDS runs it at full strength)"))
        var rng = LensConsistencyTests.Generator(state: seed)
        let start = Date()
        var lives = 0
        var steps = 0
        repeat {
            // Lives two at a time (each has its own folder, vault and server), drawn in order
            // from the seed: the same lives as one at a time, on both cores.
            let count = Self.budget == nil ? min(Self.lifeBatch, Self.quickLives - lives) : Self.lifeBatch
            let plans = (0..<count).map { index -> Plan in
                var plan = Plan.random(using: &rng, steps: Self.stepsPerLife)
                if Self.budget == nil { plan.origin = Self.quickOrigins[(lives + index) % Self.quickOrigins.count] }
                return plan
            }
            let outcomes = try concurrentMap(plans, width: Self.lifeBatch) { Life.outcome(of: $0) }
            for (plan, outcome) in zip(plans, outcomes) {
                if let failure = outcome {
                    let (shrunk, last) = Self.shrink(plan, failure)
                    Issue.record(
                        """
                        whole-life: seed \(seed), life \(lives + 1) fails (shrunk from \(plan.steps.count) to \(shrunk.steps.count) steps; \
                        replay with RXVAULT_WHOLE_LIFE_SEED=\(seed)\(Self.budget == nil ? " in the quick pass, without RXVAULT_WHOLE_LIFE_SECONDS" : "")):
                        origin: \(shrunk.origin)
                        \(shrunk.steps.enumerated().map { "  \($0.offset + 1). \($0.element)" }.joined(separator: "\n"))
                        \(last)
                        (first seen, before shrinking: \(failure))
                        """)
                    return
                }
                lives += 1
                steps += plan.steps.count
            }
        } while Self.budget.map { Date().timeIntervalSince(start) < $0 } ?? (lives < Self.quickLives)
        print("whole-life: \(lives) lives, \(steps) steps held (seed \(seed))")
    }

    /// The smallest plan with the same origin that still fails (`shrinking`).
    static func shrink(_ plan: Plan, _ failure: Life.Failure) -> (Plan, Life.Failure) {
        let (steps, last) = shrinking(plan.steps, failure, within: shrinkBudget, failedAt: \.step) {
            Life.outcome(of: Plan(origin: plan.origin, steps: $0))
        }
        return (Plan(origin: plan.origin, steps: steps), last)
    }
}

// MARK: - A life

/// One vault's life: its harness, its model and, when the origin allows, a running server.
final class Life {
    struct Failure: Error, CustomStringConvertible {
        /// How many steps had run when it failed (0: in the origin).
        let step: Int
        let message: String
        var description: String { "after step \(step): \(message)" }
    }

    struct Mismatch: Error { let message: String }

    static func fixture(_ name: String) -> String { Repository.fixture(name) }
    static let png = fixture("attachments/valid/png-1x1.png")
    static let clinic = (try? String(contentsOfFile: fixture("fhir/clinic-bundle.json"), encoding: .utf8)) ?? ""

    let cli: CLIHarness
    let model: Model
    var server: ServerProcess?
    var stepNumber = 0
    /// Round trips made so far (their files are named by step and this).
    var roundTrip = 0

    /// Runs the plan; nil when every step held.
    static func outcome(of plan: Plan) -> Failure? {
        do {
            let life = try Life(plan.origin)
            defer { life.server?.stop() }
            for step in plan.steps {
                life.stepNumber += 1
                do {
                    try life.perform(step)
                    try life.verify(deep: life.stepNumber % 6 == 0)
                } catch let mismatch as Mismatch {
                    return Failure(step: life.stepNumber, message: "\(step): \(mismatch.message)")
                } catch {
                    // A command that hung (the harness's timeout) or a test helper that failed.
                    return Failure(step: life.stepNumber, message: "\(step): \(error)")
                }
            }
            // At the end, the deep checks (unless the last step just made them).
            do { if plan.steps.isEmpty || life.stepNumber % 6 != 0 { try life.verify(deep: true) } } catch let mismatch
                as Mismatch
            {
                return Failure(step: plan.steps.count, message: "at the end: \(mismatch.message)")
            } catch {
                return Failure(step: plan.steps.count, message: "at the end: \(error)")
            }
            return nil
        } catch let mismatch as Mismatch {
            return Failure(step: 0, message: "origin: \(mismatch.message)")
        } catch {
            return Failure(step: 0, message: "the test itself failed: \(error)")
        }
    }

    init(_ origin: Plan.Origin) throws {
        switch origin {
        case .fresh:
            cli = try CLIHarness(passphrase: "whole life passphrase", today: Model.today)
            model = Model(passphrase: "whole life passphrase")
            // At the suite's fast KDF (made in-process): the lives are about what the vault holds,
            // and every command of a life opens it. (The format fixtures keep their own cost.)
            try cli.initVault()
        case .format(let n):
            let passphrase = ["format one fixture", "format two fixture", "format three fixture"][n - 1]
            cli = try CLIHarness(passphrase: passphrase, today: Model.today)
            model = Model(passphrase: passphrase)
            try cli.loadVault(sql: Life.fixture("vaults/format\(n).sql"))
            try Life.expect(try cli.run(["upgrade"]), 0, "upgrade")
            // What the fixture holds (Fixtures/vaults/README.md), read once: its prescriptions
            // and each client's grants as the client itself reads them with its identity.
            for item in try listed(["list"]) {
                model.prescriptions[String(item.id.prefix(8))] = Model.Prescription(
                    status: "active", issued: item.issued, expires: item.expires, attachment: nil)
            }
            let identities =
                n == 1
                ? ["lens-shop": "format1-client.age"]
                : ["lens-shop": "format\(n)-lens-shop.age", "family": "format\(n)-family.age"]
            for (name, file) in identities {
                let copy = cli.path("\(name).key")
                try FileManager.default.copyItem(atPath: Life.fixture("vaults/\(file)"), toPath: copy)
                chmod(copy, 0o600)
                model.clients[name] = copy
                model.grants[name] = Set(try listed(["--identity", copy, "list"]).map { String($0.id.prefix(8)) })
            }
            // Attachments of the fixture: learned from the owner's view.
            for id in model.ids {
                let list = try json(["attachments", id, "--format", "json"])
                if let first = (list["attachments"] as? [[String: Any]])?.first?["id"] as? String {
                    model.prescriptions[id]?.attachment = String(first.prefix(8))
                }
            }
        }
        server = try ServerProcess(cli, environment: ["RXVAULT_TODAY": Model.today])
        for (name, identity) in model.clients { model.tokens[name] = try server!.token(identity: identity) }
        try verify(deep: false)
    }

    // MARK: Steps

    func perform(_ step: Plan.Step) throws {
        switch step {
        case .add(let contacts, let variant):
            var arguments = contacts ? CLIHarness.contactsArguments : CLIHarness.glassesArguments
            arguments[arguments.firstIndex(of: "--patient")! + 1] =
                ["Quintessa Marlowe", "Bartholomew Oyelaran", "Ingrid Vasquez-Thorne"][variant % 3]
            arguments[arguments.firstIndex(of: "--expires")! + 1] = Model.expiryChoices[variant % 3]
            let r = try cli.run(arguments)
            try Life.expect(r, 0, "add")
            let short = r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            model.prescriptions[short] = Model.Prescription(
                status: "active", issued: "2026-03-01", expires: Model.expiryChoices[variant % 3])
        case .editNote(let pick, let text):
            guard let id = model.pick(pick) else { return }
            try Life.expect(try cli.run(["edit", id, "--note", "note \(text) at step \(stepNumber)"]), 0, "edit --note")
        case .editExpiry(let pick, let day):
            guard let id = model.pick(pick) else { return }
            let expires = Model.expiryChoices[day % Model.expiryChoices.count]
            try Life.expect(try cli.run(["edit", id, "--expires", expires]), 0, "edit --expires")
            model.prescriptions[id]?.expires = expires
        case .editStatus(let pick, let status):
            guard let id = model.pick(pick) else { return }
            let code = Model.statusCodes[status % 4]
            try Life.expect(try cli.run(["edit", id, "--status", code]), 0, "edit --status")
            model.prescriptions[id]?.status = code
        case .remove(let pick):
            guard let id = model.pick(pick) else { return }
            try Life.expect(try cli.run(["remove", id, "--yes"]), 0, "remove")
            model.prescriptions[id] = nil
        case .importJSON(let status, let variant):
            // A new id, the same on every replay of the plan.
            var digits = LensConsistencyTests.Generator(state: UInt64(variant) &* 1_000_003 &+ UInt64(stepNumber))
            let id = (0..<32).map { _ in String(Array("0123456789abcdef")[Int(digits.next() % 16)]) }.joined()
            let code = Model.statusCodes[status % 4]
            let expires = Model.expiryChoices[variant % 3]
            let fhir = code == "active" ? "" : #", "fhir": {"resource": {"status": "\#(code)"}}"#
            let file = try cli.write(
                """
                {"schema": "rxvault/export/v1", "prescriptions": [{"id": "\(id)", "version": 1, "recorded": "2026-02-01T10:00:00Z",
                 "prescription": {"kind": "glasses", "issued": "2026-02-01", "expires": "\(expires)",
                  "patient": {"name": "Imported Person \(variant % 4)"}, "prescriber": {"name": "Dr Elsewhere"},
                  "right": {"sphere": -1.5, "cylinder": -0.5, "axis": 90}, "left": {"sphere": -1.25}\(fhir)}}]}
                """, to: "import-\(stepNumber).json")
            try Life.expect(try cli.run(["import", file]), 0, "import rxvault JSON")
            model.prescriptions[String(id.prefix(8))] = Model.Prescription(
                status: code, issued: "2026-02-01", expires: expires)
        case .importFHIR(let statuses, let tag):
            let bundle = Life.clinic.replacingOccurrences(of: "RX-100", with: "RX-T\(tag)-\(stepNumber)-")
                .replacingOccurrences(of: "rx-100", with: "rx-t\(tag)-\(stepNumber)-")
            let file = try cli.write(bundle, to: "clinic-\(stepNumber).json")
            try Life.expect(
                try cli.run(["import", file, "--assume-expiry", "1y", "--status", statuses.joined(separator: ",")]), 0,
                "import FHIR")
            // Ids are derived by rxvault: the new ones are learned, their statuses counted.
            let expected = ["active": 2, "cancelled": 1, "entered-in-error": 1, "draft": 1].filter {
                statuses.contains($0.key)
            }
            var found: [String: Int] = [:]
            for item in try listed(["list"]) where model.prescriptions[String(item.id.prefix(8))] == nil {
                let status = ["cancelled", "draft", "entered-in-error"].contains(item.status) ? item.status : "active"
                found[status, default: 0] += 1
                model.prescriptions[String(item.id.prefix(8))] = Model.Prescription(
                    status: status, issued: item.issued, expires: item.expires)
            }
            guard found == expected else {
                throw Mismatch(message: "the import added \(found) by status, expected \(expected)")
            }
        case .attach(let pick):
            guard let id = model.pick(pick), model.prescriptions[id]?.attachment == nil else { return }
            let r = try cli.run(["attach", id, Life.png])
            try Life.expect(r, 0, "attach")
            model.prescriptions[id]?.attachment = r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        case .detach(let pick):
            guard let id = model.pick(pick), let attachment = model.prescriptions[id]?.attachment else { return }
            try Life.expect(try cli.run(["detach", id, attachment, "--yes"]), 0, "detach")
            model.prescriptions[id]?.attachment = nil
        case .clientAdd(let n):
            let name = "app\(n)"
            guard model.clients[name] == nil, model.removedTokens[name] == nil else { return }
            let identity = cli.path("\(name).key")
            try Life.expect(
                try cli.run(["client", "add", name, "--generate", "--identity-out", identity]), 0, "client add")
            model.clients[name] = identity
            model.tokens[name] = try server?.token(identity: identity)
        case .clientRemove(let pick):
            guard let name = model.client(pick) else { return }
            try Life.expect(try cli.run(["client", "remove", name, "--yes"]), 0, "client remove")
            model.removedTokens[name] = model.tokens[name]
            model.clients[name] = nil
            model.grants[name] = nil
            model.measurementGrants[name] = nil
            model.tokens[name] = nil
        case .grant(let client, let pick):
            guard let name = model.client(client), let id = model.pick(pick) else { return }
            let measurements = Model.withMeasurements(pick)
            try Life.expect(
                try cli.run(["grant", name, id, "--no-expiry"] + (measurements ? ["--measurements"] : [])), 0, "grant")
            // A grant made anew starts without measurements; a repeated one keeps what it had.
            if !model.granted(name).contains(id) { model.measurementGrants[name]?.remove(id) }
            model.grants[name, default: []].insert(id)
            if measurements { model.measurementGrants[name, default: []].insert(id) }
        case .revoke(let client, let pick):
            guard let name = model.client(client) else { return }
            // Half the time one it holds, else any (67 when it holds none).
            let held = model.granted(name).sorted()
            guard let id = held.isEmpty || pick % 2 == 1 ? model.pick(pick) : held[pick % held.count] else { return }
            try Life.expect(try cli.run(["revoke", name, id]), held.contains(id) ? 0 : 67, "revoke")
            model.grants[name]?.remove(id)
            model.measurementGrants[name]?.remove(id)
        case .patientRename(let pick, let n):
            guard let id = model.pick(pick), let patient = try patient(of: id) else { return }
            try Life.expect(
                try cli.run(["patient", "rename", patient.id, "Renamed \(n) \(stepNumber)"]), 0, "patient rename")
        case .patientMerge(let pick, let other):
            guard let a = model.pick(pick), let b = model.pick(other), let into = try patient(of: a),
                let from = try patient(of: b),
                into.id != from.id
            else { return }
            // Two birth dates that differ are two people: merge refuses (65) until one is changed.
            let differ = into.birthDate != nil && from.birthDate != nil && into.birthDate != from.birthDate
            try Life.expect(
                try cli.run(["patient", "merge", into.id, from.id, "--yes"]), differ ? 65 : 0, "patient merge")
        case .keyAdd:
            guard !model.partnerSlot else { return }
            let file = try cli.write("partner passphrase \(stepNumber)\n", to: "partner-\(stepNumber)")
            try Life.expect(
                try cli.run(["key", "add", "--label", "partner", "--kdf", "interactive", "--new-passphrase-file", file]
                ), 0, "key add")
            model.partnerSlot = true
        case .keyRemove:
            guard model.partnerSlot else { return }
            let slots = try json(["key", "list", "--format", "json"])["slots"] as? [[String: Any]] ?? []
            guard let slot = slots.first(where: { $0["label"] as? String == "partner" })?["slot"] as? Int else {
                throw Mismatch(message: "key list has no partner slot: \(slots)")
            }
            try Life.expect(try cli.run(["key", "remove", String(slot), "--yes"]), 0, "key remove")
            model.partnerSlot = false
        case .passwd(let n):
            let passphrase = "whole life passphrase \(n) \(stepNumber)"
            let file = try cli.write(passphrase + "\n", to: "new-passphrase")
            try Life.expect(try cli.run(["passwd", "--new-passphrase-file", file]), 0, "passwd")
            _ = try cli.write(passphrase + "\n", to: "passphrase")
            model.passphrase = passphrase
        case .configSet(let size):
            try Life.expect(
                try cli.run(["config", "set", "max-attachment-size", Model.sizes[size % Model.sizes.count]]), 0,
                "config set")
        case .measurementAdd(let pick, let variant):
            // Half the time for the patient of a prescription some client holds with its
            // measurements, so that the re-sealing of such grants is what the step tries.
            let carried = model.clientNames.flatMap { model.grantedMeasurements($0) }.sorted()
            let chosen = pick % 2 == 0 && !carried.isEmpty ? carried[pick / 2 % carried.count] : model.pick(pick)
            guard let id = chosen, let patient = try patient(of: id) else { return }
            let date = "2025-\(String(format: "%02d", 1 + variant % 12))-\(String(format: "%02d", 1 + variant % 28))"
            let r = try cli.run([
                "measurement", "add", patient.id, "--date", date, "--axial-length-od", Model.axialLength(variant),
                "--va-od", Model.acuity(variant)
            ])
            // Every birth date a life meets (the harness's, the fixtures', the clinic bundle's) is
            // in the 1980s, before these 2025 days: each add is taken. (A day before birth is
            // refused: MeasurementTests.)
            try Life.expect(r, 0, "measurement add")
            model.measurements[r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)] = Model.axialLength(variant)
        case .measurementEdit(let pick, let variant):
            guard let id = model.measurement(pick) else { return }
            try Life.expect(
                try cli.run(["measurement", "edit", id, "--axial-length-od", Model.axialLength(variant)]), 0,
                "measurement edit")
            model.measurements[id] = Model.axialLength(variant)
        case .measurementRemove(let pick):
            guard let id = model.measurement(pick) else { return }
            try Life.expect(try cli.run(["measurement", "remove", id, "--yes"]), 0, "measurement remove")
            model.measurements[id] = nil
        case .replaceFile:
            // As a sync tool delivers a file: a whole copy written beside it, renamed over it.
            // The vault's write lock is held from the copy to the rename: a write the server
            // committed in between (its served reads, each second) would be in the old file
            // only, and the copy an older one, rightly refused. The server's write that waited
            // for the lock finds the file replaced and goes to the new one.
            //
            // The server's switches are counted before the rename: that waiting write sees the
            // new file the moment the lock is let go, and the server may switch to it before
            // this process has even seen the copy end.
            let switches = server.map { $0.stderr.components(separatedBy: "serving the vault file now at").count }
            let copied = try CLIHarness.spawn(
                [
                    "/usr/bin/env", "python3", "-c",
                    """
                    import os, sqlite3, sys
                    source, target = sys.argv[1], sys.argv[1] + ".sync-tmp"
                    lock = sqlite3.connect(source, isolation_level=None, timeout=30)
                    lock.execute("BEGIN IMMEDIATE")
                    src = sqlite3.connect(source); dst = sqlite3.connect(target)
                    src.backup(dst); dst.close(); src.close()
                    os.chmod(target, 0o600); os.rename(target, source)
                    lock.execute("ROLLBACK"); lock.close()
                    """, cli.vaultPath
                ], environment: ["PATH": "/usr/bin:/bin"], directory: cli.directory)
            try Life.expect(copied, 0, "replacing the file")
            // The server looks at the path on every request that reaches the vault (and once a
            // second without one): wait until it has let go of the old file (and of its
            // write-ahead log, whose name the new file shares) before the next command.
            if let server, let switches {
                let token = model.clientNames.first.flatMap { model.tokens[$0] }
                let deadline = Date().addingTimeInterval(10)
                while server.stderr.components(separatedBy: "serving the vault file now at").count == switches {
                    if let token { _ = try RawHTTP.get(server.socket, "/VisionPrescription?_count=1", token: token) }
                    guard Date() < deadline else {
                        let refusal =
                            server.stderr.split(separator: "\n").last { $0.contains("cannot serve the file now") }
                            ?? "none said"
                        throw Mismatch(
                            message:
                                "the server did not switch to the new file within 10 s; its refusal: \(refusal); \(server.stderr.suffix(600))"
                        )
                    }
                    usleep(50_000)
                }
            }
        }
    }
}
