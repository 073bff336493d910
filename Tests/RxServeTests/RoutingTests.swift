import Foundation
import HTTPTypes
import RxModel
import Testing

@testable import RxServe
@testable import RxVault

/// Each route of docs/api.md in-process: what it answers, and every error as an OperationOutcome.
@Suite struct RoutingTests {
    @Test func metadataNeedsNoTokenAndIsACapabilityStatement() async throws {
        let vault = try ServedVault()
        try await vault.serve { api in
            let metadata = try await api.get("/metadata")
            #expect(metadata.status == .ok && metadata.contentType == "application/fhir+json; charset=utf-8")
            #expect(metadata.json["resourceType"] as? String == "CapabilityStatement")
            #expect(metadata.text.contains("\"fhirVersion\":\"4.0.1\""), "written compact, by the export's writer")
        }
    }

    @Test func everyErrorIsAnOperationOutcome() async throws {
        let vault = try ServedVault()
        try vault.addClient("shop")
        try await vault.serve { api in
            // No token, a made-up one, another scheme: 401 with a Bearer challenge.
            for token in [nil, "rxv_madeup"] {
                let answer = try await api.get("/VisionPrescription", token: token)
                #expect(answer.status == .unauthorized && answer.outcome == "login")
                #expect(answer.headers[.wwwAuthenticate] == "Bearer realm=\"rxvault\"")
            }
            let basic = try await api.request(.get, "/Patient/x", headers: [.authorization: "Basic c2hvcDpzaG9w"])
            #expect(basic.status == .unauthorized && basic.outcome == "login")
            // A path no route has, and a method no route takes: FHIR errors too.
            let nowhere = try await api.get("/Encounter")
            #expect(
                nowhere.status == .notFound && nowhere.outcome == "not-found"
                    && nowhere.contentType?.hasPrefix("application/fhir+json") == true)
            // A path the API has with a method it does not take: 405 with the methods it does,
            // before any token is asked for.
            for (method, path, allow) in [
                (HTTPRequest.Method.delete, "/metadata", "GET"), (.get, "/auth/token", "POST"),
                (.post, "/VisionPrescription/abc", "GET"), (.put, "/access-requests", "POST"),
                (.delete, "/access-requests/abc", "GET")
            ] {
                let answer = try await api.request(method, path)
                #expect(
                    answer.status == .methodNotAllowed && answer.outcome == "not-supported"
                        && answer.headers[.allow] == allow,
                    "\(method) \(path): \(answer.status) \(answer.headers[.allow] ?? "no Allow") \(answer.text)")
            }
            // Every answer, success or error, says it must not be sniffed and may run nothing.
            for answer in [nowhere, try await api.get("/metadata"), try await api.request(.delete, "/metadata")] {
                #expect(answer.headers[HTTPField.Name("X-Content-Type-Options")!] == "nosniff")
                #expect(answer.headers[.contentSecurityPolicy]?.contains("sandbox") == true)
            }
            // A body over 16 KiB: 413, before it is read whole.
            let big = try await api.post("/auth/challenge", body: String(repeating: "x", count: 100_000))
            #expect(big.status == .contentTooLarge && big.outcome == "too-costly")
            // Not JSON, not an object, not what was asked: 400.
            for body in ["{", "[]", #"{"recipient": 7}"#, #"{"recipient": "not-a-key"}"#] {
                let answer = try await api.post("/auth/challenge", body: body)
                #expect(answer.status == .badRequest && answer.outcome == "invalid", "\(body): \(answer.text)")
            }
        }
    }

    @Test func searchParametersAreCheckedNotIgnored() async throws {
        let vault = try ServedVault()
        let glasses = try vault.add(ServedVault.glasses)
        var cancelled = ServedVault.contacts
        cancelled.recordStatus = .cancelled
        let contacts = try vault.add(cancelled)
        try vault.addClient("shop")
        try vault.grant("shop", [glasses.id, contacts.id])
        try await vault.serve { api in
            let token = try await api.token("shop")
            for query in [
                "foo=bar", "datewritten=yesterday", "_count=-1", "_count=many", "status=revoked", "status=all",
                "_offset=-1", "_lastUpdated=today", "_lastUpdated=ge2026-13-01", "_include=VisionPrescription:performer"
            ] {
                let answer = try await api.get("/VisionPrescription?\(query)", token: token)
                #expect(answer.status == .badRequest && answer.outcome == "invalid", "\(query): \(answer.text)")
            }
            func ids(_ query: String) async throws -> [String] {
                let answer = try await api.get("/VisionPrescription?\(query)", token: token)
                #expect(answer.status == .ok, "\(query): \(answer.text)")
                return answer.resources.compactMap {
                    ($0["identifier"] as? [[String: Any]])?.first?["value"] as? String
                }
            }
            #expect(try await ids("datewritten=ge2026-01-01").count == 2)
            #expect(try await ids("datewritten=lt2026-01-01").isEmpty)
            #expect(try await ids("datewritten=ge2026-01-01&datewritten=lt2026-03-02").count == 2)
            // The status search follows the status, and a withdrawn resource carries it.
            #expect(try await ids("status=cancelled") == [contacts.id.hex])
            #expect(try await ids("status=active") == [glasses.id.hex])
            #expect(try await ids("status=active,cancelled").count == 2)
            let withdrawn = try await api.get("/VisionPrescription?status=cancelled", token: token)
            #expect(withdrawn.resources.first?["status"] as? String == "cancelled")
            #expect(try await ids("identifier=\(FHIR.identifierSystem)|\(glasses.id.hex)") == [glasses.id.hex])
            #expect(try await ids("identifier=urn:other|\(glasses.id.hex)").isEmpty)
            // The owner's short id (8 or more hex digits, as `list` shows it) finds it too.
            #expect(try await ids("identifier=\(glasses.id.short)") == [glasses.id.hex])
            #expect(try await ids("identifier=\(glasses.id.hex.prefix(4))").isEmpty, "too short to mean one")
            let patient = FHIR.patientResourceID(glasses.prescription.patient)
            #expect(try await ids("patient=Patient/\(patient)").count == 2, "one patient record for both")
            // What changed since: _lastUpdated against each resource's meta.lastUpdated.
            let meta = try #require(
                (try await api.get("/VisionPrescription?status=active", token: token)).resources.first?["meta"]
                    as? [String: Any])
            let recorded = try #require(meta["lastUpdated"] as? String)
            #expect(try await ids("_lastUpdated=ge\(recorded)").count == 2)
            #expect(try await ids("_lastUpdated=gt\(recorded)").isEmpty)
            #expect(try await ids("_lastUpdated=\(recorded.prefix(10))").count == 2)
            #expect(try await ids("_lastUpdated=lt\(recorded.prefix(10))").isEmpty)
            // _include adds each patient once, as an include entry outside the total.
            let included = try await api.get("/VisionPrescription?_include=VisionPrescription:patient", token: token)
            let modes = (included.json["entry"] as? [[String: Any]] ?? []).compactMap {
                ($0["search"] as? [String: Any])?["mode"] as? String
            }
            #expect(included.total == 2 && modes.sorted() == ["include", "match", "match"], "\(included.text)")
            #expect(included.text.contains("\"resourceType\":\"Patient\""))
            // A page larger than the largest is the largest, as FHIR servers answer; 0 is the total alone.
            let big = try await api.get("/VisionPrescription?_count=100000", token: token)
            #expect(big.status == .ok && big.resources.count == 2, "\(big.text)")
            let none = try await api.get("/VisionPrescription?_count=0", token: token)
            #expect(none.status == .ok && none.total == 2 && none.resources.isEmpty, "\(none.text)")
            #expect(try await ids("patient=\(UUID().uuidString.lowercased())").isEmpty)

            // Pages: self, next and previous links that carry the search.
            let first = try await api.get("/VisionPrescription?_count=1", token: token)
            #expect(first.total == 2 && first.resources.count == 1)
            let links = (first.json["link"] as? [[String: Any]] ?? []).reduce(into: [String: String]()) {
                $0[$1["relation"] as? String ?? ""] = $1["url"] as? String
            }
            #expect(links["self"] == "http://localhost/VisionPrescription?_count=1&_offset=0")
            let next = try #require(links["next"])
            let second = try await api.get(String(next.dropFirst("http://localhost".count)), token: token)
            #expect(second.resources.count == 1 && second.json["link"].map { "\($0)" }?.contains("previous") == true)
            #expect(Set((first.resources + second.resources).compactMap { $0["id"] as? String }).count == 2)
        }
    }

    /// Read, history and vread: a grant covers the version current when it was made and every later one.
    @Test func historyShowsTheVersionsTheGrantCovers() async throws {
        let vault = try ServedVault()
        let record = try vault.add(ServedVault.glasses)
        _ = try vault.owner.edit(record.id) { $0.note = "version 2" }
        try vault.addClient("shop")
        // The grant is a second after version 2 (timestamps are to the second).
        vault.clock.advance(seconds: 1)
        try vault.grant("shop", [record.id])
        vault.clock.advance(seconds: 1)
        _ = try vault.owner.edit(record.id) { $0.note = "version 3" }
        let resourceID = FHIR.prescriptionResourceID(record.id)
        try await vault.serve { api in
            let token = try await api.token("shop")
            let read = try await api.get("/VisionPrescription/\(resourceID)", token: token)
            #expect(read.status == .ok && read.text.contains("version 3"))
            #expect((read.json["meta"] as? [String: Any])?["versionId"] as? String == "3")
            let history = try await api.get("/VisionPrescription/\(resourceID)/_history", token: token)
            #expect(history.json["type"] as? String == "history")
            #expect(
                history.resources.compactMap { ($0["meta"] as? [String: Any])?["versionId"] as? String } == ["3", "2"])
            #expect(
                try await api.get("/VisionPrescription/\(resourceID)/_history/2", token: token).text.contains(
                    "version 2"))
            for version in ["1", "4", "x"] {
                let answer = try await api.get("/VisionPrescription/\(resourceID)/_history/\(version)", token: token)
                #expect(answer.status == .notFound && answer.outcome == "not-found", "version \(version)")
            }
        }
    }

    @Test func patientsAttachmentsAndBinaries() async throws {
        let vault = try ServedVault()
        let glasses = try vault.add(ServedVault.glasses)
        let contacts = try vault.add(ServedVault.contacts)
        let photo = try vault.attach(to: glasses.id)
        try vault.attach(to: contacts.id, name: "other.png")
        try vault.addClient("shop")
        try vault.grant("shop", [glasses.id])
        try await vault.serve { api in
            let token = try await api.token("shop")
            let patientID = FHIR.patientResourceID(glasses.prescription.patient)
            let patient = try await api.get("/Patient/\(patientID)", token: token)
            #expect(
                patient.status == .ok && patient.json["resourceType"] as? String == "Patient"
                    && patient.text.contains("Quintessa Marlowe"))
            #expect(
                try await api.get("/Patient/\(FHIR.patientResourceID(Patient(name: "Someone Else")))", token: token)
                    .status == .notFound)

            let documents = try await api.get("/DocumentReference", token: token)
            #expect(documents.total == 1, "only the granted prescription's attachment: \(documents.text)")
            let related = try await api.get(
                "/DocumentReference?related=VisionPrescription/\(FHIR.prescriptionResourceID(glasses.id))", token: token
            )
            #expect(related.total == 1)
            #expect(
                try await api.get(
                    "/DocumentReference?related=VisionPrescription/\(FHIR.prescriptionResourceID(contacts.id))",
                    token: token
                ).total == 0)
            #expect(try await api.get("/DocumentReference?subject=x", token: token).status == .badRequest)
            let document = try #require(related.resources.first)
            let attachment = try #require(
                ((document["content"] as? [[String: Any]])?.first)?["attachment"] as? [String: Any])
            #expect(attachment["data"] == nil && attachment["hash"] == nil)
            let url = try #require(attachment["url"] as? String)
            #expect(url == "http://localhost/Binary/\(FHIR.attachmentResourceID(photo.id))")

            let binary = try await api.get(String(url.dropFirst("http://localhost".count)), token: token)
            #expect(binary.status == .ok && binary.contentType == "image/png")
            #expect(
                binary.body == Array(try Data(contentsOf: URL(fileURLWithPath: ServedVault.photo))),
                "every chunk, in order")
            #expect(binary.headers[.contentLength] == String(photo.metadata.size))
            #expect(try await api.get("/Binary/\(UUID().uuidString.lowercased())", token: token).status == .notFound)
        }
    }

    @Test func accessRequestsArePendingThenAnsweredAndLimited() async throws {
        let vault = try ServedVault()
        let contacts = try vault.add(ServedVault.contacts)
        try vault.addClient("shop")
        try await vault.serve { api in
            let token = try await api.token("shop")
            // A member of the wrong type is refused, never read as "any" (schemathesis found it).
            for body in [
                #"{"reason": "x", "kinds": "contacts"}"#, #"{"reason": "x", "patient": 5}"#,
                #"{"reason": "x", "patient": null}"#, #"{"reason": "x", "kinds": ["spectacles"]}"#
            ] {
                let refused = try await api.post("/access-requests", token: token, body: body)
                #expect(refused.status == .badRequest && refused.outcome == "invalid", "\(body): \(refused.text)")
            }
            let made = try await api.post(
                "/access-requests", token: token, body: #"{"reason": "ordering contact lenses", "kinds": ["contacts"]}"#
            )
            #expect(
                made.status == .accepted && made.contentType == "application/json"
                    && made.headers[.cacheControl] == "no-store")
            let id = try #require(made.json["id"] as? String)
            #expect(made.headers[.location] == "http://localhost/access-requests/\(id)")
            #expect(made.json["status"] as? String == "pending" && (made.json["granted"] as? [String])?.isEmpty == true)

            let request = try vault.owner.accessRequest(id)
            _ = try vault.owner.approve(request, prescriptions: [contacts.id], expires: .never, attachments: nil)
            let answered = try await api.get("/access-requests/\(id)", token: token)
            #expect(answered.json["status"] as? String == "answered")
            #expect(
                answered.json["granted"] as? [String] == [
                    "VisionPrescription/\(FHIR.prescriptionResourceID(contacts.id))"
                ])
            #expect(
                try await api.get("/VisionPrescription", token: token).total == 1,
                "the approval is a grant, at the next request")

            // A denied request says only "answered"; another client's or an unknown one is 404.
            let second = try await api.post(
                "/access-requests", token: token, body: #"{"reason": "all of them please"}"#)
            let secondID = try #require(second.json["id"] as? String)
            try vault.owner.deny(try vault.owner.accessRequest(secondID))
            let denied = try await api.get("/access-requests/\(secondID)", token: token)
            #expect(denied.json["status"] as? String == "answered" && !denied.text.contains("denied"))
            try vault.addClient("other")
            let otherToken = try await api.token("other")
            #expect(try await api.get("/access-requests/\(secondID)", token: otherToken).status == .notFound)
            #expect(try await api.get("/access-requests/ffffffffffffffff", token: token).status == .notFound)
            for body in [
                #"{"why": "x"}"#, #"{"reason": "x", "kinds": ["sunglasses"]}"#, #"{"reason": "x", "kinds": [1]}"#
            ] {
                #expect(
                    try await api.post("/access-requests", token: token, body: body).outcome == "invalid", "\(body)")
            }
            // A client cannot flood the owner: five waiting at most.
            for n in 1...5 {
                #expect(
                    try await api.post("/access-requests", token: token, body: #"{"reason": "request \#(n)"}"#).status
                        == .accepted)
            }
            let flooded = try await api.post("/access-requests", token: token, body: #"{"reason": "one more"}"#)
            #expect(
                flooded.status == .tooManyRequests && flooded.outcome == "throttled"
                    && flooded.headers[.retryAfter] != nil)
        }
    }
}
