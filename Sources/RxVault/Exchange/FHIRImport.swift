import Foundation
import RxCrypto
import RxModel

extension FHIR {
    /// Reads a FHIR R4 VisionPrescription, or a Bundle of them with their Patients and the
    /// DocumentReferences that point at them (only `active` prescriptions: see `decodeFile`).
    public static func decode(_ bytes: [UInt8]) throws(ImportError) -> [ImportItem] {
        try decodeFile(bytes, options: ImportOptions()).items
    }

    /// Reads a FHIR R4 VisionPrescription, or a Bundle of them with their Patients, the
    /// Practitioners that wrote them and the DocumentReferences that point at them. Problems are
    /// collected with their position ("entry[3] VisionPrescription: ..."); any problem refuses
    /// the whole file. Prescriptions whose `status` is not in `options.statuses` are skipped
    /// (and listed in the result, with their status), never imported silently as valid ones.
    public static func decodeFile(_ bytes: [UInt8], options: ImportOptions) throws(ImportError) -> ImportResult {
        // A Bundle is read entry by entry (JSONScanner), in two passes: first the resources that
        // others refer to (patients, practitioners) and where each DocumentReference points, then
        // each VisionPrescription with what it refers to. Memory holds the file's bytes, where
        // the referenced resources are (`References`) and the items, never a tree of the whole
        // Bundle.
        let scanner = JSONScanner(bytes: bytes)
        guard let members = try? scanner.topLevelMembers(),
            let typeRange = members.first(where: { $0.key == "resourceType" })?.value,
            let type = scanner.object(typeRange) as? String
        else {
            throw ImportError(problems: ["not a FHIR resource (no resourceType)"])
        }
        if let key = JSONScanner.repeatedKey(members) {
            throw ImportError(problems: ["the key \"\(key)\" appears twice in the file's top-level object"])
        }
        var entries: [(position: Int, range: Range<Int>)] = []
        switch type {
        case "Bundle":
            let entryRange = members.first(where: { $0.key == "entry" })?.value
            let ranges = entryRange.flatMap { try? scanner.arrayElements($0) } ?? []
            entries = ranges.enumerated().map { ($0.offset, $0.element) }
        case "VisionPrescription":
            entries = [(-1, 0..<bytes.count)]
        default:
            throw ImportError(problems: [
                "a FHIR \(type) is not something to import (expected a Bundle or a VisionPrescription)"
            ])
        }
        // Pass 1: what references resolve to, and which DocumentReferences relate to what.
        var problems: [String] = []
        var result = ImportResult()
        var byReference = References(scanner: scanner)
        var prescriptions: [(position: Int, range: Range<Int>)] = []
        var documents: [(position: Int, range: Range<Int>)] = []
        var documentsByReference: [String: [Int]] = [:]
        /// A VisionPrescription by its status, a modifier: what is not active is not a valid
        /// prescription unless asked for (`--status`); a missing or unknown one is a problem.
        func admit(_ entry: (position: Int, range: Range<Int>), position: String, status: String?) {
            guard let status else {
                problems.append(
                    "\(position): status is missing (FHIR R4 requires one of \(Self.statuses.joined(separator: ", ")))")
                return
            }
            guard Self.statuses.contains(status) else {
                problems.append("\(position): status '\(status)' is none of \(Self.statuses.joined(separator: ", "))")
                return
            }
            guard options.statuses.contains(status) else {
                result.skipped.append(SkippedPrescription(position: position, status: status))
                return
            }
            prescriptions.append(entry)
        }
        for entry in entries {
            // Every entry is read with JSONReading first (several times faster than a Foundation
            // tree), which refuses a key given twice in any of its objects: Foundation, which
            // reads the rest, takes the last where JSONReading's lookups take the first, and an
            // entry must not be filtered by one status and stored with the other.
            let tree: JSONTree?
            do { tree = try JSONTree(parsing: scanner.bytes[entry.range]) } catch {
                if error.duplicateKey != nil {
                    problems.append(
                        "\(entry.position < 0 ? "VisionPrescription" : "entry[\(entry.position)]"): \(error.problem)")
                    continue
                }
                tree = nil
            }
            // A VisionPrescription needs only its type and status here (pass 2 reads the rest); of
            // the resources others refer to, pass 2 is told where they are (`References`).
            if let tree, let (position, status) = prescriptionStatus(tree, position: entry.position) {
                admit(entry, position: position, status: status)
                continue
            }
            guard let (position, fullUrl, object) = resource(scanner, entry),
                let kind = object["resourceType"] as? String
            else { continue }
            switch kind {
            case "VisionPrescription":
                admit(entry, position: position, status: object["status"] as? String)
            case "DocumentReference":
                let related = ((object["context"] as? [String: Any])?["related"] as? [[String: Any]] ?? []).compactMap {
                    $0["reference"] as? String
                }
                for reference in Set(related) { documentsByReference[reference, default: []].append(documents.count) }
                documents.append(entry)
            default:
                let names = [fullUrl, (object["id"] as? String).map { "\(kind)/\($0)" }].compactMap { $0 }
                guard let range = resourceRange(scanner, entry) else { continue }
                for name in names { byReference.add(name, kind: kind, at: range) }
            }
        }
        // Pass 2: each prescription, with its patient, its prescriber and its attachments. Every
        // problem is found before anything is imported. (Decoding each prescription a second
        // time inside the import instead of keeping the items was tried: at 100,000
        // it cost a third more time and did not lower the peak memory, which the file's bytes
        // and the import's own bookkeeping set.)
        let context = Pass2(
            scanner: scanner, options: options, byReference: byReference,
            documents: documents, documentsByReference: documentsByReference)
        // Each prescription reads only what pass 1 found, so they are decoded on all cores, a
        // slice at a time (what a slice's decoding holds at once stays small), and taken in order.
        var items: [ImportItem] = []
        items.reserveCapacity(prescriptions.count)
        for slice in prescriptions.chunks(of: Pass2.sliceSize) {
            for decoded in Array(slice).concurrentMap({ context.item($0) }) {
                problems += decoded.problems
                result.assumedExpiry += decoded.assumedExpiry
                if let item = decoded.item { items.append(item) }
            }
        }
        if items.isEmpty && problems.isEmpty && result.skipped.isEmpty {
            problems.append("the file holds no VisionPrescription")
        }
        guard problems.isEmpty else { throw ImportError(problems: problems) }
        result.file = ImportFile(items: items)
        return result
    }

