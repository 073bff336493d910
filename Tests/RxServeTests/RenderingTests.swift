import Foundation
import RxModel
import RxTestSupport
import Testing

@testable import RxServe
@testable import RxVault

/// The API and `export --format fhir` render a resource with one mapping and one writer: the
/// bytes the API sends are the bytes the export writes for that resource, written compact, with
/// the differences `FHIR.Rendering` documents (references, ids, `meta`, the prescriber's
/// Practitioner, where an attachment's bytes are) and nothing else.
@Suite struct RenderingTests {
    @Test func theAPISendsTheExportsBytesWithTheDocumentedDifferences() async throws {
        let vault = try ServedVault()
        let glasses = try vault.add(ServedVault.glasses)
        _ = try vault.owner.edit(glasses.id) { $0.note = "an edit: version 2, with \"quotes\", a / and ünïcödé" }
        let contacts = try vault.add(ServedVault.contacts)
        try vault.attach(to: glasses.id)
        // Imported from a clinic's FHIR: kept elements, the source's ids and meta, a Practitioner.
        let clinic = Array(try Data(contentsOf: URL(fileURLWithPath: Repository.fixture("fhir/clinic-bundle.json"))))
        let options = FHIR.ImportOptions(
            statuses: ["active", "cancelled", "draft", "entered-in-error"], assumeExpiry: FHIR.ExpiryAssumption("1y"))
        let file = try FHIR.decodeFile(clinic, options: options).file
        let imported = try vault.owner.importItems(file, parser: try ServedVault.parser, dryRun: false).added
        #expect(imported.count == 5, "\(imported.count) imported: the fixture holds five VisionPrescriptions")
        let all = [glasses.id, contacts.id] + imported
        try vault.addClient("shop")
        try vault.grant("shop", all)

        // What the export writes: each entry's resource, by resource id.
        let items = try vault.owner.exportItems(
            ids: all, filter: PrescriptionFilter(), for: nil, attachments: true, versions: false)
        let bundle = try JSONTree(parsing: try FHIR.bundle(items, exported: "2026-06-15T12:00:00Z"))
        var resources: [String: JSONValue] = [:]
        for entry in try #require(Self.member(bundle, "entry")?.arrayItems) {
            let resource = try #require(Self.member(entry, "resource"))
            resources[try #require(Self.member(resource, "resourceType")?.string) + "/" + Self.entryID(entry)] =
                Self.value(resource)
        }
        let exported = resources
        #expect(
            exported.keys.contains { $0.hasPrefix("Practitioner/") }, "the clinic's prescriber is a Practitioner entry")

        try await vault.serve { api in
            let token = try await api.token("shop")
            for id in all {
                let record = try vault.owner.prescription(id)
                let resourceID = FHIR.prescriptionResourceID(id)
                var expected = try #require(exported["VisionPrescription/\(resourceID)"])
                // The documented differences, and only those.
                expected["id"] = .string(resourceID)
                expected["patient"]?["reference"] = .string(
                    "Patient/\(FHIR.patientResourceID(record.prescription.patient))")
                expected["prescriber"]?["reference"] = nil
                // meta.lastUpdated: when it last changed for this client (its version, its grant
                // to the client, the attachments the grant includes; `ClientLastUpdated`).
                let grant = try #require(try vault.owner.access(for: try vault.client("shop")).grants[id])
                let attached = try vault.owner.attachments(of: id).map(\.metadata.added)
                expected["meta"] = .fields([
                    "lastUpdated": .string(([record.recorded, grant.granted] + attached).max()!),
                    "versionId": .string(String(record.version))
                ])
                let read = try await api.get("/VisionPrescription/\(resourceID)", token: token)
                #expect(read.status == .ok)
                #expect(
                    read.text == String(decoding: JSONWriter.bytes(expected, style: .compact), as: UTF8.self), "\(id)")
                // The same bytes in a search's entry, in vread and in the history.
                let version = try await api.get(
                    "/VisionPrescription/\(resourceID)/_history/\(record.version)", token: token)
                #expect(version.body == read.body)
                let search = try await api.get("/VisionPrescription?identifier=\(id.hex)", token: token)
                #expect(search.text.contains(#""resource":\#(read.text)"#))

                let patient = try await api.get(
                    "/Patient/\(FHIR.patientResourceID(record.prescription.patient))", token: token)
                let exportedPatient = try #require(
                    exported["Patient/\(FHIR.patientResourceID(record.prescription.patient))"])
                #expect(
                    patient.text == String(decoding: JSONWriter.bytes(exportedPatient, style: .compact), as: UTF8.self))
            }

            let documents = try await api.get("/DocumentReference", token: token)
            let attachment = try #require(items.first { $0.record.id == glasses.id }?.attachments.first)
            let documentID = FHIR.attachmentResourceID(attachment.info.id)
            var expected = try #require(exported["DocumentReference/\(documentID)"])
            expected["subject"]?["reference"] = .string(
                "Patient/\(FHIR.patientResourceID(glasses.prescription.patient))")
            expected["context"] = .fields([
                "related": .array([
                    .fields(["reference": .string("VisionPrescription/\(FHIR.prescriptionResourceID(glasses.id))")])
                ])
            ])
            var content = try #require(expected["content"]?.arrayItems?.first?["attachment"])
            content["data"] = nil
            content["hash"] = nil
            content["url"] = .string("http://localhost/Binary/\(documentID)")
            expected["content"] = .array([.fields(["attachment": content])])
            #expect(
                documents.text.contains(
                    #""resource":\#(String(decoding: JSONWriter.bytes(expected, style: .compact), as: UTF8.self))"#),
                "\(documents.text)")
        }
    }

    static func member(_ tree: JSONTree, _ key: String) -> JSONTree? {
        guard case .object(let members) = tree else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// The id in an entry's `urn:uuid:` fullUrl (an imported resource's `id` is its source's).
    static func entryID(_ entry: JSONTree) throws -> String {
        try #require(member(entry, "fullUrl")?.string?.dropFirst("urn:uuid:".count)).description
    }

    /// The tree as the writer's value, numbers as they were written.
    static func value(_ tree: JSONTree) -> JSONValue {
        switch tree {
        case .null: .null
        case .bool(let b): .bool(b)
        case .number(let n): .number(n.text)
        case .string(let s): .string(s)
        case .array(let items): .array(items.map(value))
        case .object(let members): .object(members.map { ($0.key, value($0.value)) })
        }
    }
}

extension JSONTree {
    var arrayItems: [JSONTree]? { if case .array(let items) = self { items } else { nil } }
    var string: String? { if case .string(let s) = self { s } else { nil } }
}
