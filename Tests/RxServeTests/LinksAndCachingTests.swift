import Foundation
import HTTPTypes
import RxModel
import RxTestSupport
import Testing

@testable import RxServe
@testable import RxVault

/// Where the links of an answer point, and that no answer may be kept by a cache on the way.
/// The forwarded headers of a trusted proxy and the Host header need a real peer and a real
/// socket: `CLITests/ServeLinkTests` tests them on a live `rxvault serve`.
@Suite struct LinksAndCachingTests {
    func household() throws -> (ServedVault, glasses: PrescriptionRecord, contacts: PrescriptionRecord) {
        let vault = try ServedVault()
        let glasses = try vault.add(ServedVault.glasses)
        let contacts = try vault.add(ServedVault.contacts)
        try vault.attach(to: glasses.id)
        try vault.addClient("shop")
        try vault.grant("shop", [glasses.id, contacts.id])
        try vault.owner.grant(
            try vault.client("shop"), [glasses.id], expires: nil, attachments: nil, measurements: true)
        try vault.owner.addMeasurement(
            EyeMeasurement(
                id: "", date: CalendarDate(iso: "2026-05-01")!, axialLengthRight: Hundredths(raw: 2410),
                axialLengthLeft: Hundredths(raw: 2398)),
            patient: try vault.owner.findPatient(glasses.prescription.patient.name).id)
        return (vault, glasses, contacts)
    }

    static func links(_ answer: APIClient.Answer) -> [String: String] {
        (answer.json["link"] as? [[String: Any]] ?? []).reduce(into: [:]) {
            $0[$1["relation"] as? String ?? ""] = $1["url"] as? String
        }
    }

    /// A page of 0 is the total alone: no `next` or `previous`, which would be the same page, and
    /// a client following `next` until there is none would never stop (issue 47).
    @Test func aPageOfNoneLinksToNoOtherPage() async throws {
        let (vault, _, _) = try household()
        try await vault.serve { api in
            let token = try await api.token("shop")
            for query in ["_count=0", "_count=0&_offset=1", "_count=0&_offset=5"] {
                let answer = try await api.get("/VisionPrescription?\(query)", token: token)
                #expect(answer.status == .ok && answer.total == 2 && answer.resources.isEmpty, "\(answer.text)")
                #expect(Array(Self.links(answer).keys) == ["self"], "\(query): \(answer.text)")
            }
            // Pages of one still link both ways.
            let second = try await api.get("/VisionPrescription?_count=1&_offset=1", token: token)
            #expect(Set(Self.links(second).keys) == ["self", "previous"], "\(second.text)")
        }
    }

    /// `--public-url`: every absolute link starts with it, whatever the request said.
    @Test func thePublicURLStartsEveryLink() async throws {
        let (vault, glasses, _) = try household()
        var settings = ServedVault.settings
        settings.publicURL = "https://rx.example/api"
        try await vault.serve(settings) { api in
            let token = try await api.token("shop")
            let page = try await api.get("/VisionPrescription?_count=1", token: token)
            let links = Self.links(page)
            #expect(links["self"] == "https://rx.example/api/VisionPrescription?_count=1&_offset=0")
            #expect(links["next"] == "https://rx.example/api/VisionPrescription?_count=1&_offset=1")
            let glassesID = FHIR.prescriptionResourceID(glasses.id)
            let history = try await api.get("/VisionPrescription/\(glassesID)/_history", token: token)
            let documents = try await api.get("/DocumentReference", token: token)
            let observations = try await api.get("/Observation", token: token)
            var urls: [String] = []
            for answer in [page, history, documents, observations] {
                for entry in answer.json["entry"] as? [[String: Any]] ?? [] {
                    urls.append(try #require(entry["fullUrl"] as? String))
                }
            }
            let binary = try #require(
                ((documents.resources.first?["content"] as? [[String: Any]])?.first?["attachment"] as? [String: Any])?[
                    "url"] as? String)
            urls.append(binary)
            #expect(urls.count >= 5 && urls.allSatisfy { $0.hasPrefix("https://rx.example/api/") }, "\(urls)")
            let asked = try await api.post(
                "/access-requests", token: token, body: #"{"reason": "ordering lenses"}"#)
            #expect(asked.headers[.location]?.hasPrefix("https://rx.example/api/access-requests/") == true)
        }
    }

    /// Every answer says `Cache-Control: no-store`: resources, Bundles, attachments, the login
    /// routes and errors alike, so nothing between the server and a client keeps patient data.
    @Test func noAnswerMayBeStored() async throws {
        let (vault, glasses, _) = try household()
        try await vault.serve { api in
            let token = try await api.token("shop")
            let glassesID = FHIR.prescriptionResourceID(glasses.id)
            let documents = try await api.get("/DocumentReference", token: token)
            let binary = try #require(
                ((documents.resources.first?["content"] as? [[String: Any]])?.first?["attachment"] as? [String: Any])?[
                    "url"] as? String)
            let observations = try await api.get("/Observation", token: token)
            let observationID = try #require(observations.resources.first?["id"] as? String)
            let patient = glasses.prescription.patient
            let asked = try await api.post("/access-requests", token: token, body: #"{"reason": "ordering lenses"}"#)
            let requestID = try #require(asked.json["id"] as? String)
            var answers: [(String, APIClient.Answer)] = [
                ("search", try await api.get("/VisionPrescription", token: token)),
                ("read", try await api.get("/VisionPrescription/\(glassesID)", token: token)),
                ("history", try await api.get("/VisionPrescription/\(glassesID)/_history", token: token)),
                ("vread", try await api.get("/VisionPrescription/\(glassesID)/_history/1", token: token)),
                ("patient", try await api.get("/Patient/\(FHIR.patientResourceID(patient))", token: token)),
                ("observations", observations),
                ("observation", try await api.get("/Observation/\(observationID)", token: token)),
                ("documents", documents),
                ("binary", try await api.get(String(binary.dropFirst("http://localhost".count)), token: token)),
                ("access request", asked),
                ("access request status", try await api.get("/access-requests/\(requestID)", token: token)),
                ("metadata", try await api.get("/metadata")),
                ("openapi", try await api.get("/openapi.json")),
                ("challenge", try await api.post("/auth/challenge", body: #"{"recipient": "nonsense"}"#)),
                ("not found", try await api.get("/VisionPrescription/\(UUID().uuidString.lowercased())", token: token)),
                ("no token", try await api.get("/VisionPrescription/\(glassesID)")),
                ("bad search", try await api.get("/VisionPrescription?foo=\(glassesID)", token: token)),
                ("no route", try await api.get("/Encounter")),
                ("wrong method", try await api.request(.delete, "/VisionPrescription/\(glassesID)"))
            ]
            answers.append(("token", try await api.post("/auth/token", body: #"{"challenge": "x", "response": "y"}"#)))
            #expect(answers.first { $0.0 == "binary" }?.1.status == .ok)
            for (what, answer) in answers {
                #expect(answer.headers[.cacheControl] == "no-store", "\(what): \(answer.status) \(answer.headers)")
            }
        }
    }
}