    /// What pass 1 found, for decoding each prescription in pass 2. Nothing in it changes after
    /// `init`, so several threads read it at once.
    final class Pass2: Sendable {
        /// How many prescriptions are decoded on all cores before they are taken in order.
        static let sliceSize = 1024

        let scanner: JSONScanner
        let options: ImportOptions
        let byReference: References
        let documents: [(position: Int, range: Range<Int>)]
        let documentsByReference: [String: [Int]]

        init(
            scanner: JSONScanner, options: ImportOptions, byReference: References,
            documents: [(position: Int, range: Range<Int>)], documentsByReference: [String: [Int]]
        ) {
            self.scanner = scanner
            self.options = options
            self.byReference = byReference
            self.documents = documents
            self.documentsByReference = documentsByReference
        }

        /// One prescription as pass 2 decodes it: the item, or its problems (named by position);
        /// its position in `assumedExpiry` when its expiry date was set by `--assume-expiry`.
        struct Decoded: Sendable {
            var item: ImportItem?
            var problems: [String] = []
            var assumedExpiry: [String] = []
        }

        /// The prescription at `entry` with its patient, prescriber and attachments (any thread:
        /// it changes nothing shared).
        func item(_ entry: (position: Int, range: Range<Int>)) -> Decoded {
            var decoded = Decoded()
            decoded.item = item(entry, problems: &decoded.problems, assumedExpiry: &decoded.assumedExpiry)
            return decoded
        }

