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
        b[6] = b[6] & 0x0f | 0x50   // version 5 style (name-based)
        b[8] = b[8] & 0x3f | 0x80   // RFC 4122 variant
        let h = b.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        let c = Array(h)
        return "\(String(c[0..<8]))-\(String(c[8..<12]))-\(String(c[12..<16]))-\(String(c[16..<20]))-\(String(c[20..<32]))"
    }

    static func mm(_ value: Hundredths) -> [String: Any] {
        ["value": value.doubleValue, "unit": "mm", "system": "http://unitsofmeasure.org", "code": "mm"]
    }

    // MARK: - Export

    public static func bundle(_ items: [ExportItem], exported: String) throws -> [UInt8] {
        var bytes: [UInt8] = []
        let stream = try Stream(output: ExportOutput { bytes += $0 }, exported: exported)
        for item in items { try stream.add(item) }
        try stream.finish()
        return bytes
    }

    /// The Bundle entries of one prescription: its Patient (the first time `patients` sees it),
    /// the Practitioner it was imported with (the first time `practitioners` sees it), its
    /// VisionPrescription and a DocumentReference per attachment.
    static func entries(_ item: ExportItem, patients: inout Set<String>, practitioners: inout Set<String>) -> [[String: Any]] {
        var entries: [[String: Any]] = []
        let rx = item.record.prescription
        let patientID = patientResourceID(rx.patient)
        if patients.insert(patientID).inserted {
            entries.append(["fullUrl": "urn:uuid:\(patientID)", "resource": patient(rx.patient)])
        }
        // A prescriber imported from a Practitioner goes back as that Practitioner, once.
        var practitionerURL: String?
        if let (id, resource) = practitionerEntry(rx.fhir) {
            if practitioners.insert(id).inserted { entries.append(["fullUrl": "urn:uuid:\(id)", "resource": resource]) }
            practitionerURL = "urn:uuid:\(id)"
        }
        let prescriptionID = prescriptionResourceID(item.record.id)
        entries.append(["fullUrl": "urn:uuid:\(prescriptionID)",
                        "resource": visionPrescription(item.record, patientReference: "urn:uuid:\(patientID)",
                                                       practitionerReference: practitionerURL, sourceID: true)])
        for attachment in item.attachments {
            let documentID = attachmentResourceID(attachment.info.id)
            entries.append(["fullUrl": "urn:uuid:\(documentID)", "resource": documentReference(
                attachment.info, patientReference: "urn:uuid:\(patientID)", prescriptionReference: "urn:uuid:\(prescriptionID)",
                content: .inline(attachment.data))])
        }
        return entries
    }

    /// The JSON text rxvault writes for a FHIR resource: sorted keys, slashes unescaped.
    public static func json(_ resource: [String: Any]) throws -> [UInt8] {
        Array(try JSONSerialization.data(withJSONObject: resource, options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]))
    }

    // MARK: - Resources (one mapping, for exports and the API alike)

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

    public static func patient(_ patient: Patient) -> [String: Any] {
        var resource: [String: Any] = ["resourceType": "Patient", "id": patientResourceID(patient), "name": [["text": patient.name]]]
        if let dob = patient.birthDate { resource["birthDate"] = dob.description }
        return resource
    }

    /// Where a DocumentReference's bytes are: inline (an export) or at a URL (the API's Binary).
    public enum AttachmentContent {
        case inline([UInt8])
        case url(String)
    }

    public static func documentReference(_ info: AttachmentInfo, patientReference: String, prescriptionReference: String,
                                         content: AttachmentContent) -> [String: Any] {
        let m = info.metadata
        var attachment: [String: Any] = ["contentType": m.type.mimeType, "size": m.size, "title": m.name, "creation": m.added]
        switch content {
        case .inline(let data):
            attachment["data"] = Data(data).base64EncodedString()
            attachment["hash"] = Data(SHA1.hash(data)).base64EncodedString()
        case .url(let url):
            attachment["url"] = url
        }
        return [
            "resourceType": "DocumentReference", "id": attachmentResourceID(info.id), "status": "current",
            "identifier": [["system": "urn:rxvault:attachment", "value": info.id.hex]],
            "subject": ["reference": patientReference],
            "date": m.added, "description": m.name,
            "content": [["attachment": attachment]],
            "context": ["related": [["reference": prescriptionReference]]],
        ]
    }

    /// `practitionerReference`: where the kept Practitioner of an imported prescriber is in the
    /// Bundle (nil: none is written, so the prescriber is its display and licence). `sourceID`:
    /// write the id the resource had where it came from (exports) instead of rxvault's (the API,
    /// whose URLs are rxvault's ids).
    public static func visionPrescription(_ record: PrescriptionRecord, patientReference: String,
                                          practitionerReference: String? = nil, sourceID: Bool = false) -> [String: Any] {
        let rx = record.prescription
        var extensions: [[String: Any]] = []
        if let expires = rx.expires { extensions.append(["url": ext("expiration-date"), "valueDate": expires.description]) }
        if let pd = rx.pupillaryDistance {
            extensions.append(["url": ext("far-pupillary-distance"), "valueQuantity": mm(pd.far)])
            if let near = pd.near { extensions.append(["url": ext("near-pupillary-distance"), "valueQuantity": mm(near)]) }
        }
        if let note = rx.note { extensions.append(["url": ext("note"), "valueString": note]) }
        extensions += prescriptionDetailExtensions(rx)
        var prescriber: [String: Any] = ["display": rx.prescriber.name]
        if let licence = rx.prescriber.licence { prescriber["identifier"] = ["value": licence] }
        if let contact = rx.prescriber.contact {
            extensions.append(["url": ext("prescriber-contact"), "valueString": contact])
        }
        var resource: [String: Any] = [
            "resourceType": "VisionPrescription", "id": prescriptionResourceID(record.id), "status": "active",
            "identifier": [["system": identifierSystem, "value": record.id.hex]],
            "created": record.recorded, "dateWritten": rx.issued.description,
            "patient": ["reference": patientReference], "prescriber": prescriber,
            "lensSpecification": rx.eyes.map { eye, lens in lensSpecification(lens, eye: eye, kind: rx.kind) },
        ]
        if !extensions.isEmpty { resource["extension"] = extensions }
        if let kept = rx.fhir { restore(kept, into: &resource, rx: rx, practitionerReference: practitionerReference, sourceID: sourceID) }
        return resource
    }

    static func lensSpecification(_ lens: LensSpecification, eye: Eye, kind: PrescriptionKind) -> [String: Any] {
        var spec: [String: Any] = [
            "product": ["coding": [["system": productSystem, "code": kind == .glasses ? "lens" : "contact"]]],
            "eye": eye == .right ? "right" : "left",
            "sphere": lens.sphere.doubleValue,
        ]
        if kind == .contacts { spec["power"] = lens.sphere.doubleValue }
        if lens.balance { spec["sphere"] = nil; spec["power"] = nil }
        if let c = lens.cylinder, !c.isZero { spec["cylinder"] = c.doubleValue }
        if let axis = lens.axis { spec["axis"] = axis }
        if let add = lens.add { spec["add"] = add.doubleValue }
        if let prism = lens.prism { spec["prism"] = prismParts(prism, eye: eye).map { ["amount": $0.0, "base": $0.1] } }
        if let bc = lens.baseCurve { spec["backCurve"] = bc.doubleValue }
        if let dia = lens.diameter { spec["diameter"] = dia.doubleValue }
        if let brand = lens.brand { spec["brand"] = brand }
        var extensions: [[String: Any]] = []
        if let v = lens.vertexDistance { extensions.append(["url": ext("vertex-distance"), "valueQuantity": mm(v)]) }
        if let pd = lens.farPD { extensions.append(["url": ext("far-pupillary-distance"), "valueQuantity": mm(pd)]) }
        if let pd = lens.nearPD { extensions.append(["url": ext("near-pupillary-distance"), "valueQuantity": mm(pd)]) }
        if case let .polar(amount, angle)? = lens.prism {
            extensions.append(["url": ext("prism-base-angle"), "extension": [
                ["url": "amount", "valueDecimal": amount.doubleValue], ["url": "angle", "valueInteger": angle]]])
        }
        extensions += lensDetailExtensions(lens)
        if !extensions.isEmpty { spec["extension"] = extensions }
        return spec
    }

    /// FHIR prism is base up/down/in/out only: a base angle becomes its vertical and horizontal
    /// parts (V = P sin t, H = P cos t; for OD 0 degrees is base in, for OS base out).
    static func prismParts(_ prism: Prism, eye: Eye) -> [(Double, String)] {
        switch prism {
        case let .rectangular(vertical, horizontal):
            return [vertical.map { ($0.amount.doubleValue, $0.base.rawValue) }, horizontal.map { ($0.amount.doubleValue, $0.base.rawValue) }].compactMap { $0 }
        case let .polar(amount, angle):
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
