import Foundation
import RxModel

/// One prescription ready to leave the vault: its newest version, earlier versions when asked
/// for, and its attachments with their bytes.
public struct ExportItem: Sendable {
    public let record: PrescriptionRecord
    public let history: [PrescriptionRecord]
    public let attachments: [ExportAttachment]

    /// The bytes of its attachments: what a batch of items holds beyond their text.
    var attachmentBytes: Int { attachments.reduce(0) { $0 + $1.data.count } }
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
    public let id: PrescriptionID?
    public let prescription: Prescription
    public let attachments: [ImportAttachment]
    /// Earlier versions, oldest first (rxvault exports made with --versions).
    public var history: [(recorded: String, prescription: Prescription)] = []

    /// The bytes of its attachments: what a batch of items holds beyond their text.
    var attachmentBytes: Int { attachments.reduce(0) { $0 + $1.data.count } }
}

public struct ImportAttachment: Sendable {
    public let name: String
    public let data: [UInt8]
    /// SHA-256 the file claims, checked against the data.
    public let sha256: String?
}

/// Which vault wrote an export, and the owner's MAC over its content (docs/format.md, "Export
/// JSON v1", `vault`). Only a file that carries the MAC of this vault's owner may update
/// prescriptions that already exist here: ids are visible in every export, so without it
/// anyone could write a file that replaces a prescription.
public struct ExportBinding: Sendable {
    public let vaultID: [UInt8]
    public let mac: [UInt8]
    /// The canonical content the MAC covers, recomputed from what was read (never taken from the file).
    public let content: [UInt8]
}

/// What an import file holds: its prescriptions, handed over one at a time (`forEachItem`), and
/// the binding of an rxvault export that has one. An rxvault export is decoded a batch of entries
/// at a time as the import goes, so a file of 100,000 prescriptions never has them all in memory
/// at once.
public struct ImportFile: Sendable {
    /// How many items the file holds (entries that do not decode included): for progress.
    public let count: Int
    /// The patient records an owner's rxvault export carries (revision 1.2), each read whole
    /// before the prescriptions (there are few, and they are small); those that do not read are
    /// refused with the entries, by position.
    public let patients: [ImportPatient]
    /// The owner's MAC over `patients` (`vault.patientsMac`) with what it covers; nil when the
    /// file has no patients or does not bind them.
    public let patientsBinding: ExportBinding?
    private let read: @Sendable (_ each: (ImportItem) throws -> Void) throws -> ExportBinding?

    public init(
        items: [ImportItem], binding: ExportBinding? = nil, patients: [ImportPatient] = [],
        patientsBinding: ExportBinding? = nil
    ) {
        count = items.count
        self.patients = patients
        self.patientsBinding = patientsBinding
        read = { each in
            for item in items { try each(item) }
            return binding
        }
    }

    init(
        count: Int, patients: [ImportPatient] = [], patientsBinding: ExportBinding? = nil,
        read: @escaping @Sendable (_ each: (ImportItem) throws -> Void) throws -> ExportBinding?
    ) {
        self.count = count
        self.patients = patients
        self.patientsBinding = patientsBinding
        self.read = read
    }

    /// Calls `each` for every item that decodes, in file order, then returns the binding (known
    /// only once every entry was read). Throws an `ImportError` naming every entry that does not
    /// decode, after the others were given to `each`; whatever `each` throws ends the reading.
    public func forEachItem(_ each: (ImportItem) throws -> Void) throws -> ExportBinding? {
        try read(each)
    }

    /// Every item, read into memory (small files, tests).
    public var items: [ImportItem] {
        get throws {
            var items: [ImportItem] = []
            _ = try forEachItem { items.append($0) }
            return items
        }
    }

    /// The binding alone (reads the whole file).
    public var binding: ExportBinding? {
        get throws { try forEachItem { _ in } }
    }
}

/// rxvault's own export format (docs/format.md, "Export JSON v1"): round-trips everything.
public enum RxvaultExport {
    public static let schema = "rxvault/export/v1"

    struct Document: Codable {
        var schema: String
        var exported: String
        var vault: Binding?
        var prescriptions: [Entry]
    }

