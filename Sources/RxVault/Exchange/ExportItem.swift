import Foundation
import RxModel

/// One prescription ready to leave the vault: its newest version, earlier versions when asked
/// for, and its attachments with their bytes.
public struct ExportItem: Sendable {
    public let record: PrescriptionRecord
    public let history: [PrescriptionRecord]
    public let attachments: [ExportAttachment]
}

public struct ExportAttachment: Sendable {
    public let info: AttachmentInfo
    public let data: [UInt8]
}

/// A prescription read from an import file, with where it was found (for error messages).
public struct ImportItem: Sendable {
    /// "prescriptions[2]", "entry[5] VisionPrescription": where a problem is reported.
    public let position: String
    /// The id to keep (rxvault exports, or FHIR identifiers from rxvault); nil means derive one.
    public let id: RecordID?
    public let prescription: Prescription
    public let attachments: [ImportAttachment]
    /// Earlier versions, oldest first (rxvault exports made with --versions).
    public var history: [(recorded: String, prescription: Prescription)] = []
}

public struct ImportAttachment: Sendable {
    public let name: String
    public let data: [UInt8]
    /// SHA-256 the file claims, checked against the data.
    public let sha256: String?
}

/// rxvault's own export format (docs/format.md, "Export JSON v1"): round-trips everything.
public enum RxvaultExport {
    public static let schema = "rxvault/export/v1"

    struct Document: Codable {
        var schema: String
        var exported: String
        var prescriptions: [Entry]
    }

    struct Entry: Codable {
        var id: String
        var version: Int
        var recorded: String
        var prescription: Prescription
        var history: [Version]?
        var attachments: [Attachment]?
    }

    struct Version: Codable {
        var version: Int
        var recorded: String
        var prescription: Prescription
    }

    struct Attachment: Codable {
        var id: String
        var name: String
        var type: String
        var size: Int
        var sha256: String
        var added: String
        var data: String
    }

    public static func encode(_ items: [ExportItem], exported: String) throws -> [UInt8] {
        let document = Document(schema: schema, exported: exported, prescriptions: items.map { item in
            Entry(id: item.record.id.hex, version: item.record.version, recorded: item.record.recorded, prescription: item.record.prescription,
                  history: item.history.isEmpty ? nil : item.history.map { Version(version: $0.version, recorded: $0.recorded, prescription: $0.prescription) },
                  attachments: item.attachments.isEmpty ? nil : item.attachments.map { a in
                      Attachment(id: a.info.id.hex, name: a.info.metadata.name, type: a.info.metadata.type.rawValue, size: a.info.metadata.size,
                                 sha256: a.info.metadata.sha256, added: a.info.metadata.added, data: Data(a.data).base64EncodedString())
                  })
        })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        return Array(try encoder.encode(document))
    }

    /// Reads an rxvault export. Every entry must decode; problems are reported by position.
    public static func decode(_ bytes: [UInt8]) throws(ImportError) -> [ImportItem] {
        guard let top = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
              top["schema"] as? String == schema, let entries = top["prescriptions"] as? [Any] else {
            throw ImportError(problems: ["not an rxvault export (expected {\"schema\": \"\(schema)\", \"prescriptions\": [...]})"])
        }
        var items: [ImportItem] = []
        var problems: [String] = []
        for (index, raw) in entries.enumerated() {
            let position = "prescriptions[\(index)]"
            // JSONSerialization traps (it does not throw) on anything but an array or object.
            guard raw is [String: Any], JSONSerialization.isValidJSONObject(raw) else {
                problems.append("\(position): is not an object")
                continue
            }
            do {
                let data = try JSONSerialization.data(withJSONObject: raw)
                let entry = try JSONDecoder().decode(Entry.self, from: data)
                guard let id = RecordID(hex: entry.id) else { problems.append("\(position): id '\(entry.id)' is not 32 hex digits"); continue }
                var attachments: [ImportAttachment] = []
                for (k, a) in (entry.attachments ?? []).enumerated() {
                    guard let bytes = Data(base64Encoded: a.data) else {
                        problems.append("\(position).attachments[\(k)]: data is not base64")
                        continue
                    }
                    attachments.append(ImportAttachment(name: a.name, data: Array(bytes), sha256: a.sha256))
                }
                var item = ImportItem(position: position, id: id, prescription: entry.prescription, attachments: attachments)
                item.history = (entry.history ?? []).sorted { $0.version < $1.version }.map { ($0.recorded, $0.prescription) }
                items.append(item)
            } catch let error as DecodingError {
                problems.append("\(position): \(ImportError.describe(error))")
            } catch {
                problems.append("\(position): cannot be read")
            }
        }
        guard problems.isEmpty else { throw ImportError(problems: problems) }
        return items
    }
}

/// An import refused, with every problem and where it is.
public struct ImportError: Error, Sendable, CustomStringConvertible {
    public let problems: [String]
    public var description: String { problems.joined(separator: "\n") }

    static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        }
        switch error {
        case .keyNotFound(let key, let context): return "\(path(context)).\(key.stringValue) is missing"
        case .typeMismatch(_, let context), .valueNotFound(_, let context): return "\(path(context)) has the wrong type"
        case .dataCorrupted(let context): return "\(path(context)): \(context.debugDescription)"
        @unknown default: return "cannot be read"
        }
    }
}
