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

    /// A seeded random walk of owner changes (grants with and without an end or attachments,
    /// re-grants that keep their terms, revokes, edits, attachments, clients added and removed,
    /// days passing, the server's own audit write landing after a change). After every step each
    /// client sees exactly what a model of its live grants says: the search's total and ids, 200
    /// for each granted prescription (its newest content) and 404 for every other one, Binary and
    /// DocumentReference only where attachments are granted, 401 once removed. The server is
    /// never restarted, so whatever it keeps must follow every write and every new day.
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
            var entry = Model.Prescription(id: record.id, note: prescription.note, attachments: [])
            if n < 2 {
                entry.attachments.append(FHIR.attachmentResourceID(try vault.attach(Self.pixel, to: record.id).id))
            }
            model.prescriptions.append(entry)
        }
        for name in ["shop", "family", "clinic"] {
            try vault.addClient(name)
            model.clients.insert(name)
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
                    try vault.owner.grant(
                        try vault.client(client), targets.map { model.prescriptions[$0].id }, expires: end,
                        attachments: attachments)
                    for target in targets {
                        let existing = model.live(client)[target]
                        let lastDay: CalendarDate? =
                            switch end {
                            case .until(let day): day
                            case .never: nil
                            case nil: existing?.lastDay
                            }
                        model.grants[client, default: [:]][target] = Terms(
                            lastDay: lastDay, attachments: attachments ?? existing?.attachments ?? true)
                    }
                    did =
                        "grant \(client) \(targets) \(String(describing: end)) attachments \(String(describing: attachments))"
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
                case 75..<86:
                    added += 1
                    let name = "app\(added)"
                    try vault.addClient(name)
                    model.clients.insert(name)
                    model.tokens[name] = try await api.token(name)
                    did = "client add \(name)"
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

    /// A grant's terms in the model: the last day (nil: no end), and whether attachments are readable.
    struct Terms {
        var lastDay: CalendarDate?
        var attachments: Bool
    }

    final class Model: @unchecked Sendable {
        struct Prescription {
            let id: PrescriptionID
            var note: String?
            var attachments: [String]
            var resourceID: String { FHIR.prescriptionResourceID(id) }
        }
        var prescriptions: [Prescription] = []
        var clients: Set<String> = []
        /// Removed clients and the token each had.
        var removed: [String: String] = [:]
        var grants: [String: [Int: Terms]] = [:]
        var tokens: [String: String] = [:]
        var today = CalendarDate(iso: "2026-06-15")!

        func live(_ client: String) -> [Int: Terms] {
            (grants[client] ?? [:]).filter { $0.value.lastDay.map { $0 >= today } ?? true }
        }
    }

    /// Every client's view, against the model.
    func expectModel(_ api: APIClient, _ model: Model, step: String) async throws {
        for (name, token) in model.removed.sorted(by: { $0.key < $1.key }) {
            let answer = try await api.get("/VisionPrescription", token: token)
            #expect(answer.status == .unauthorized, "\(name) was removed: \(answer.status) \(step)")
        }
        for name in model.clients.sorted() {
            let token = try #require(model.tokens[name])
            let live = model.live(name)
            let search = try await api.get("/VisionPrescription?_count=200", token: token)
            #expect(search.status == .ok, "\(name) search: \(search.status) \(search.text) \(step)")
            #expect(
                search.total == live.count, "\(name) search total \(search.total ?? -1), expected \(live.count) \(step)"
            )
            #expect(
                Set(search.resources.compactMap { $0["id"] as? String })
                    == Set(live.keys.map { model.prescriptions[$0].resourceID }),
                "\(name) search ids \(step)")
            var documents = 0
            for (index, prescription) in model.prescriptions.enumerated() {
                let read = try await api.get("/VisionPrescription/\(prescription.resourceID)", token: token)
                if let terms = live[index] {
                    #expect(
                        read.status == .ok && read.json["id"] as? String == prescription.resourceID,
                        "\(name) reads granted \(index): \(read.status) \(step)")
                    // The newest version, as the history (read from the file on each request) says.
                    let history = try await api.get(
                        "/VisionPrescription/\(prescription.resourceID)/_history", token: token)
                    let versions = history.resources.compactMap {
                        ($0["meta"] as? [String: Any])?["versionId"] as? String
                    }.compactMap(Int.init)
                    let served = ((read.json["meta"] as? [String: Any])?["versionId"] as? String).flatMap(Int.init)
                    #expect(
                        served != nil && served == versions.max(),
                        "\(name) reads \(index) version \(served ?? 0), newest \(versions.max() ?? 0) \(step)")
                    if let note = prescription.note {
                        #expect(
                            read.text.contains(note), "\(name) reads \(index) without its newest note '\(note)' \(step)"
                        )
                    }
                    if terms.attachments { documents += prescription.attachments.count }
                } else {
                    #expect(read.status == .notFound, "\(name) reads ungranted \(index): \(read.status) \(step)")
                }
                for attachment in prescription.attachments {
                    let binary = try await api.get("/Binary/\(attachment)", token: token)
                    let expected: HTTPResponse.Status = live[index]?.attachments == true ? .ok : .notFound
                    #expect(
                        binary.status == expected,
                        "\(name) Binary of \(index): \(binary.status), expected \(expected) \(step)")
                }
            }
            let documentSearch = try await api.get("/DocumentReference", token: token)
            #expect(
                documentSearch.total == documents,
                "\(name) DocumentReference total \(documentSearch.total ?? -1), expected \(documents) \(step)")
            #expect(
                try await api.get("/VisionPrescription/00000000-0000-5000-8000-00000000beef", token: token).status
                    == .notFound)
        }
    }
}

/// RxTestSupport's SplitMix64, seeded: the same walk on every run.
typealias Generator = SeededGenerator