    /// `"vault": {"id": "<32 hex>", "mac": "<64 hex>"}`: absent in client exports (a client does not hold the owner's key).
    struct Binding: Codable {
        var id: String
        var mac: String
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

    /// The export file. `bind` (the owner's vault) turns the canonical content into a binding;
    /// nil writes an unbound file (a client's export). Made by `Stream`, as a streamed export is.
    public static func encode(
        _ items: [ExportItem], exported: String, patients: [ExportPatient] = [],
        bind: ((_ content: [UInt8]) throws -> (vaultID: [UInt8], mac: [UInt8]))? = nil,
        bindPatients: ((_ content: [UInt8]) throws -> [UInt8])? = nil
    ) throws -> [UInt8] {
        var bytes: [UInt8] = []
        let stream = try Stream(
            output: ExportOutput { bytes += $0 }, exported: exported, patients: patients, bind: bind,
            bindPatients: bindPatients)
        try stream.add(items)
        try stream.finish()
        return bytes
    }

    /// One prescription as the export writes it.
    static func entry(_ item: ExportItem) -> Entry {
        Entry(
            id: item.record.id.hex, version: item.record.version, recorded: item.record.recorded,
            prescription: item.record.prescription,
            history: item.history.isEmpty
                ? nil
                : item.history.map {
                    Version(version: $0.version, recorded: $0.recorded, prescription: $0.prescription)
                },
            attachments: item.attachments.isEmpty
                ? nil
                : item.attachments.map { a in
                    Attachment(
                        id: a.info.id.hex, name: a.info.metadata.name, type: a.info.metadata.type.rawValue,
                        size: a.info.metadata.size,
                        sha256: a.info.metadata.sha256, added: a.info.metadata.added,
                        data: Data(a.data).base64EncodedString())
                })
    }

    /// One prescription as the export writes it, in the bytes JSONEncoder makes from `entry(item)`
    /// with sorted keys (keys written here in that order). `attachmentData` false writes every
    /// attachment's `data` empty, as the binding covers it (`stripped`).
    static func writeEntry(_ item: ExportItem, to w: inout JSONWriter, attachmentData: Bool) throws {
        let record = item.record
        w.beginObject()
        if !item.attachments.isEmpty {
            w.key("attachments")
            w.beginArray()
            for a in item.attachments {
                let m = a.info.metadata
                w.element()
                w.beginObject()
                w.key("added")
                w.string(m.added)
                w.key("data")
                w.string(attachmentData ? Data(a.data).base64EncodedString() : "")
                w.key("id")
                w.string(a.info.id.hex)
                w.key("name")
                w.string(m.name)
                w.key("sha256")
                w.string(m.sha256)
                w.key("size")
                w.int(m.size)
                w.key("type")
                w.string(m.type.rawValue)
                w.endObject()
            }
            w.endArray()
        }
        if !item.history.isEmpty {
            w.key("history")
            w.beginArray()
            for version in item.history {
                w.element()
                w.beginObject()
                w.key("prescription")
                try version.prescription.writeJSON(to: &w)
                w.key("recorded")
                w.string(version.recorded)
                w.key("version")
                w.int(version.version)
                w.endObject()
            }
            w.endArray()
        }
        w.key("id")
        w.string(record.id.hex)
        w.key("prescription")
        try record.prescription.writeJSON(to: &w)
        w.key("recorded")
        w.string(record.recorded)
        w.key("version")
        w.int(record.version)
        w.endObject()
    }

    /// What the binding MAC covers: the `prescriptions` array as decoded, re-encoded as compact
    /// JSON with sorted keys and every attachment's `data` left empty (each attachment is bound
    /// through its `sha256`, which an import checks against the data). Recomputed from the
    /// decoded entries, so the file's whitespace and key order do not matter; any change to a
    /// value does.
    static func boundContent(_ entries: [Entry]) throws -> [UInt8] {
        let stripped = entries.map(stripped)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(stripped))
    }

