import Foundation
import RxModel

/// Where an export's bytes go as they are made: buffered, and handed to `write` in pieces of
/// about 64 KiB, so an export of 100,000 prescriptions never holds its whole text.
public final class ExportOutput {
    private let sink: ([UInt8]) throws -> Void
    private var buffer: [UInt8] = []
    static let pieceSize = 1 << 16

    public init(_ sink: @escaping ([UInt8]) throws -> Void) {
        self.sink = sink
        buffer.reserveCapacity(Self.pieceSize + 4096)
    }

    public func write(_ bytes: [UInt8]) throws {
        buffer += bytes
        if buffer.count >= Self.pieceSize { try flush() }
    }

    public func write(_ text: String) throws { try write(Array(text.utf8)) }

    /// One element of a document's top-level array after `count` others (the JSON and FHIR
    /// streams): a newline before the first, a comma and a newline before each of the rest.
    func writeElement(_ bytes: [UInt8], after count: Int) throws {
        try write(count == 0 ? [0x0A] : [UInt8(ascii: ","), 0x0A])
        try write(bytes)
    }

    /// Closes a document's top-level array of `count` elements (an empty one as JSONEncoder
    /// writes it, with a blank line).
    func closeArray(of count: Int) throws {
        try write(count == 0 ? "\n\n  ],\n" : "\n  ],\n")
    }

    public func flush() throws {
        guard !buffer.isEmpty else { return }
        try sink(buffer)
        buffer.removeAll(keepingCapacity: true)
    }
}

/// One export format written as the prescriptions come: `add` for each batch of them, in
/// order, then `finish`. A batch (`Vault.exportBatchSize`, a few hundred) lets a format render
/// its items on all cores and write them in order.
public protocol ExportStream: AnyObject {
    func add(_ items: [ExportItem]) throws
    func finish() throws
}

extension RxvaultExport {
    /// rxvault JSON written as it goes: the same document `encode` makes (sorted keys, so the
    /// `vault` binding, computed over every entry, comes last). Entries are written by
    /// `JSONWriter` in the bytes JSONEncoder would make from `Entry` (tests compare the two).
    public final class Stream: ExportStream {
        let output: ExportOutput
        let exported: String
        let bind: ((_ content: [UInt8]) throws -> (vaultID: [UInt8], mac: [UInt8]))?
        /// The owner's MAC over the patient records (`vault.patientsMac`), when the file has them.
        private var patientsMac: [UInt8]?
        private var count = 0
        /// What the binding covers (`boundContent`), built entry by entry.
        private var content: [UInt8] = [UInt8(ascii: "[")]

        /// `patients`: the owner's patient records the file carries (`ExportPatient`; none for a
        /// client, and then the file is byte for byte what it was before revision 1.2), written
        /// first as the keys sort; `bindPatients` MACs them (`vault.patientsMac`).
        public init(
            output: ExportOutput, exported: String, patients: [ExportPatient] = [],
            bind: ((_ content: [UInt8]) throws -> (vaultID: [UInt8], mac: [UInt8]))? = nil,
            bindPatients: ((_ content: [UInt8]) throws -> [UInt8])? = nil
        ) throws {
            self.output = output
            self.exported = exported
            self.bind = bind
            var header = JSONWriter(style: .compact, capacity: 64)
            header.string(exported)
            try output.write(Array("{\n  \"exported\" : ".utf8) + header.bytes)
            if !patients.isEmpty {
                try output.write(",\n  \"patients\" : [")
                var pretty = JSONWriter(style: .pretty, level: 2, capacity: 4096)
                for (index, patient) in patients.enumerated() {
                    pretty.reset(level: 2)
                    pretty.bytes += index == 0 ? [0x0A] : [UInt8(ascii: ","), 0x0A]
                    pretty.indent()
                    patient.write(to: &pretty)
                    try output.write(pretty.bytes)
                }
                try output.write("\n  ]")
                patientsMac = try bindPatients?(ExportPatient.boundContent(patients))
            }
            try output.write(",\n  \"prescriptions\" : [")
        }

        /// Renders the batch on all cores, then writes it in order.
        public func add(_ items: [ExportItem]) throws {
            let bound = bind != nil
            let rendered = items.concurrentMap { item in Result { try Self.render(item, bound: bound) } }
            for entry in rendered {
                let (pretty, compact) = try entry.get()
                try output.writeElement(pretty, after: count)
                if let compact {
                    if count > 0 { content.append(UInt8(ascii: ",")) }
                    content += compact
                }
                count += 1
            }
        }

        /// One entry as the file has it, nested two levels deep (the document, its
        /// `prescriptions` array); with `bound`, also the form the binding covers: compact, and
        /// attachments without their data (`stripped`).
        static func render(_ item: ExportItem, bound: Bool) throws -> (pretty: [UInt8], compact: [UInt8]?) {
            var pretty = JSONWriter(style: .pretty, level: 2, capacity: 4096)
            pretty.indent()
            try RxvaultExport.writeEntry(item, to: &pretty, attachmentData: true)
            guard bound else { return (pretty.bytes, nil) }
            var compact = JSONWriter(style: .compact, capacity: 2048)
            try RxvaultExport.writeEntry(item, to: &compact, attachmentData: false)
            return (pretty.bytes, compact.bytes)
        }

        public func finish() throws {
            try output.closeArray(of: count)
            try output.write("  \"schema\" : \"\(RxvaultExport.schema)\"")
            if let bind {
                content.append(UInt8(ascii: "]"))
                let (vaultID, mac) = try bind(content)
                try output.write(
                    ",\n  \"vault\" : {\n    \"id\" : \"\(Hex.encode(vaultID))\",\n    \"mac\" : \"\(Hex.encode(mac))\""
                        + (patientsMac.map { ",\n    \"patientsMac\" : \"\(Hex.encode($0))\"" } ?? "") + "\n  }")
            }
            try output.write("\n}")
            try output.flush()
        }
    }
}

extension FHIR {
    /// A FHIR Bundle written as it goes: the same document `bundle` makes (sorted keys, so the
    /// entries come first and the Bundle's own elements after them).
    public final class Stream: ExportStream {
        let output: ExportOutput
        let exported: String
        private var count = 0
        private var patients: Set<String> = []
        private var practitioners: Set<String> = []

        public init(output: ExportOutput, exported: String) throws {
            self.output = output
            self.exported = exported
            try output.write("{\n  \"entry\" : [")
        }

        /// Builds the batch's resources in order (each Patient and Practitioner once in the
        /// Bundle), then writes their text on all cores.
        public func add(_ items: [ExportItem]) throws {
            var entries: [JSONValue] = []
            for item in items { entries += FHIR.entries(item, patients: &patients, practitioners: &practitioners) }
            let rendered = entries.concurrentMap { entry in
                // Nested two levels deep (the Bundle, its `entry` array).
                var writer = JSONWriter(style: .pretty, level: 2, capacity: 4096)
                writer.indent()
                writer.value(entry)
                return writer.bytes
            }
            for text in rendered {
                try output.writeElement(text, after: count)
                count += 1
            }
        }

        public func finish() throws {
            try output.closeArray(of: count)
            try output.write("  \"id\" : \"\(FHIR.uuid("bundle|" + exported))\",\n  \"resourceType\" : \"Bundle\",\n")
            var timestamp = JSONWriter(style: .compact, capacity: 64)
            timestamp.string(exported)
            try output.write(
                Array("  \"timestamp\" : ".utf8) + timestamp.bytes + Array(",\n  \"type\" : \"collection\"\n}".utf8))
            try output.flush()
        }
    }
}