        private func item(
            _ entry: (position: Int, range: Range<Int>), problems: inout [String], assumedExpiry: inout [String]
        )
            -> ImportItem?
        {
            guard let (position, fullUrl, object) = FHIR.resource(scanner, entry) else { return nil }
            var local: [String] = []
            var prescription = FHIR.visionPrescription(
                object, references: byReference, patient: options.patient, problems: &local)
            let practitioner = FHIR.practitionerReference(object, references: byReference).flatMap {
                byReference.range(of: $0)
            }
            if var rx = prescription, let range = FHIR.resourceRange(scanner, entry) {
                rx.fhir = FHIR.kept(
                    scanner, resource: range, practitioner: practitioner, own: FHIR.rxvaultID(object), parsed: object)
                if rx.expires == nil, let duration = options.assumedValidity?[rx.kind] {
                    // Kept as assumed, apart from the expiry (issue 47): never passed off as written.
                    rx.assumedExpiry = duration.after(rx.issued)
                    if rx.assumedExpiry == nil {
                        local.append("\(duration) after \(rx.issued) is past \(CalendarDate.latest)")
                    }
                    assumedExpiry.append(position)
                } else if rx.kind == .contacts && rx.expires == nil {
                    if let assumed = options.assumeExpiry {
                        rx.expires = assumed.after(rx.issued)
                        if rx.expires == nil {
                            local.append("\(assumed) after \(rx.issued) is past \(CalendarDate.latest)")
                        }
                        assumedExpiry.append(position)
                    } else {
                        local.append(
                            "a contact-lens prescription needs an expiry date and this one has none (FHIR has no element "
                                + "for it; rxvault reads its expiration-date extension): give --assume-expiry contacts=1y "
                                + "to keep one that long after the issue date as assumed (or the older --assume-expiry 1y, "
                                + "which writes it as the expiry)")
                    }
                }
                prescription = rx
            }
            let names = [fullUrl, (object["id"] as? String).map { "VisionPrescription/\($0)" }].compactMap { $0 }
            let related = Set(names.flatMap { documentsByReference[$0] ?? [] }).sorted()
                .compactMap { FHIR.resource(scanner, documents[$0])?.resource }
            let attachments = FHIR.documents(related, problems: &local)
            problems += local.map { "\(position): \($0)" }
            guard let prescription, local.isEmpty else { return nil }
            return ImportItem(
                position: position, id: FHIR.recordID(object, patient: prescription.patient),
                prescription: prescription, attachments: attachments)
        }
    }

    /// An entry's resource, parsed, with its position and fullUrl; nil when it is not an object with a resource.
    static func resource(_ scanner: JSONScanner, _ entry: (position: Int, range: Range<Int>))
        -> (position: String, fullUrl: String?, resource: [String: Any])?
    {
        guard let object = scanner.object(entry.range) as? [String: Any] else { return nil }
        if entry.position < 0 { return ("VisionPrescription", nil, object) }
        guard let resource = object["resource"] as? [String: Any] else { return nil }
        return (
            "entry[\(entry.position)] \(resource["resourceType"] as? String ?? "?")", object["fullUrl"] as? String,
            resource
        )
    }

    /// When `entry` is a VisionPrescription: its position and its status (nil when it has none that
    /// is a string). Nil for anything else, and for an entry that is not JSON or has no resource
    /// object (skipped, as `resource` skips it).
    static func prescriptionStatus(_ tree: JSONTree, position entryPosition: Int) -> (
        position: String, status: String?
    )? {
        guard case .object(let members) = tree else { return nil }
        let object = JSONObjectReader(members: members, path: [])
        var resource = object
        if entryPosition >= 0 {
            guard case .object(let inner)? = object.member("resource") else { return nil }
            resource = JSONObjectReader(members: inner, path: [])
        }
        guard case .string("VisionPrescription")? = resource.member("resourceType") else { return nil }
        let position = entryPosition < 0 ? "VisionPrescription" : "entry[\(entryPosition)] VisionPrescription"
        guard case .string(let status)? = resource.member("status") else { return (position, nil) }
        return (position, status)
    }

    /// The byte range of an entry's resource (the entry itself for a lone VisionPrescription).
    static func resourceRange(_ scanner: JSONScanner, _ entry: (position: Int, range: Range<Int>)) -> Range<Int>? {
        if entry.position < 0 { return entry.range }
        // The last member of that name, as the parsed entry (`resource`) keeps it: a hostile entry
        // with two `resource` members must not be named by one and read as the other.
        return (try? scanner.objectMembers(entry.range))??.last { $0.key == "resource" }?.value
    }

    static func number(_ value: Any?) -> Hundredths? {
        guard let n = value as? NSNumber else { return nil }
        return Hundredths(exactly: n.doubleValue)
    }

    static func extensionValue(_ resource: [String: Any], _ name: String) -> Any? {
        (resource["extension"] as? [[String: Any]])?.first { $0["url"] as? String == ext(name) }
    }

    static func quantity(_ resource: [String: Any], _ name: String) -> Hundredths? {
        ((extensionValue(resource, name) as? [String: Any])?["valueQuantity"] as? [String: Any]).flatMap {
            number($0["value"])
        }
    }

