import Foundation
import HTTPTypes
import RxModel
import RxTestSupport
import Testing

@testable import RxServe
@testable import RxVault

/// A client sees exactly what the owner granted it, as the grants are at each request: a grant,
/// a revoke, a removal, an edit or a day passing made by the owner (on a connection of its own,
/// as the CLI in another process) counts at the next request, whatever the server keeps.
@Suite struct AuthorizationTests {
    /// Quintessa's glasses with a photo and her contacts; the shop was granted the glasses with
    /// attachments, the family the contacts without, until 2026-06-20.
    func household() throws -> (ServedVault, glasses: PrescriptionRecord, contacts: PrescriptionRecord) {
        let vault = try ServedVault()
        let glasses = try vault.add(ServedVault.glasses)
        let contacts = try vault.add(ServedVault.contacts)
        try vault.attach(to: glasses.id)
        for name in ["shop", "family"] { try vault.addClient(name) }
        try vault.grant("shop", [glasses.id])
        try vault.grant("family", [contacts.id], until: "2026-06-20", attachments: false)
        return (vault, glasses, contacts)
    }

    @Test func eachClientReadsExactlyItsGrants() async throws {
        let (vault, glasses, contacts) = try household()
        let glassesID = FHIR.prescriptionResourceID(glasses.id)
        try await vault.serve { api in
            let shop = try await api.token("shop")
            let family = try await api.token("family")
            let shopSearch = try await api.get("/VisionPrescription", token: shop)
            #expect(shopSearch.total == 1 && shopSearch.resources.first?["id"] as? String == glassesID)
            let familySearch = try await api.get("/VisionPrescription", token: family)
            #expect(
                familySearch.total == 1 && familySearch.text.contains(contacts.id.hex)
                    && !familySearch.text.contains(glasses.id.hex))

            // What was not granted is answered exactly like what does not exist: 404, never 403.
            let ungranted = try await api.get("/VisionPrescription/\(glassesID)", token: family)
            let missing = try await api.get("/VisionPrescription/00000000-0000-5000-8000-000000000000", token: family)
            #expect(ungranted.status == .notFound && ungranted.outcome == "not-found" && ungranted.body == missing.body)
            for path in ["/_history", "/_history/1"] {
                #expect(
                    try await api.get("/VisionPrescription/\(glassesID)\(path)", token: family).body == missing.body)
            }
            // Attachments only where the grant includes them.
            let documents = try await api.get("/DocumentReference", token: shop)
            let binary =
                try #require(
                    (documents.resources.first?["content"] as? [[String: Any]])?.first?["attachment"] as? [String: Any])[
                    "url"] as? String
            let binaryPath = String(try #require(binary).dropFirst("http://localhost".count))
            #expect(try await api.get(binaryPath, token: shop).status == .ok)
            #expect(try await api.get(binaryPath, token: family).status == .notFound)
            #expect(try await api.get("/DocumentReference", token: family).total == 0)
            // Both prescriptions are Quintessa's (one patient record): the family reads the Patient
            // of its own grant, which says nothing of her other prescriptions.
            let patient = try await api.get(
                "/Patient/\(FHIR.patientResourceID(contacts.prescription.patient))", token: family)
            #expect(
                patient.status == .ok && !patient.text.contains("VisionPrescription")
                    && !patient.text.contains(glasses.id.hex))

            // Every read is queued for the owner's audit log, and written by the server's audit write.
            try await api.flush()
        }
        let reads = try vault.owner.log().map(\.event).filter { $0.detail?.hasPrefix("api ") == true }
        #expect(
            reads.contains {
                $0.detail == "api read Binary scan.png" && $0.client == (try? vault.client("shop"))?.id.hex
            })
        #expect(Set(reads.compactMap(\.client)).count == 2)
    }

    @Test func aRevokeARemovalAndAnExpiryCountAtTheNextRequest() async throws {
        let (vault, glasses, _) = try household()
        let glassesID = FHIR.prescriptionResourceID(glasses.id)
        try await vault.serve { api in
            let shop = try await api.token("shop")
            let family = try await api.token("family")
            #expect(try await api.get("/VisionPrescription/\(glassesID)", token: shop).status == .ok)
            // The server's audit write lands after the read and keeps what it has rendered...
            try await api.flush()
            #expect(try await api.get("/VisionPrescription/\(glassesID)", token: shop).status == .ok)
            // ...but not past the owner's revoke.
            try vault.owner.revoke(try vault.client("shop"), [glasses.id])
            #expect(try await api.get("/VisionPrescription/\(glassesID)", token: shop).status == .notFound)
            #expect(try await api.get("/VisionPrescription", token: shop).total == 0)
            // A re-grant, then the client's removal: its token stops working at once.
            try vault.grant("shop", [glasses.id])
            #expect(try await api.get("/VisionPrescription/\(glassesID)", token: shop).status == .ok)
            try vault.owner.removeClient(try vault.client("shop"))
            for path in ["/VisionPrescription", "/VisionPrescription/\(glassesID)"] {
                let answer = try await api.get(path, token: shop)
                #expect(answer.status == .unauthorized && answer.outcome == "login", "\(path): \(answer.text)")
            }
            // Expiry is judged by the server's clock: the last day still works, the next one not.
            vault.clock.advance(days: 5)
            #expect(
                try await api.get("/VisionPrescription", token: family).total == 1, "2026-06-20, the grant's last day")
            vault.clock.advance(days: 1)
            #expect(try await api.get("/VisionPrescription", token: family).total == 0, "the day after, nothing")
        }
    }

    // MARK: - A random walk of owner changes while the server serves

    /// A seeded random walk of owner changes (grants with and without an end, attachments or
    /// measurements, re-grants that keep their terms, revokes and client removals, which re-key,
    /// edits, attachments, clients added, days passing so grants expire, access requests, the
    /// server's own audit write landing after a change). After every step each client sees
    /// exactly what a model of its live grants says on every route (`expectModel`): the search's
    /// total and ids and its `_include`d Patients, 200 for each granted prescription (its newest
    /// content), its `_history` and versions, and 404 for every other one; Patient, Observation,
    /// DocumentReference and Binary only where a live grant carries them; its own access requests
    /// and no other client's; 401 once removed. The server is never restarted, so whatever it
    /// keeps must follow every write and every new day.
    @Test(arguments: [UInt64(0x5EED_0011), 0x5EED_0012, 0x5EED_0013])
    func eachClientSeesExactlyItsLiveGrantsAfterEveryStep(seed defaultSeed: UInt64) async throws {
        let seed = ProcessInfo.processInfo.environment["RXVAULT_PROPERTY_SEED"].flatMap(UInt64.init) ?? defaultSeed
        let steps = ProcessInfo.processInfo.environment["RXVAULT_PROPERTY_STEPS"].flatMap(Int.init) ?? 40
        let vault = try ServedVault()
        let model = Model()
        let patients = ["Quintessa Marlowe", "Bartholomew Oyelaran", "Ingrid Vasquez-Thorne"]
        for n in 0..<5 {
            var prescription = n % 2 == 0 ? ServedVault.glasses : ServedVault.contacts
            prescription.patient = Patient(name: patients[n % patients.count])
            let record = try vault.add(prescription)
            var entry = Model.Prescription(
                id: record.id, note: prescription.note, attachments: [],
                patient: FHIR.patientResourceID(record.prescription.patient))
            if n < 2 {
                entry.attachments.append(FHIR.attachmentResourceID(try vault.attach(Self.pixel, to: record.id).id))
            }
            model.prescriptions.append(entry)
        }
        for name in ["shop", "family", "clinic"] {
            try vault.addClient(name)
            model.clients.insert(name)
        }
        // The first two patients have visits measured (two and one); the third none.
        for (n, days) in [(0, [10, 40]), (1, [20])] {
            let patient = try vault.owner.findPatient(patients[n]).id
            for day in days {
                try vault.owner.addMeasurement(
                    EyeMeasurement(
                        id: "", date: CalendarDate(iso: "2026-04-01")!.adding(days: day)!,
                        axialLengthRight: Hundredths(raw: 2400 + day), axialLengthLeft: Hundredths(raw: 2390 + day)),
                    patient: patient)
            }
            let resourceID = model.prescriptions[n].patient
            model.observations[resourceID] = try vault.owner.measurements(of: patient).flatMap {
                FHIR.observations($0.measurement, patientReference: "Patient/" + resourceID).map(\.0)
            }
        }

        try await vault.serve { api in
            var rng = Generator(state: seed)
            for name in model.clients { model.tokens[name] = try await api.token(name) }
            try await expectModel(api, model, step: "start (seed \(seed))")
            var log: [String] = []
            var added = 0
            for step in 1...steps {
                let client = model.clients.sorted().randomElement(using: &rng)!
                var did: String
                switch Int.random(in: 0..<100, using: &rng) {
                case 0..<42:
                    // A grant of one or two prescriptions (half the time one it already has, so
                    // re-grants that keep or change their terms come up), terms restated or not.
                    let held = model.live(client).keys.sorted()
                    let pick = { (rng: inout Generator) -> Int in
                        held.isEmpty || Bool.random(using: &rng)
                            ? Int.random(in: 0..<model.prescriptions.count, using: &rng)
                            : held.randomElement(using: &rng)!
                    }
                    let targets = Array(Set((0..<Int.random(in: 1...2, using: &rng)).map { _ in pick(&rng) })).sorted()
                    var end: GrantExpiry?
                    switch Int.random(in: 0..<3, using: &rng) {
                    case 0: end = .until(vault.clock.today.adding(days: Int.random(in: 0...4, using: &rng))!)
                    case 1: end = .never
                    default: end = nil
                    }
                    let attachments: Bool? = [true, false, nil].randomElement(using: &rng)!
                    let measurements: Bool? = [true, false, nil].randomElement(using: &rng)!
                    try vault.owner.grant(
                        try vault.client(client), targets.map { model.prescriptions[$0].id }, expires: end,
                        attachments: attachments, measurements: measurements)
                    for target in targets {
                        let existing = model.live(client)[target]
                        // A new grant covers the version current now and every later one.
                        let current = try vault.owner.prescription(model.prescriptions[target].id).version
                        let lastDay: CalendarDate? =
                            switch end {
                            case .until(let day): day
                            case .never: nil
                            case nil: existing?.lastDay
                            }
                        model.grants[client, default: [:]][target] = Terms(
                            lastDay: lastDay, attachments: attachments ?? existing?.attachments ?? true,
                            measurements: measurements ?? existing?.measurements ?? false,
                            firstVersion: existing?.firstVersion ?? current)
                    }
                    did =
                        "grant \(client) \(targets) \(String(describing: end)) attachments \(String(describing: attachments))"
                        + " measurements \(String(describing: measurements))"
                case 42..<60:
                    // Revoke one live grant (or all of them now and then).
                    let live = model.live(client).keys.sorted()
                    if live.isEmpty || Int.random(in: 0..<8, using: &rng) == 0 {
                        if !(model.grants[client] ?? [:]).isEmpty {
                            try vault.owner.revoke(try vault.client(client), nil)
                        }
                        model.grants[client] = [:]
                        did = "revoke \(client) --all"
                    } else {
                        let target = live.randomElement(using: &rng)!
                        try vault.owner.revoke(try vault.client(client), [model.prescriptions[target].id])
                        model.grants[client]?[target] = nil
                        did = "revoke \(client) \(target)"
                    }
                case 60..<70:
                    // An edit: the next read must show the new content.
                    let target = Int.random(in: 0..<model.prescriptions.count, using: &rng)
                    let note = "step \(step) note \(UInt16.random(in: 0...UInt16.max, using: &rng))"
                    _ = try vault.owner.edit(model.prescriptions[target].id) { $0.note = note }
                    model.prescriptions[target].note = note
                    did = "edit \(target) --note '\(note)'"
                case 70..<75:
                    // Another attachment: clients granted attachments of that prescription see it too.
                    let target = Int.random(in: 0..<model.prescriptions.count, using: &rng)
                    model.prescriptions[target].attachments.append(
                        FHIR.attachmentResourceID(try vault.attach(Self.pixel, to: model.prescriptions[target].id).id))
                    did = "attach to \(target)"
                case 75..<80 where model.clients.count > 2:
                    try vault.owner.removeClient(try vault.client(client))
                    model.removed[client] = model.tokens[client]
                    model.clients.remove(client)
                    model.grants[client] = nil
                    did = "client remove \(client)"
                case 75..<84:
                    added += 1
                    let name = "app\(added)"
                    try vault.addClient(name)
                    model.clients.insert(name)
                    model.tokens[name] = try await api.token(name)
                    did = "client add \(name)"
                case 84..<90 where (model.requests[client] ?? []).count < AccessRequest.maximumPending:
                    // An access request (an owner write of the server's): the client sees its own.
                    let asked = try await api.post(
                        "/access-requests", token: try #require(model.tokens[client]),
                        body: #"{"reason": "step \#(step)", "kinds": ["glasses"]}"#)
                    #expect(asked.status == .accepted, "\(client) asks: \(asked.status) \(asked.text)")
                    model.requests[client, default: []].append(try #require(asked.json["id"] as? String))
                    did = "access request by \(client)"
                default:
                    // Days pass: grants whose last day is behind the server's clock end. The
                    // server's first audit write of the day also sweeps them (re-keying their
                    // prescriptions): checked before and after it.
                    vault.clock.advance(days: Int.random(in: 1...2, using: &rng))
                    model.today = vault.clock.today
                    try await expectModel(api, model, step: "day \(model.today) before the server's first write")
                    try await api.flush()
                    did = "day \(model.today), the server's first audit write"
                }
                // Now and then the server writes the reads it served before anyone asks again: its
                // own audit write then comes after the owner's change, and must not make what it
                // kept from before the change look current.
                if Int.random(in: 0..<3, using: &rng) == 0 {
                    try await api.flush()
                    did += ", the server's audit write"
                }
                log.append("\(step): \(did)")
                try await expectModel(
                    api, model, step: "after step \(step) (seed \(seed)):\n" + log.suffix(6).joined(separator: "\n"))
            }
            try await api.flush()
        }
        #expect(try vault.owner.check(readData: false).isClean)
    }

    static let pixel = Repository.fixture("attachments/valid/png-1x1.png")
}

/// RxTestSupport's SplitMix64, seeded: the same walk on every run.
typealias Generator = SeededGenerator
