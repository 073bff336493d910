import Foundation
import RxCrypto
import RxTestSupport
import Testing

@testable import RxVault

/// `ImportFormat`: what `rxvault import` takes a file for, from its content alone, on files a
/// real vault exported (rxvault JSON, a FHIR Bundle), HL7's own example, age files of them, and
/// files that are none of these.
@Suite struct ImportFormatTests {
    /// A vault with one prescription, and its exports in both formats.
    static func exports() throws -> (rxvault: [UInt8], fhir: [UInt8]) {
        let t = try TestVault()
        let vault = try t.open()
        _ = try vault.add(TestVault.glasses())
        let items = try vault.exportItems(
            ids: nil, filter: PrescriptionFilter(), for: nil, attachments: false, versions: false)
        return (
            try vault.encodeBoundExport(items, exported: "2026-06-15T10:00:00Z"),
            try FHIR.bundle(items, exported: "2026-06-15T10:00:00Z")
        )
    }

    @Test func exportsAreToldApartAndReadBack() throws {
        let (rxvault, fhir) = try Self.exports()
        #expect(ImportFormat(of: rxvault) == .rxvaultExport)
        #expect(ImportFormat(of: fhir) == .fhir)
        let (file, fhirResult) = try ImportFile.read(rxvault, fhir: FHIR.ImportOptions())
        #expect(file.count == 1 && fhirResult == nil)
        let (bundle, result) = try ImportFile.read(fhir, fhir: FHIR.ImportOptions())
        #expect(bundle.count == 1 && result != nil)
    }

    @Test func hl7sBareVisionPrescriptionIsFHIR() throws {
        let bytes = Array(
            try Data(contentsOf: URL(fileURLWithPath: Repository.fixture("fhir/visionprescription-example.json"))))
        #expect(ImportFormat(of: bytes) == .fhir)
    }

    @Test func anAgeFileIsToldBeforeItIsReadAndItsContentAfter() throws {
        let (rxvault, _) = try Self.exports()
        let identity = try AgeIdentity.generate()
        let sealed = try AgeFile.encrypt(rxvault, to: [.x25519(identity.recipient)])
        #expect(ImportFormat(of: sealed) == .age)
        #expect(ImportFormat(of: Array("\n-----BEGIN AGE ENCRYPTED FILE-----\n".utf8)) == .age)
        #expect(ImportFormat(of: try AgeFile.decrypt(sealed, with: .identities([identity]))) == .rxvaultExport)
        #expect(throws: VaultError.self) { try ImportFile.read(sealed, fhir: FHIR.ImportOptions()) }
    }

    @Test func otherFilesAreNeither() throws {
        let notJSON = ["id,patient,sphere\n1,Ada,-2.25\n", "[1, 2]", "", "%PDF-1.7", "{\"schema\": "]
        for text in notJSON {
            #expect(ImportFormat(of: Array(text.utf8)) == .notJSON, "\(text)")
        }
        #expect(ImportFormat(of: Array("{\"name\": \"Ada\"}".utf8)) == .otherJSON)
        // FHIR readers go by resourceType, so a document with both keys is FHIR.
        #expect(ImportFormat(of: Array("{\"schema\": 1, \"resourceType\": \"Bundle\"}".utf8)) == .fhir)
        do {
            _ = try ImportFile.read(Array("{\"name\": \"Ada\"}".utf8), fhir: FHIR.ImportOptions())
            Issue.record("other JSON was read")
        } catch VaultError.invalidInput(let why) {
            #expect(why == "the JSON is neither an rxvault export nor a FHIR resource")
        }
    }
}