    /// `patient`: the one to give the prescription when the file does not hold its Patient.
    static func visionPrescription(
        _ r: [String: Any], references: References, patient fallback: Patient? = nil,
        problems: inout [String]
    ) -> Prescription? {
        guard let dateWritten = r["dateWritten"] as? String,
            let issued = CalendarDate(iso: String(dateWritten.prefix(10)))
        else {
            // A year past 9999 has more digits than the 10 characters read as the date.
            let problem = (r["dateWritten"] as? String).flatMap {
                CalendarDate.problem(iso: String($0.prefix { $0 != "T" }))
            }
            problems.append(problem.map { "dateWritten: \($0)" } ?? "dateWritten is missing or not a date")
            return nil
        }
        let patientReference = (r["patient"] as? [String: Any])?["reference"] as? String
        let patientResource = patientReference.flatMap { references[$0] }
        var patient = Patient(name: "")
        if let p = patientResource {
            let name = (p["name"] as? [[String: Any]])?.first
            let text =
                name?["text"] as? String
                ?? ([(name?["given"] as? [String])?.joined(separator: " "), name?["family"] as? String].compactMap {
                    $0
                }.joined(separator: " "))
            patient.name = text
            // Which part is the family name, kept as the source said it (written back on export).
            patient.family = (name?["family"] as? String).flatMap { $0.isEmpty ? nil : $0 }
            patient.given = (name?["given"] as? [String]).flatMap { $0.isEmpty ? nil : $0 }
            // The parts are printed and exported as the name is: the same text rule (a name the
            // rule refuses is refused with the prescription's other problems).
            for part in [patient.family].compactMap({ $0 }) + (patient.given ?? []) {
                if let problem = TextField.name.problem(with: part) {
                    problems.append("the patient's name part: \(problem)")
                }
            }
            if (patient.given?.count ?? 0) > 20 { problems.append("the patient's name has more than 20 given names") }
            if let dob = p["birthDate"] as? String {
                patient.birthDate = CalendarDate(iso: dob)
                if patient.birthDate == nil {
                    problems.append("the patient's birthDate '\(dob)' is not a full date (YYYY-MM-DD)")
                }
            }
        } else if let fallback {
            patient = fallback
        } else {
            problems.append(
                "patient \(patientReference ?? "(none)") is not in the file: "
                    + "give --patient NAME to import it for a patient of this vault (that whole name or id, or made)"
            )
        }
        let prescriberReference = r["prescriber"] as? [String: Any]
        // The usual FHIR way is a reference to a Practitioner in the Bundle: its name, licence
        // (an NPI first) and telecom/address. A display and an identifier on the reference (what
        // rxvault writes) come first; rxvault's prescriber-contact extension before telecom.
        let practitioner = practitionerReference(r, references: references).flatMap { references[$0] }
        var prescriber = Prescriber(
            name: prescriberReference?["display"] as? String ?? practitioner.flatMap(humanName) ?? "")
        // A reference the file does not resolve, with no display (HL7's bare examples name
        // "Practitioner/example"): the reference itself names the prescriber, rather than nothing.
        if prescriber.name.isEmpty, practitioner == nil, let reference = prescriberReference?["reference"] as? String {
            prescriber.name = reference
        }
        // The licence with its system (an NPI's http://hl7.org/fhir/sid/us-npi), written back on export.
        let identifier =
            (prescriberReference?["identifier"] as? [String: Any]).flatMap { $0["value"] is String ? $0 : nil }
            ?? practitioner.flatMap(licenceIdentifier)
        prescriber.licence = identifier?["value"] as? String
        prescriber.licenceSystem = identifier?["system"] as? String
        prescriber.contact =
            (extensionValue(r, "prescriber-contact") as? [String: Any])?["valueString"] as? String
            ?? practitioner.flatMap(contact)
        let specs = r["lensSpecification"] as? [[String: Any]] ?? []
        guard !specs.isEmpty else {
            problems.append("no lensSpecification")
            return nil
        }
        var kind: PrescriptionKind?
        var rx = Prescription(kind: .glasses, patient: patient, prescriber: prescriber, issued: issued)
        for (index, spec) in specs.enumerated() {
            let code = ((spec["product"] as? [String: Any])?["coding"] as? [[String: Any]])?.first?["code"] as? String
            let specKind: PrescriptionKind? = code == "lens" ? .glasses : code == "contact" ? .contacts : nil
            guard let specKind else {
                problems.append("lensSpecification[\(index)].product is neither lens nor contact")
                continue
            }
            if let kind, kind != specKind {
                problems.append("lensSpecification[\(index)] mixes glasses and contacts")
                continue
            }
            kind = specKind
            guard let eyeCode = spec["eye"] as? String,
                let eye: Eye = eyeCode == "right" ? .right : eyeCode == "left" ? .left : nil
            else {
                problems.append("lensSpecification[\(index)].eye is neither right nor left")
                continue
            }
            guard rx[eye] == nil else {
                problems.append("lensSpecification[\(index)]: a second \(eye.label)")
                continue
            }
            guard let sphere = number(spec["sphere"]) ?? number(spec["power"]) ?? (isBalanceLens(spec) ? .zero : nil)
            else {
                problems.append("lensSpecification[\(index)]: no sphere or power")
                continue
            }
            // Both given: they are the same number (a contact lens's power is its sphere), or one is wrong.
            if let power = number(spec["power"]), power != sphere {
                problems.append(
                    "lensSpecification[\(index)] (\(eye.label)): sphere \(sphere.signedPower) and power \(power.signedPower) disagree; "
                        + "a lens has one spherical power: remove one of them or make them equal")
                continue
            }
            var lens = LensSpecification(
                sphere: sphere, cylinder: number(spec["cylinder"]), axis: spec["axis"] as? Int,
                add: number(spec["add"]), baseCurve: number(spec["backCurve"]), diameter: number(spec["diameter"]),
                brand: spec["brand"] as? String)
            lens.vertexDistance = quantity(spec, "vertex-distance")
            lens.farPD = quantity(spec, "far-pupillary-distance")
            lens.nearPD = quantity(spec, "near-pupillary-distance")
            readLensDetails(spec, index: index, into: &lens, problems: &problems)
            readLensMakers(spec, into: &lens)
            if let polar = (extensionValue(spec, "prism-base-angle") as? [String: Any])?["extension"]
                as? [[String: Any]],
                let amount = number(polar.first { $0["url"] as? String == "amount" }?["valueDecimal"]),
                let angle = polar.first(where: { $0["url"] as? String == "angle" })?["valueInteger"] as? Int
            {
                lens.prism = .polar(amount: amount, angle: angle)
            } else if let parts = spec["prism"] as? [[String: Any]], !parts.isEmpty {
                var vertical: Prism.Part<Prism.VerticalBase>?
                var horizontal: Prism.Part<Prism.HorizontalBase>?
                for part in parts {
                    guard let amount = number(part["amount"]), let base = part["base"] as? String else {
                        problems.append("lensSpecification[\(index)].prism needs an amount and a base")
                        continue
                    }
                    if let b = Prism.VerticalBase(rawValue: base), vertical == nil {
                        vertical = .init(amount: amount, base: b)
                    } else if let b = Prism.HorizontalBase(rawValue: base), horizontal == nil {
                        horizontal = .init(amount: amount, base: b)
                    } else {
                        problems.append("lensSpecification[\(index)].prism: base '\(base)' repeated or unknown")
                    }
                }
                lens.prism = FHIR.prism(vertical: vertical, horizontal: horizontal, eye: eye)
            }
            rx[eye] = lens
        }
        rx.kind = kind ?? .glasses
        if let expires = (extensionValue(r, "expiration-date") as? [String: Any])?["valueDate"] as? String {
            rx.expires = CalendarDate(iso: expires)
            if let problem = CalendarDate.problem(iso: expires) {
                problems.append("expiration-date '\(expires)': \(problem)")
            }
        }
        if let far = quantity(r, "far-pupillary-distance") {
            rx.pupillaryDistance = PupillaryDistance(far: far, near: quantity(r, "near-pupillary-distance"))
        }
        rx.note = (extensionValue(r, "note") as? [String: Any])?["valueString"] as? String
        readPrescriptionDetails(r, into: &rx, problems: &problems)
        readClinicalRecord(r, into: &rx, problems: &problems)
        return rx
    }

