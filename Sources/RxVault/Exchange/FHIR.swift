import Foundation
import RxCrypto
import RxModel
import RxValidate

/// HL7 FHIR R4 exchange (docs/format.md, "FHIR R4 export"): a Bundle of type collection with a
/// Patient per patient, a VisionPrescription per prescription and a DocumentReference per
/// attachment. What R4 has no element for (expiry, pupillary distances, vertex distance, a note,
/// a prism written as a base angle) travels in extensions.
public enum FHIR {
    public static let extensionBase = "https://rxvault.dev/fhir/StructureDefinition/"
    static let productSystem = "http://terminology.hl7.org/CodeSystem/ex-visionprescriptionproduct"
    public static let identifierSystem = "urn:rxvault:prescription"

    static func ext(_ name: String) -> String { extensionBase + name }

    /// A UUID (urn:uuid form) from 16 bytes of `seed`'s SHA-256: stable, so exports are repeatable.
    static func uuid(_ seed: String) -> String {
        var b = Array(SHA256.hash(Array(seed.utf8)).prefix(16))
        b[6] = b[6] & 0x0f | 0x50 // version 5 style (name-based)
        b[8] = b[8] & 0x3f | 0x80 // RFC 4122 variant
        var text: [UInt8] = []
        text.reserveCapacity(36)
        for (i, byte) in b.enumerated() {
            if i == 4 || i == 6 || i == 8 || i == 10 { text.append(UInt8(ascii: "-")) }
            text.append(hexDigits[Int(byte >> 4)])
            text.append(hexDigits[Int(byte & 15)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    static func mm(_ value: Hundredths) -> JSONValue {
        .fields([
            "code": .string("mm"), "system": .string("http://unitsofmeasure.org"), "unit": .string("mm"),
            "value": .hundredths(value)
        ])
    }

    static func reference(_ reference: String) -> JSONValue { .fields(["reference": .string(reference)]) }

    // MARK: - Export

    public static func bundle(_ items: [ExportItem], exported: String) throws -> [UInt8] {
        var bytes: [UInt8] = []
        let stream = try Stream(output: ExportOutput { bytes += $0 }, exported: exported)
        try stream.add(items)
        try stream.finish()
        return bytes
    }

    /// The Bundle entries of one prescription: its Patient (the first time `patients` sees it),
    /// the Practitioner it was imported with (the first time `practitioners` sees it), its
    /// VisionPrescription and a DocumentReference per attachment.
    static func entries(_ item: ExportItem, patients: inout Set<String>, practitioners: inout Set<String>)
        -> [JSONValue]
    {
        func entry(_ id: String, _ resource: JSONValue) -> JSONValue {
            .fields(["fullUrl": .string("urn:uuid:" + id), "resource": resource])
        }
        var entries: [JSONValue] = []
        let rx = item.record.prescription
        let patientID = patientResourceID(rx.patient)
        if patients.insert(patientID).inserted {
            entries.append(entry(patientID, patientResource(rx.patient)))
        }
        // A prescriber imported from a Practitioner goes back as that Practitioner, once.
        var practitionerID: String?
        if let (id, resource) = practitionerEntry(rx.fhir) {
            if practitioners.insert(id).inserted { entries.append(entry(id, resource)) }
            practitionerID = id
        }
        entries.append(
            entry(
                prescriptionResourceID(item.record.id),
                visionPrescriptionResource(item.record, for: .export, practitionerID: practitionerID)))
        for attachment in item.attachments {
            entries.append(
                entry(
                    attachmentResourceID(attachment.info.id),
                    documentReferenceResource(
                        attachment.info, of: item.record, for: .export, content: .inline(attachment.data))))
        }
        return entries
    }

    // MARK: - Resources (one mapping and one writer, for exports and the API alike)

    /// Resource ids: stable UUIDs named by what they stand for, the same in every export and
    /// in `rxvault serve`.
    /// A patient record (format 4) is named by its id, so one person is one Patient whatever
    /// their prescriptions say; a patient written as free text, by its name and birth date.
    public static func patientResourceID(_ patient: Patient) -> String {
        if let id = patient.id { return uuid("patient-record|" + id) }
        return uuid("patient|\(patient.name)|\(patient.birthDate?.description ?? "")")
    }

    public static func prescriptionResourceID(_ id: PrescriptionID) -> String { uuid("prescription|" + id.hex) }

    public static func attachmentResourceID(_ id: AttachmentID) -> String { uuid("attachment|" + id.hex) }

    /// Where a resource is read. The mapping is one and the writer (`JSONWriter`) is one: the
    /// API sends a resource in the bytes the export writes for it, written compact, except for
    /// these differences, all about where it is read (docs/api.md, "Resources"; tested by
    /// RxServeTests `RenderingTests`):
    public enum Rendering: Sendable, Equatable {
        /// An entry of an export's collection Bundle (`export --format fhir`): a reference names
        /// another entry (`urn:uuid:<id>`); an imported VisionPrescription keeps the id it came
        /// with, and its prescriber references the Practitioner entry it came with; an
        /// attachment's bytes are inline (`data`, `hash`). Written pretty, inside the Bundle.
        case export
        /// A resource a client reads from `rxvault serve`: a reference is the resource's relative
        /// URL (`Patient/<id>`); ids are rxvault's (they are the URLs); a VisionPrescription's
        /// `meta` is the server's, its version (`versionId`, `lastUpdated`), in place of any
        /// `meta` an imported one came with; a prescriber is its display and identifier only
        /// (no endpoint serves a Practitioner); an attachment's bytes are at its Binary's URL
        /// (`url`). Written compact.
        case api

        /// How this rendering refers to the resource of `type` with id `id`.
        public func reference(_ type: String, _ id: String) -> String {
            self == .export ? "urn:uuid:" + id : type + "/" + id
        }

        /// A whole resource (or a document around resources: the API's Bundles) as its bytes.
        public func bytes(_ value: JSONValue) -> [UInt8] {
            JSONWriter.bytes(value, style: self == .export ? .pretty : .compact)
        }
    }

    /// The Patient resource (the same in both renderings): one HumanName, its `text` the name
    /// rxvault shows, with `family` and `given` when the record keeps them (an import from FHIR).
    public static func patientResource(_ patient: Patient) -> JSONValue {
        let name: JSONValue = .fields([
            "family": patient.family.map { JSONValue.string($0) },
            "given": patient.given.map { JSONValue.array($0.map { JSONValue.string($0) }) },
            "text": .string(patient.name)
        ])
        return .fields([
            "birthDate": patient.birthDate.map { .string($0.description) }, "id": .string(patientResourceID(patient)),
            "name": .array([name]), "resourceType": .string("Patient")
        ])
    }

    /// Where a DocumentReference's bytes are: inline (an export) or at a URL (the API's Binary).
    public enum AttachmentContent {
        case inline([UInt8])
        case url(String)
    }

    /// The DocumentReference of one attachment of `record`.
    public static func documentReferenceResource(
        _ info: AttachmentInfo, of record: PrescriptionRecord, for rendering: Rendering,
        content: AttachmentContent
    ) -> JSONValue {
        let m = info.metadata
        var data: JSONValue?
        var hash: JSONValue?
        var url: JSONValue?
        switch content {
        case .inline(let bytes):
            data = .string(Data(bytes).base64EncodedString())
            hash = .string(Data(SHA1.hash(bytes)).base64EncodedString())
        case .url(let location):
            url = .string(location)
        }
        let attachment: JSONValue = .fields([
            "contentType": .string(m.type.mimeType), "creation": .string(m.added), "data": data, "hash": hash,
            "size": .int(m.size), "title": .string(m.name), "url": url
        ])
        let prescription = rendering.reference("VisionPrescription", prescriptionResourceID(record.id))
        return .fields([
            "content": .array([.fields(["attachment": attachment])]),
            "context": .fields(["related": .array([reference(prescription)])]),
            "date": .string(m.added), "description": .string(m.name),
            "id": .string(attachmentResourceID(info.id)),
            "identifier": .array([.fields(["system": .string("urn:rxvault:attachment"), "value": .string(info.id.hex)])]
            ),
            "resourceType": .string("DocumentReference"), "status": .string("current"),
            "subject": reference(rendering.reference("Patient", patientResourceID(record.prescription.patient)))
        ])
    }

    /// The VisionPrescription of one version. `practitionerID`: the export's entry for the
    /// Practitioner an imported prescriber came with (`practitionerEntry`); the API has none.
    public static func visionPrescriptionResource(
        _ record: PrescriptionRecord, for rendering: Rendering,
        practitionerID: String? = nil
    ) -> JSONValue {
        let rx = record.prescription
        var extensions: [JSONValue] = []
        if let expires = rx.expires {
            extensions.append(
                .fields(["url": .string(ext("expiration-date")), "valueDate": .string(expires.description)]))
        }
        if let pd = rx.pupillaryDistance {
            extensions.append(.fields(["url": .string(ext("far-pupillary-distance")), "valueQuantity": mm(pd.far)]))
            if let near = pd.near {
                extensions.append(.fields(["url": .string(ext("near-pupillary-distance")), "valueQuantity": mm(near)]))
            }
        }
        if let note = rx.note {
            extensions.append(.fields(["url": .string(ext("note")), "valueString": .string(note)]))
        }
        extensions += prescriptionDetailExtensions(rx)
        extensions += clinicalRecordExtensions(rx)
        let prescriber: JSONValue = .fields([
            "display": .string(rx.prescriber.name),
            "identifier": rx.prescriber.licence.map {
                .fields(["system": rx.prescriber.licenceSystem.map { .string($0) }, "value": .string($0)])
            }
        ])
        if let contact = rx.prescriber.contact {
            extensions.append(.fields(["url": .string(ext("prescriber-contact")), "valueString": .string(contact)]))
        }
        var resource: JSONValue = .fields([
            "created": .string(record.recorded), "dateWritten": .string(rx.issued.description),
            "extension": extensions.isEmpty ? nil : .array(extensions),
            "id": .string(prescriptionResourceID(record.id)),
            "identifier": .array([.fields(["system": .string(identifierSystem), "value": .string(record.id.hex)])]),
            "lensSpecification": .array(rx.eyes.map { eye, lens in lensSpecification(lens, eye: eye, kind: rx.kind) }),
            "patient": reference(rendering.reference("Patient", patientResourceID(rx.patient))),
            "prescriber": prescriber,
            "resourceType": .string("VisionPrescription"), "status": .string("active")
        ])
        if let kept = rx.fhir {
            restore(
                kept, into: &resource, rx: rx,
                practitionerReference: rendering == .export ? practitionerID.map { "urn:uuid:" + $0 } : nil,
                sourceID: rendering == .export)
        }
        if rendering == .api {
            resource["meta"] = .fields([
                "lastUpdated": .string(record.recorded), "versionId": .string(String(record.version))
            ])
        }
        return resource
    }

    static func lensSpecification(_ lens: LensSpecification, eye: Eye, kind: PrescriptionKind) -> JSONValue {
        var extensions: [JSONValue] = []
        if let v = lens.vertexDistance {
            extensions.append(.fields(["url": .string(ext("vertex-distance")), "valueQuantity": mm(v)]))
        }
        if let pd = lens.farPD {
            extensions.append(.fields(["url": .string(ext("far-pupillary-distance")), "valueQuantity": mm(pd)]))
        }
        if let pd = lens.nearPD {
            extensions.append(.fields(["url": .string(ext("near-pupillary-distance")), "valueQuantity": mm(pd)]))
        }
        if case .polar(let amount, let angle)? = lens.prism {
            extensions.append(
                .fields([
                    "extension": .array([
                        .fields(["url": .string("amount"), "valueDecimal": .hundredths(amount)]),
                        .fields(["url": .string("angle"), "valueInteger": .int(angle)])
                    ]), "url": .string(ext("prism-base-angle"))
                ]))
        }
        extensions += lensDetailExtensions(lens)
        extensions += lensMakerExtensions(lens)
        // A balance lens has no prescribed power: no sphere, no power.
        let sphere: JSONValue? = lens.balance ? nil : .hundredths(lens.sphere)
        return .fields([
            "add": lens.add.map { .hundredths($0) },
            "axis": lens.axis.map { .int($0) },
            "backCurve": lens.baseCurve.map { .hundredths($0) },
            "brand": lens.brand.map { .string($0) },
            "cylinder": lens.cylinder.flatMap { $0.isZero ? nil : JSONValue.hundredths($0) },
            "diameter": lens.diameter.map { .hundredths($0) },
            "extension": extensions.isEmpty ? nil : .array(extensions),
            "eye": .string(eye == .right ? "right" : "left"),
            "power": kind == .contacts ? sphere : nil,
            "prism": lens.prism.map { prism -> JSONValue in
                .array(prismParts(prism, eye: eye).map { .fields(["amount": .double($0.0), "base": .string($0.1)]) })
            },
            "product": .fields([
                "coding": .array([
                    .fields(["code": .string(kind == .glasses ? "lens" : "contact"), "system": .string(productSystem)])
                ])
            ]),
            "sphere": sphere
        ])
    }

    /// A prism read from FHIR's base up/down/in/out parts. Parts in 0.25 steps are kept as
    /// written. Parts in 0.01 steps are what a base angle becomes (`prismParts`: rxvault writes
    /// 2 @ 45 as 1.41 up and 1.41 in, and a server that drops rxvault's extension hands back only
    /// those): when they are exactly the parts of one polar prism with its amount in 0.25 steps
    /// and a whole-degree angle, that prism is what was prescribed, and it is read back. Anything
    /// else stays rectangular for the rules to refuse by their 0.25 step.
    static func prism(
        vertical: Prism.Part<Prism.VerticalBase>?, horizontal: Prism.Part<Prism.HorizontalBase>?, eye: Eye
    ) -> Prism {
        let written = Prism.rectangular(vertical: vertical, horizontal: horizontal)
        guard written.amounts.contains(where: { !$0.isMultiple(of: 25) }) else { return written }
        let v = vertical.map { $0.base == .up ? $0.amount.doubleValue : -$0.amount.doubleValue } ?? 0
        let towardZero = (eye == .right) == (horizontal?.base == .in)
        let h = horizontal.map { towardZero ? $0.amount.doubleValue : -$0.amount.doubleValue } ?? 0
        let amount = Hundredths(raw: Int(((v * v + h * h).squareRoot() * 4).rounded()) * 25)
        guard amount.raw > 0 else { return written }
        var degrees = Int((atan2(v, h) * 180 / .pi).rounded())
        if degrees < 0 { degrees += 360 }
        let given = prismParts(written, eye: eye)
        for angle in [degrees, degrees - 1, degrees + 1] where (0...360).contains(angle) {
            let polar = Prism.polar(amount: amount, angle: angle)
            let parts = prismParts(polar, eye: eye)
            if parts.count == given.count, zip(parts, given).allSatisfy({ $0.0 == $1.0 && $0.1 == $1.1 }) {
                return polar
            }
        }
        return written
    }

    /// FHIR prism is base up/down/in/out only: a base angle becomes its vertical and horizontal
    /// parts (V = P sin t, H = P cos t; for OD 0 degrees is base in, for OS base out).
    static func prismParts(_ prism: Prism, eye: Eye) -> [(Double, String)] {
        switch prism {
        case .rectangular(let vertical, let horizontal):
            return [
                vertical.map { ($0.amount.doubleValue, $0.base.rawValue) },
                horizontal.map { ($0.amount.doubleValue, $0.base.rawValue) }
            ].compactMap { $0 }
        case .polar(let amount, let angle):
            let radians = Double(angle) * .pi / 180
            let v = (amount.doubleValue * sin(radians) * 100).rounded() / 100
            let h = (amount.doubleValue * cos(radians) * 100).rounded() / 100
            var parts: [(Double, String)] = []
            if v != 0 { parts.append((abs(v), v > 0 ? "up" : "down")) }
            if h != 0 {
                let towardZero = eye == .right ? "in" : "out"
                let towardOneEighty = eye == .right ? "out" : "in"
                parts.append((abs(h), h > 0 ? towardZero : towardOneEighty))
            }
            return parts
        }
    }
}
