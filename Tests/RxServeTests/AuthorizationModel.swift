import Foundation
import HTTPTypes
import RxModel
import Testing

@testable import RxServe
@testable import RxVault

/// The model the random walk of `AuthorizationTests` keeps of what each client was granted, and
/// the check of every route against it.
extension AuthorizationTests {
    /// A grant's terms in the model: the last day (nil: no end), whether attachments and the
    /// patient's measurements are readable, and the version current when it was granted (the
    /// first its `_history` may show; a re-grant keeps it).
    struct Terms {
        var lastDay: CalendarDate?
        var attachments: Bool
        var measurements: Bool
        var firstVersion: Int
    }

    final class Model: @unchecked Sendable {
        struct Prescription {
            let id: PrescriptionID
            var note: String?
            var attachments: [String]
            /// Its Patient's resource id.
            let patient: String
            var resourceID: String { FHIR.prescriptionResourceID(id) }
        }
        var prescriptions: [Prescription] = []
        var clients: Set<String> = []
        /// Removed clients and the token each had.
        var removed: [String: String] = [:]
        var grants: [String: [Int: Terms]] = [:]
        var tokens: [String: String] = [:]
        var today = CalendarDate(iso: "2026-06-15")!
        /// The Observation ids of each Patient with measurements.
        var observations: [String: [String]] = [:]
        /// Each client's access requests (removed clients' too: no one else may read them).
        var requests: [String: [String]] = [:]

        func live(_ client: String) -> [Int: Terms] {
            (grants[client] ?? [:]).filter { $0.value.lastDay.map { $0 >= today } ?? true }
        }

        /// The Patients the client's live grants name.
        func patients(_ client: String) -> Set<String> { Set(live(client).keys.map { prescriptions[$0].patient }) }

        /// The Observations the client's live grants carry.
        func observations(_ client: String) -> Set<String> {
            Set(
                live(client).filter(\.value.measurements).keys.flatMap { observations[prescriptions[$0].patient] ?? [] }
            )
        }
    }