    /// The attachments of the DocumentReferences whose context points at the prescription.
    /// The inline attachments of `resources` (DocumentReferences related to one prescription, in Bundle order).
    static func documents(_ resources: [[String: Any]], problems: inout [String]) -> [ImportAttachment] {
        var found: [ImportAttachment] = []
        for resource in resources {
            for content in resource["content"] as? [[String: Any]] ?? [] {
                guard let attachment = content["attachment"] as? [String: Any],
                    let base64 = attachment["data"] as? String,
                    let data = Data(base64Encoded: base64)
                else {
                    problems.append(
                        "a DocumentReference has no inline base64 data (only inline attachments can be imported)")
                    continue
                }
                if let hash = attachment["hash"] as? String,
                    Data(RxCryptoSHA1.hash(Array(data))).base64EncodedString() != hash
                {
                    problems.append("a DocumentReference's data does not match its SHA-1 hash")
                    continue
                }
                if let size = attachment["size"] as? Int, size != data.count {
                    problems.append("a DocumentReference's data is not the size it claims")
                    continue
                }
                found.append(
                    ImportAttachment(
                        name: attachment["title"] as? String ?? "attachment", data: Array(data), sha256: nil))
            }
        }
        return found
    }
}

typealias RxCryptoSHA1 = SHA1