    /// Reads an rxvault export. Every entry must decode; problems are reported by position.
    public static func decode(_ bytes: [UInt8]) throws(ImportError) -> [ImportItem] {
        do { return try decodeFile(bytes).items } catch let error as ImportError { throw error } catch {
            throw ImportError(problems: ["cannot be read"])
        }
    }

    /// Reads an rxvault export with its binding, if it has one. A `vault` that is present but
    /// malformed is refused (a file that claims a binding must carry a readable one). Only the
    /// structure is read here; the entries are decoded a batch at a time as `forEachItem` goes.
    public static func decodeFile(_ bytes: [UInt8]) throws(ImportError) -> ImportFile {
        // Entries located first (JSONScanner), decoded a batch at a time: the file's bytes stay
        // the largest thing in memory, with at most a batch of 256 entries or 16 MiB decoded.
        let scanner = JSONScanner(bytes: bytes)
        let notAnExport = ImportError(problems: [
            "not an rxvault export (expected {\"schema\": \"\(schema)\", \"prescriptions\": [...]})"
        ])
        guard let members = try? scanner.topLevelMembers(),
            let schemaRange = members.first(where: { $0.key == "schema" })?.value,
            scanner.object(schemaRange) as? String == schema,
            let prescriptionsRange = members.first(where: { $0.key == "prescriptions" })?.value,
            let entries = try? scanner.arrayElements(prescriptionsRange)
        else {
            throw notAnExport
        }
        if let key = JSONScanner.repeatedKey(members) {
            throw ImportError(problems: ["the key \"\(key)\" appears twice in the file's top-level object"])
        }
        var binding: Binding?
        var patientsMac: [UInt8]?
        if let vaultRange = members.first(where: { $0.key == "vault" })?.value {
            guard let object = scanner.object(vaultRange) as? [String: Any], let id = object["id"] as? String,
                let mac = object["mac"] as? String,
                Hex.decode(id)?.count == VaultHeader.vaultIDLength, Hex.decode(mac) != nil,
                object["patientsMac"] == nil || (object["patientsMac"] as? String).flatMap(Hex.decode) != nil
            else {
                throw ImportError(problems: [
                    "vault: expected {\"id\": \"<32 hex digits>\", \"mac\": \"<hex>\"} (and \"patientsMac\": \"<hex>\" with patients)"
                ])
            }
            binding = Binding(id: id, mac: mac)
            patientsMac = (object["patientsMac"] as? String).flatMap(Hex.decode)
        }
        // Revision 1.2: the patient records, read whole now (few and small); their problems are
        // listed with the entries'.
        var patients: [ImportPatient] = []
        var patientProblems: [String] = []
        if let patientsRange = members.first(where: { $0.key == "patients" })?.value {
            guard let elements = try? scanner.arrayElements(patientsRange) else {
                throw ImportError(problems: ["patients: expected an array of patient records"])
            }
            for (index, range) in elements.enumerated() {
                let position = "patients[\(index)]"
                guard bytes[range.lowerBound] == UInt8(ascii: "{") else {
                    patientProblems.append("\(position): is not an object")
                    continue
                }
                if let record = ExportPatient.read(bytes[range], position: position, problems: &patientProblems) {
                    patients.append(ImportPatient(position: position, record: record))
                }
            }
        }
        let patientsBinding = binding.flatMap { binding -> ExportBinding? in
            guard let patientsMac, !patients.isEmpty, let vaultID = Hex.decode(binding.id) else { return nil }
            return ExportBinding(
                vaultID: vaultID, mac: patientsMac, content: ExportPatient.boundContent(patients.map(\.record)))
        }
        return ImportFile(count: entries.count, patients: patients, patientsBinding: patientsBinding) {
            [binding, patientProblems] each in
            // The patients' problems first (they come first in the file): nothing is imported then.
            var problems: [String] = patientProblems
            // What the binding covers, built entry by entry (see `boundContent`): only when the file claims one.
            var content: [UInt8] = binding == nil ? [] : [UInt8(ascii: "[")]
            // Entries are decoded a batch at a time on all cores (a batch ends early at 16 MiB of
            // the file, as a batch of photos would hold), then taken in file order.
            try Vault.handOver(
                entries.indices, making: { $0 }, weight: { entries[$0].count }, budget: Vault.batchAttachmentBytes,
                limit: Vault.importBatchSize,
                to: { batch in
                    let decoded = batch.concurrentMap { index in
                        decodeEntry(bytes[entries[index]], position: "prescriptions[\(index)]", bound: binding != nil)
                    }
                    for entry in decoded {
                        problems += entry.problems
                        if let bound = entry.bound {
                            if content.count > 1 { content.append(UInt8(ascii: ",")) }
                            content += bound
                        }
                        // Once an entry failed nothing is imported: the rest are only checked.
                        guard problems.isEmpty, let item = entry.item else { continue }
                        try each(item)
                    }
                })
            guard problems.isEmpty else { throw ImportError(problems: problems) }
            content.append(UInt8(ascii: "]"))
            guard let binding, let vaultID = Hex.decode(binding.id), let mac = Hex.decode(binding.mac) else {
                return nil
            }
            return ExportBinding(vaultID: vaultID, mac: mac, content: content)
        }
    }

