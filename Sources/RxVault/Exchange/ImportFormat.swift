import RxCrypto

/// What an import file is, told by its content alone (`rxvault import` takes no format flag):
/// an age file (decrypted first, then told again), an rxvault JSON export (a top-level `schema`
/// key), FHIR R4 JSON (a top-level `resourceType`: a VisionPrescription, a Bundle of them with
/// their Patients and DocumentReferences), other JSON, or not JSON at all (CSV, a PDF, text).
/// Only the top-level keys are looked at: the decoders read the rest one entry at a time. A
/// document with both keys is FHIR: `resourceType` is what FHIR readers go by.
public enum ImportFormat: Sendable, Equatable {
    case age
    case rxvaultExport
    case fhir
    /// A JSON object that is neither.
    case otherJSON
    /// Not a JSON object, nor an age file.
    case notJSON

    /// The format of `bytes`.
    public init(of bytes: [UInt8]) {
        if AgeFile.looksLikeAge(bytes) {
            self = .age
        } else if let keys = Self.topLevelKeys(bytes) {
            self = keys.contains("resourceType") ? .fhir : keys.contains("schema") ? .rxvaultExport : .otherJSON
        } else {
            self = .notJSON
        }
    }

    /// The top-level object's keys; nil when the bytes are not a JSON object.
    public static func topLevelKeys(_ bytes: [UInt8]) -> Set<String>? {
        guard let members = try? JSONScanner(bytes: bytes).topLevelMembers() else { return nil }
        return Set(members.map(\.key))
    }
}

extension ImportFile {
    /// The items of an rxvault export or a FHIR file (already decrypted), by content; for FHIR
    /// also what was skipped by status and given an assumed expiry (`options`). Refused
    /// (`VaultError.invalidInput`) when it is neither.
    public static func read(_ bytes: [UInt8], fhir options: FHIR.ImportOptions) throws -> (
        ImportFile, FHIR.ImportResult?
    ) {
        switch ImportFormat(of: bytes) {
        case .fhir:
            let result = try FHIR.decodeFile(bytes, options: options)
            return (result.file, result)
        case .rxvaultExport: return (try RxvaultExport.decodeFile(bytes), nil)
        case .age: throw VaultError.invalidInput("the file is still age-encrypted once decrypted")
        case .otherJSON: throw VaultError.invalidInput("the JSON is neither an rxvault export nor a FHIR resource")
        case .notJSON: throw VaultError.invalidInput("the file is neither JSON nor an age file")
        }
    }
}
