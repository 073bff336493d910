import Foundation
import RxCrypto
import RxModel

extension FHIR {
    /// The codes of VisionPrescription.status (fm-status, a required binding).
    public static let statuses = ["active", "cancelled", "draft", "entered-in-error"]

    /// What a FHIR import takes in beyond the file.
    public struct ImportOptions: Sendable {
        /// The statuses imported; the rest are skipped. By default only `active`: a cancelled,
        /// draft or entered-in-error prescription is not one to fill.
        public var statuses: Set<String>
        /// The old single form of `--assume-expiry 1y`: the expiry to give contact-lens
        /// prescriptions that carry none (FHIR has no element for it), counted from each one's
        /// issue date and written as their expiry (kept for scripts that pass it).
        public var assumeExpiry: ExpiryAssumption?
        /// `--assume-expiry glasses=2y,contacts=1y`: per kind, how long after its issue date a
        /// prescription that carries no expiry is taken to expire, kept as assumed
        /// (`Prescription.assumedExpiry`), never as written. Takes the place of `assumeExpiry`.
        public var assumedValidity: AssumedValidity?
        /// The patient of prescriptions whose Patient the file does not hold (`import --patient`):
        /// HL7's own examples, and what most servers return for a search of one resource type,
        /// are VisionPrescriptions without their Patient. Prescriptions whose Patient the file
        /// holds keep it.
        public var patient: Patient?

        public init(
            statuses: Set<String> = ["active"], assumeExpiry: ExpiryAssumption? = nil, patient: Patient? = nil,
            assumedValidity: AssumedValidity? = nil
        ) {
            self.statuses = statuses
            self.assumeExpiry = assumeExpiry
            self.assumedValidity = assumedValidity
            self.patient = patient
        }

