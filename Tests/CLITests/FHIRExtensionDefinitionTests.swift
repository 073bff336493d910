import Foundation
import RxTestSupport
import Testing

/// docs/fhir/StructureDefinition-*.json define rxvault's own FHIR extensions: every extension an
/// export writes (on the VisionPrescription or a lensSpecification) has one whose `url` is the
/// extension's, whose context is where it was written, and whose value type is the `value[x]`
/// written (or, for a complex extension, whose sub-extensions are the ones written, with theirs);
/// and every definition published is one the exporter writes.
@Suite struct FHIRExtensionDefinitionTests {
    /// url -> the StructureDefinition.
    static func definitions() throws -> [String: [String: Any]] {
        let folder = Repository.path("docs/fhir")
        var found: [String: [String: Any]] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        where name.hasPrefix("StructureDefinition-") && name.hasSuffix(".json") {
            let data = try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name))
            let definition = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            #expect(definition["resourceType"] as? String == "StructureDefinition", "\(name)")
            #expect(definition["fhirVersion"] as? String == "4.0.1", "\(name)")
            #expect(definition["kind"] as? String == "complex-type", "\(name)")
            #expect(definition["type"] as? String == "Extension", "\(name)")
            #expect(definition["derivation"] as? String == "constraint", "\(name)")
            #expect(
                definition["baseDefinition"] as? String == "http://hl7.org/fhir/StructureDefinition/Extension",
                "\(name)")
            let url = try #require(definition["url"] as? String)
            #expect(name == "StructureDefinition-\(url.split(separator: "/").last!).json", "\(name) names its url")
            found[url] = definition
        }
        return found
    }

    static func elements(_ definition: [String: Any]) -> [String: [String: Any]] {
        let list = (definition["differential"] as? [String: Any])?["element"] as? [[String: Any]] ?? []
        return Dictionary(list.map { ($0["id"] as? String ?? "", $0) }, uniquingKeysWith: { a, _ in a })
    }

    static func typeCodes(_ element: [String: Any]?) -> [String] {
        (element?["type"] as? [[String: Any]] ?? []).compactMap { $0["code"] as? String }
    }

    /// `valueQuantity` -> `Quantity`, `valueDate` -> `date`: the FHIR type a `value[x]` key names.
    static func valueType(_ extensionObject: [String: Any]) -> String? {
        guard let key = extensionObject.keys.first(where: { $0.hasPrefix("value") }) else { return nil }
        let type = String(key.dropFirst("value".count))
        // Primitive types are lower case in FHIR (date, string, code, boolean, decimal, integer).
        let complex: Set<String> = ["Quantity", "CodeableConcept", "Coding", "Reference", "Period"]
        return complex.contains(type) ? type : type.prefix(1).lowercased() + type.dropFirst()
    }

    @Test func everyExtensionWrittenIsDefinedAsWritten() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        // Prescriptions that make the exporter write every extension it has.
        let common = ["--prescriber", "Dr Ana Lee", "--prescriber-contact", "1 High St", "--issued", "2026-03-02"]
        _ = try cli.add(
            [
                "add", "glasses", "--patient", "Sam Rivera", "--expires", "2028-03-02", "--note", "anti-glare",
                "--pd", "63", "--near-pd", "60", "--vertex", "12", "--od", "-2.25 -0.75 x180 prism 2 @ 45",
                "--os", "BAL"
            ] + common)
        _ = try cli.add(
            [
                "add", "glasses", "--patient", "Sam Rivera", "--expires", "2028-03-02", "--pd-od", "31.5",
                "--pd-os", "32", "--near-pd-od", "30", "--near-pd-os", "30.5", "--od", "-1.00", "--os", "-1.25"
            ]
                + common)
        _ = try cli.add(
            [
                "add", "contacts", "--patient", "Sam Rivera", "--expires", "2027-03-02", "--lens-type", "soft",
                "--brand", "Acuvue Oasys", "--od", "-3.00 add HIGH D bc 8.6 dia 14.2", "--os",
                "-2.75 add +1.50 N bc 8.6 dia 14.2"
            ] + common)
        // The Contact Lens Rule's fields (16 CFR 315.2, 315.6(b)).
        _ = try cli.add(
            [
                "add", "contacts", "--patient", "Sam Rivera", "--expires", "2026-09-02", "--brand", "Store Brand",
                "--equivalent-brand", "Acuvue Oasys", "--manufacturer", "Johnson & Johnson", "--material",
                "senofilcon A", "--exam-date", "2026-02-20", "--prescriber-address", "1 High St, Exeter",
                "--prescriber-phone", "555-0100", "--prescriber-fax", "555-0101", "--short-expiry-reason",
                "review after corneal graft", "--od", "-3.00 bc 8.6 dia 14.2"
            ] + common)
        let export = try cli.run(["export", "--format", "fhir", "--out", "-"])
        #expect(export.status == 0, "\(export)")
        let entries = try cli.json(export.stdout)["entry"] as? [[String: Any]] ?? []
        let prescriptions = entries.compactMap { $0["resource"] as? [String: Any] }.filter {
            $0["resourceType"] as? String == "VisionPrescription"
        }
        #expect(prescriptions.count == 4)

        // (url, where, the extension as written)
        var written: [(String, String, [String: Any])] = []
        for rx in prescriptions {
            for e in rx["extension"] as? [[String: Any]] ?? [] {
                written.append((e["url"] as? String ?? "", "VisionPrescription", e))
            }
            for lens in rx["lensSpecification"] as? [[String: Any]] ?? [] {
                for e in lens["extension"] as? [[String: Any]] ?? [] {
                    written.append((e["url"] as? String ?? "", "VisionPrescription.lensSpecification", e))
                }
            }
        }
        let definitions = try Self.definitions()
        #expect(!definitions.isEmpty)
        for (url, place, e) in written {
            let definition = try #require(definitions[url], "no StructureDefinition in docs/fhir for \(url)")
            let contexts = (definition["context"] as? [[String: Any]] ?? []).compactMap { $0["expression"] as? String }
            #expect(contexts.contains(place), "\(url) written on \(place), defined for \(contexts)")
            let elements = Self.elements(definition)
            #expect(elements["Extension.url"]?["fixedUri"] as? String == url, "\(url)")
            if let type = Self.valueType(e) {
                #expect(Self.typeCodes(elements["Extension.value[x]"]) == [type], "\(url): written as \(type)")
                #expect(e["extension"] == nil, "\(url)")
            } else {
                // A complex extension: no value, and each sub-extension as its slice defines it.
                #expect(elements["Extension.value[x]"]?["max"] as? String == "0", "\(url)")
                let parts = e["extension"] as? [[String: Any]] ?? []
                #expect(!parts.isEmpty, "\(url)")
                for part in parts {
                    let name = part["url"] as? String ?? ""
                    #expect(
                        elements["Extension.extension:\(name).url"]?["fixedUri"] as? String == name, "\(url) \(name)")
                    #expect(
                        Self.typeCodes(elements["Extension.extension:\(name).value[x]"]) == [
                            Self.valueType(part) ?? ""
                        ],
                        "\(url) \(name)")
                }
            }
        }
        // Nothing published that is never written.
        let writtenURLs = Set(written.map(\.0))
        #expect(
            Set(definitions.keys) == writtenURLs,
            "defined but not written: \(Set(definitions.keys).subtracting(writtenURLs))")
    }

    /// A real FHIR library (fhir.resources, R4B models) reads every definition.
    @Test func fhirResourcesReadsTheDefinitions() throws {
        let python = Repository.fhirPython
        try #require(
            FileManager.default.isExecutableFile(atPath: python), "no Python with fhir.resources: run scripts/setup")
        let script = """
            import json, sys, glob
            from fhir.resources.R4B.structuredefinition import StructureDefinition
            for path in sorted(glob.glob(sys.argv[1] + "/StructureDefinition-*.json")):
                StructureDefinition.model_validate(json.load(open(path)))
            """
        let r = try Subprocess.run([python, "-c", script, Repository.path("docs/fhir")])
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
    }
}