    /// One entry of an export as `decodeFile` reads it: its problems (then no item), or the
    /// item; with `bound`, also what of it the binding covers (when it decodes and its id reads).
    struct DecodedEntry: Sendable {
        var problems: [String] = []
        var item: ImportItem?
        var bound: [UInt8]?
    }

    /// Decodes one entry (any thread: it touches nothing shared).
    static func decodeEntry(_ bytes: ArraySlice<UInt8>, position: String, bound: Bool) -> DecodedEntry {
        var decoded = DecodedEntry()
        guard bytes.first == UInt8(ascii: "{") else {
            decoded.problems.append("\(position): is not an object")
            return decoded
        }
        let entry: Entry
        do {
            entry = try Entry.read(bytes)
        } catch {
            decoded.problems.append("\(position): \(ImportError.describe(error))")
            return decoded
        }
        guard let id = PrescriptionID(hex: entry.id) else {
            decoded.problems.append("\(position): id '\(entry.id)' is not 32 hex digits")
            return decoded
        }
        var attachments: [ImportAttachment] = []
        for (k, a) in (entry.attachments ?? []).enumerated() {
            guard let bytes = Data(base64Encoded: a.data) else {
                decoded.problems.append("\(position).attachments[\(k)]: data is not base64")
                continue
            }
            attachments.append(ImportAttachment(name: a.name, data: Array(bytes), sha256: a.sha256))
        }
        if bound {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            do { decoded.bound = Array(try encoder.encode(stripped(entry))) } catch {
                decoded.problems.append("\(position): cannot be read")
            }
        }
        guard decoded.problems.isEmpty else { return decoded }
        var item = ImportItem(position: position, id: id, prescription: entry.prescription, attachments: attachments)
        item.history = (entry.history ?? []).sorted { $0.version < $1.version }.map {
            ($0.recorded, $0.prescription)
        }
        decoded.item = item
        return decoded
    }

    /// An entry as the binding covers it: attachments without their data.
    static func stripped(_ entry: Entry) -> Entry {
        var entry = entry
        entry.attachments = entry.attachments?.map {
            var a = $0
            a.data = ""
            return a
        }
        return entry
    }
}

/// An import refused, with every problem and where it is.
public struct ImportError: Error, Sendable, CustomStringConvertible {
    public let problems: [String]
    /// What every item would have done, when the import was refused for updates it may not make.
    public var report: Vault.ImportReport?

    public init(problems: [String], report: Vault.ImportReport? = nil) {
        self.problems = problems
        self.report = report
    }

    public var description: String { problems.joined(separator: "\n") }

    static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        }
        switch error {
        case .keyNotFound(let key, let context): return "\(path(context)).\(key.stringValue) is missing"
        case .typeMismatch(_, let context), .valueNotFound(_, let context): return "\(path(context)) has the wrong type"
        case .dataCorrupted(let context) where context.codingPath.isEmpty: return context.debugDescription
        case .dataCorrupted(let context): return "\(path(context)): \(context.debugDescription)"
        @unknown default: return "cannot be read"
        }
    }
}