    /// Every client's view, on every route, against the model.
    func expectModel(_ api: APIClient, _ model: Model, step: String) async throws {
        for (name, token) in model.removed.sorted(by: { $0.key < $1.key }) {
            for path in ["/VisionPrescription", "/Observation", "/DocumentReference"] {
                let answer = try await api.get(path, token: token)
                #expect(answer.status == .unauthorized, "\(name) was removed: \(path) \(answer.status) \(step)")
            }
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
            try await expectIncludedPatients(api, token, model, name, step: step)
            var documents = 0
            for (index, prescription) in model.prescriptions.enumerated() {
                let read = try await api.get("/VisionPrescription/\(prescription.resourceID)", token: token)
                if let terms = live[index] {
                    #expect(
                        read.status == .ok && read.json["id"] as? String == prescription.resourceID,
                        "\(name) reads granted \(index): \(read.status) \(step)")
                    let served = ((read.json["meta"] as? [String: Any])?["versionId"] as? String).flatMap(Int.init)
                    try await expectHistory(
                        api, token, prescription, newest: served, from: terms.firstVersion, "\(name) \(index) \(step)")
                    if let note = prescription.note {
                        #expect(
                            read.text.contains(note), "\(name) reads \(index) without its newest note '\(note)' \(step)"
                        )
                    }
                    if terms.attachments { documents += prescription.attachments.count }
                } else {
                    #expect(read.status == .notFound, "\(name) reads ungranted \(index): \(read.status) \(step)")
                    for path in ["/_history", "/_history/1"] {
                        let answer = try await api.get(
                            "/VisionPrescription/\(prescription.resourceID)\(path)", token: token)
                        #expect(answer.status == .notFound, "\(name) \(path) of ungranted \(index) \(step)")
                    }
                }
                let attachmentsGranted = live[index]?.attachments == true
                for attachment in prescription.attachments {
                    let binary = try await api.get("/Binary/\(attachment)", token: token)
                    let expected: HTTPResponse.Status = attachmentsGranted ? .ok : .notFound
                    #expect(
                        binary.status == expected,
                        "\(name) Binary of \(index): \(binary.status), expected \(expected) \(step)")
                }
                let related = try await api.get(
                    "/DocumentReference?related=VisionPrescription/\(prescription.resourceID)", token: token)
                #expect(
                    related.total == (attachmentsGranted ? prescription.attachments.count : 0),
                    "\(name) DocumentReference of \(index): \(related.total ?? -1) \(step)")
            }
            let documentSearch = try await api.get("/DocumentReference", token: token)
            #expect(
                documentSearch.total == documents,
                "\(name) DocumentReference total \(documentSearch.total ?? -1), expected \(documents) \(step)")
            for path in [
                "/VisionPrescription/00000000-0000-5000-8000-00000000beef",
                "/Binary/00000000-0000-5000-8000-00000000beef"
            ] {
                #expect(try await api.get(path, token: token).status == .notFound, "\(name) \(path) \(step)")
            }
            try await expectPatientsAndObservations(api, token, model, name, step: step)
            try await expectAccessRequests(api, token, model, name, step: step)
        }
    }

    /// `_include=VisionPrescription:patient`: the Patients of the granted prescriptions, no other.
    func expectIncludedPatients(_ api: APIClient, _ token: String, _ model: Model, _ name: String, step: String)
        async throws
    {
        let search = try await api.get(
            "/VisionPrescription?_count=200&_include=VisionPrescription:patient", token: token)
        let included = (search.json["entry"] as? [[String: Any]] ?? []).filter {
            ($0["search"] as? [String: Any])?["mode"] as? String == "include"
        }.compactMap { ($0["resource"] as? [String: Any])?["id"] as? String }
        #expect(Set(included) == model.patients(name), "\(name) _include: \(included) \(step)")
    }

    /// The versions `_history` lists are those its grant covers, each readable (`_history/{v}`),
    /// the newest the one served; none after it, and none before the first listed nor before
    /// `from`, the version current when the grant was made (timestamps are to the second, so the
    /// first covered may be a later one recorded in the same second).
    func expectHistory(
        _ api: APIClient, _ token: String, _ prescription: Model.Prescription, newest: Int?, from: Int,
        _ what: String
    ) async throws {
        let base = "/VisionPrescription/\(prescription.resourceID)/_history"
        let history = try await api.get(base, token: token)
        let versions = history.resources.compactMap { ($0["meta"] as? [String: Any])?["versionId"] as? String }
            .compactMap(Int.init)
        #expect(
            history.status == .ok && newest != nil && newest == versions.max(),
            "\(what): reads version \(newest ?? 0), newest of _history \(versions.max() ?? 0)")
        #expect(
            history.resources.allSatisfy { $0["id"] as? String == prescription.resourceID },
            "\(what): _history of another prescription")
        guard let first = versions.min(), let last = versions.max() else { return }
        #expect(first >= from, "\(what): _history shows version \(first), from before the grant (\(from))")
        #expect(versions.sorted() == Array(first...last), "\(what): versions \(versions)")
        for version in Set([first, last]) {
            let read = try await api.get("\(base)/\(version)", token: token)
            #expect(
                read.status == .ok && (read.json["meta"] as? [String: Any])?["versionId"] as? String == String(version),
                "\(what): version \(version) \(read.status)")
        }
        for version in Set([first - 1, from - 1, last + 1]) where version >= 1 {
            #expect(
                try await api.get("\(base)/\(version)", token: token).status == .notFound,
                "\(what): version \(version) is not covered")
        }
    }

    /// A Patient only when a live grant names it; Observations only when a live grant carries the
    /// patient's measurements, searched and read one by one.
    func expectPatientsAndObservations(
        _ api: APIClient, _ token: String, _ model: Model, _ name: String, step: String
    ) async throws {
        let patients = model.patients(name)
        for patient in Set(model.prescriptions.map(\.patient)).sorted() {
            let read = try await api.get("/Patient/\(patient)", token: token)
            #expect(
                read.status == (patients.contains(patient) ? .ok : .notFound)
                    && (read.status == .notFound || read.json["id"] as? String == patient),
                "\(name) Patient \(patient): \(read.status) \(step)")
        }
        let expected = model.observations(name)
        let search = try await api.get("/Observation", token: token)
        #expect(
            search.status == .ok && search.total == expected.count
                && Set(search.resources.compactMap { $0["id"] as? String }) == expected,
            "\(name) Observation search: \(search.total ?? -1), expected \(expected.count) \(step)")
        for observation in model.observations.values.joined().sorted() {
            let read = try await api.get("/Observation/\(observation)", token: token)
            #expect(
                read.status == (expected.contains(observation) ? .ok : .notFound),
                "\(name) Observation \(observation): \(read.status) \(step)")
        }
    }

    /// A client reads its own access requests, and no other client's (answered as not found).
    func expectAccessRequests(_ api: APIClient, _ token: String, _ model: Model, _ name: String, step: String)
        async throws
    {
        for (owner, ids) in model.requests.sorted(by: { $0.key < $1.key }) {
            for id in ids {
                let read = try await api.get("/access-requests/\(id)", token: token)
                if owner == name {
                    #expect(
                        read.status == .ok && read.json["id"] as? String == id,
                        "\(name) reads its request \(id): \(read.status) \(step)")
                } else {
                    #expect(read.status == .notFound, "\(name) reads \(owner)'s request: \(read.status) \(step)")
                }
            }
        }
    }
}