        /// `--status`: `active,draft` (codes, comma-separated) or `all` (every status except
        /// entered-in-error, which is only ever imported when named).
        public static func statuses(_ text: String) throws(ImportError) -> Set<String> {
            var chosen: Set<String> = []
            for code in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces).lowercased() })
            where !code.isEmpty {
                if code == "all" {
                    chosen.formUnion(["active", "cancelled", "draft"])
                    continue
                }
                guard FHIR.statuses.contains(code) else {
                    throw ImportError(problems: [
                        "--status '\(code)': give all or some of \(FHIR.statuses.joined(separator: ", ")), comma-separated"
                    ])
                }
                chosen.insert(code)
            }
            guard !chosen.isEmpty else {
                throw ImportError(problems: ["--status: give all or some of \(FHIR.statuses.joined(separator: ", "))"])
            }
            return chosen
        }
    }

    /// `1y`, `18m`, `26w`, `90d` (RxModel's `ValidityDuration`; the old single form of
    /// `import --assume-expiry`).
    public typealias ExpiryAssumption = ValidityDuration

    /// A VisionPrescription left out because of its status.
    public struct SkippedPrescription: Sendable {
        public let position: String
        public let status: String
    }

    /// What a FHIR file gave: the prescriptions to import, those skipped by status, and those
    /// whose expiry was assumed (`--assume-expiry`: written by the old single form, kept as
    /// assumed by the per-kind one).
    public struct ImportResult: Sendable {
        /// The prescriptions to import, as the import reads them.
        public var file = ImportFile(items: [])
        /// Every item (the file holds them in memory: see `decodeFile`).
        public var items: [ImportItem] { (try? file.items) ?? [] }
        public var skipped: [SkippedPrescription] = []
        public var assumedExpiry: [String] = []

        /// `1 cancelled, 2 draft`.
        public var skippedCounts: String {
            let counts = Dictionary(grouping: skipped, by: \.status).mapValues(\.count)
            return counts.keys.sorted().map { "\(counts[$0]!) \($0)" }.joined(separator: ", ")
        }
    }

    // MARK: - Matching (docs/format.md, "FHIR import": which prescription an amended one is)

    /// rxvault's own identifier, when rxvault wrote the resource.
    static func rxvaultID(_ r: [String: Any]) -> PrescriptionID? {
        (r["identifier"] as? [[String: Any]])?.first { $0["system"] as? String == identifierSystem }
            .flatMap { $0["value"] as? String }.flatMap { PrescriptionID(hex: $0) }
    }

    /// The id a FHIR prescription is stored under, so the same prescription (amended or not)
    /// always lands on the same record: rxvault's own identifier; else the first business
    /// identifier with a value (system and value); else the resource id with the patient's name
    /// and birth date (ids are only unique on the server that gave them); else nil (the vault
    /// derives one from the content).
    static func recordID(_ r: [String: Any], patient: Patient) -> PrescriptionID? {
        if let own = rxvaultID(r) { return own }
        if let identifier = (r["identifier"] as? [[String: Any]])?.first(where: { $0["value"] is String }) {
            return derived("identifier|\(identifier["system"] as? String ?? "")|\(identifier["value"] as! String)")
        }
        if let id = r["id"] as? String {
            return derived("id|\(id)|\(patient.name)|\(patient.birthDate?.description ?? "")")
        }
        return nil
    }

    static func derived(_ seed: String) -> PrescriptionID {
        let digest = SHA256.hash(Array("rxvault/v1 fhir \(seed)".utf8))
        return PrescriptionID(hex: digest.prefix(16).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined())!
    }

    // MARK: - The prescriber

    /// The Bundle name of the Practitioner the prescriber points at (through a PractitionerRole
    /// if need be), if the Bundle has it.
    static func practitionerReference(_ r: [String: Any], references: References) -> String? {
        guard var reference = (r["prescriber"] as? [String: Any])?["reference"] as? String else { return nil }
        reference = resolvable(reference, in: references) ?? reference
        if references.kind(of: reference) == "PractitionerRole",
            let inner = (references[reference]?["practitioner"] as? [String: Any])?["reference"] as? String
        {
            reference = resolvable(inner, in: references) ?? inner
        }
        guard references.kind(of: reference) == "Practitioner" else { return nil }
        return reference
    }

    /// `reference` as the Bundle knows it: itself, or an absolute URL's `Type/id` tail.
    static func resolvable(_ reference: String, in references: References) -> String? {
        if references.contains(reference) { return reference }
        let parts = reference.split(separator: "/")
        guard parts.count >= 2 else { return nil }
        let tail = parts.suffix(2).joined(separator: "/")
        return references.contains(tail) ? tail : nil
    }

    /// `Dr Adam Careful`: the official (else first) HumanName, its text or its parts.
    static func humanName(_ p: [String: Any]) -> String? {
        let names = p["name"] as? [[String: Any]] ?? []
        guard let name = names.first(where: { $0["use"] as? String == "official" }) ?? names.first else { return nil }
        if let text = name["text"] as? String, !text.isEmpty { return text }
        let parts =
            (name["prefix"] as? [String] ?? []) + (name["given"] as? [String] ?? [])
            + [name["family"] as? String].compactMap { $0 } + (name["suffix"] as? [String] ?? [])
        return parts.isEmpty ? nil : parts.joined(separator: " ")
    }

    static let npiSystem = "http://hl7.org/fhir/sid/us-npi"

    /// The licence number's Identifier: an NPI if there is one, else the first identifier with a value.
    static func licenceIdentifier(_ p: [String: Any]) -> [String: Any]? {
        let identifiers = (p["identifier"] as? [[String: Any]] ?? []).filter { $0["value"] is String }
        return identifiers.first { $0["system"] as? String == npiSystem } ?? identifiers.first
    }

    /// `phone 555-0100; 534 Erewhon St, PleasantVille, Vic 3999`.
    static func contact(_ p: [String: Any]) -> String? {
        var parts: [String] = []
        for telecom in p["telecom"] as? [[String: Any]] ?? [] {
            guard let value = telecom["value"] as? String else { continue }
            parts.append([telecom["system"] as? String, value].compactMap { $0 }.joined(separator: " "))
        }
        for address in p["address"] as? [[String: Any]] ?? [] {
            if let text = address["text"] as? String {
                parts.append(text)
                continue
            }
            let region = [address["state"] as? String, address["postalCode"] as? String].compactMap { $0 }.joined(
                separator: " ")
            let place: [String] = [address["city"] as? String, region, address["country"] as? String].compactMap { $0 }
            let line = (address["line"] as? [String] ?? []) + place
            let text = line.filter { !$0.isEmpty }.joined(separator: ", ")
            if !text.isEmpty { parts.append(text) }
        }
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }

    // MARK: - Kept elements

    /// The VisionPrescription members rxvault reads into its own fields (never kept as they were).
    static let modelledMembers: Set<String> = [
        "resourceType", "dateWritten", "patient", "prescriber", "lensSpecification", "identifier", "extension", "status"
    ]
    static let modelledLensMembers: Set<String> = [
        "eye", "sphere", "power", "cylinder", "axis", "add", "prism", "backCurve", "diameter", "brand", "product",
        "extension"
    ]
    /// What the resource at `range` carries that rxvault does not model (`KeptFHIR`), read from
    /// its bytes so numbers and booleans stay exactly what they were. `own`: rxvault's identifier,
    /// when rxvault wrote it: then an `id` that is rxvault's resource id for it, and a `created`
    /// in rxvault's form (a UTC time to the second, its record time), are rxvault's own (made
    /// again on export), not kept. `practitioner`: the resolved prescriber, kept whole (its
    /// reference is then made again on export, so the reference itself is not kept).
    static func kept(
        _ scanner: JSONScanner, resource range: Range<Int>, practitioner: Range<Int>?, own: PrescriptionID?,
        parsed r: [String: Any]
    ) -> KeptFHIR? {
        // What rxvault itself wrote is recognised on the parsed resource first, so an import of
        // rxvault's own export decodes nothing more (the common case on large imports).
        func onlyOwn(_ key: String, _ entries: Any?) -> Bool {
            guard let entries = entries as? [[String: Any]] else { return entries == nil }
            return entries.allSatisfy { entry in
                key == "identifier"
                    ? entry["system"] as? String == identifierSystem
                    : (entry["url"] as? String)?.hasPrefix(extensionBase) == true
            }
        }
        // JSONReading, not JSONDecoder: the same values (RxModelTests JSONReadingTests), read several times faster.
        func value(_ range: Range<Int>) -> FHIRValue? {
            guard let tree = try? JSONTree(parsing: scanner.bytes[range]) else { return nil }
            return try? JSONValueReader(tree).fhirValue()
        }
        func object(_ range: Range<Int>) -> [String: FHIRValue]? {
            if case .object(let o)? = value(range) { return o }
            return nil
        }
        guard let members = (try? scanner.objectMembers(range)) ?? nil else { return nil }
        var kept = KeptFHIR()
        for (key, valueRange) in members {
            switch key {
            case "id" where own != nil:
                if r["id"] as? String == prescriptionResourceID(own!) { continue }
                if let v = value(valueRange) { kept.resource[key] = v }
            case "created" where own != nil:
                if let text = r["created"] as? String, Vault.isTimestamp(text) { continue }
                if let v = value(valueRange) { kept.resource[key] = v }
            case "identifier", "extension":
                if onlyOwn(key, r[key]) { continue }
                // Only rxvault's own entries are modelled; every other one is kept, in order.
                guard case .array(let all)? = value(valueRange) else { continue }
                let foreign = all.filter { element in
                    guard case .object(let o) = element else { return true }
                    if key == "identifier" { return o["system"] != .string(identifierSystem) }
                    if case .string(let url)? = o["url"] { return !url.hasPrefix(extensionBase) }
                    return true
                }
                if !foreign.isEmpty { kept.resource[key] = .array(foreign) }
            case "status":
                if let status = value(valueRange), status != .string("active") { kept.resource[key] = status }
            case "dateWritten":
                // A dateTime says more than the date rxvault keeps: kept, written back while the date is unchanged.
                if case .string(let text)? = value(valueRange), text.count > 10 { kept.resource[key] = .string(text) }
            case "patient":
                // The reference is made again on export (to the exported Patient); a display or type is kept.
                guard var reference = object(valueRange) else { continue }
                reference["reference"] = nil
                if !reference.isEmpty { kept.resource[key] = .object(reference) }
            case "prescriber":
                guard var reference = object(valueRange) else { continue }
                reference["display"] = nil
                if practitioner != nil { reference["reference"] = nil }
                // The licence's value and system are modelled (`Prescriber.licence`, `.licenceSystem`).
                if case .object(let identifier)? = reference["identifier"],
                    identifier.keys.allSatisfy({ $0 == "value" || $0 == "system" })
                {
                    reference["identifier"] = nil
                }
                if !reference.isEmpty { kept.prescriber = reference }
            case "lensSpecification":
                for element in (try? scanner.arrayElements(valueRange)) ?? nil ?? [] {
                    guard let lens = (try? scanner.objectMembers(element)) ?? nil,
                        let eyeRange = lens.first(where: { $0.key == "eye" })?.value,
                        case .string(let code)? = value(eyeRange), let eye = Eye(rawValue: code)
                    else { continue }
                    var members: [String: FHIRValue] = [:]
                    for (lensKey, lensRange) in lens {
                        switch lensKey {
                        case "extension":
                            let parsed = (r["lensSpecification"] as? [[String: Any]])?.first {
                                $0["eye"] as? String == code
                            }?["extension"]
                            if onlyOwn("extension", parsed) { continue }
                            guard case .array(let all)? = value(lensRange) else { continue }
                            let foreign = all.filter {
                                guard case .object(let o) = $0, case .string(let url)? = o["url"] else { return true }
                                return !url.hasPrefix(extensionBase)
                            }
                            if !foreign.isEmpty { members[lensKey] = .array(foreign) }
                        case "product":
                            // Kept only when it says more than rxvault's own coding (a display, a text, another code).
                            let spec = (r["lensSpecification"] as? [[String: Any]])?.first {
                                $0["eye"] as? String == code
                            }
                            if let product = spec?["product"] as? [String: Any], isOwnProduct(product) { continue }
                            guard let product = value(lensRange) else { continue }
                            let code =
                                product == productValue(code: "lens")
                                ? "lens" : product == productValue(code: "contact") ? "contact" : nil
                            if code == nil { members[lensKey] = product }
                        case _ where modelledLensMembers.contains(lensKey):
                            continue
                        default:
                            if let v = value(lensRange) { members[lensKey] = v }
                        }
                    }
                    if !members.isEmpty { kept[eye] = members }
                }
            case _ where modelledMembers.contains(key):
                continue
            default:
                if let v = value(valueRange) { kept.resource[key] = v }
            }
        }
        if let practitioner, let resource = object(practitioner) { kept.practitioner = resource }
        return kept.isEmpty ? nil : kept
    }

    /// Whether a parsed product is exactly rxvault's own (one coding: its system, lens or contact).
    static func isOwnProduct(_ product: [String: Any]) -> Bool {
        guard product.count == 1, let coding = product["coding"] as? [[String: Any]], coding.count == 1,
            coding[0].count == 2,
            coding[0]["system"] as? String == productSystem, let code = coding[0]["code"] as? String
        else { return false }
        return code == "lens" || code == "contact"
    }

    /// The product CodeableConcept rxvault writes for `code`.
    static func productValue(code: String) -> FHIRValue {
        .object(["coding": .array([.object(["system": .string(productSystem), "code": .string(code)])])])
    }
}
