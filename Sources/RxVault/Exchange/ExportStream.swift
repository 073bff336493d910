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

    public func flush() throws {
        guard !buffer.isEmpty else { return }
        try sink(buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    /// `json` (pretty-printed at the top level) as an element nested `depth` levels deep.
    func writeNested(_ json: [UInt8], depth: Int) throws {
        let indent = [UInt8](repeating: UInt8(ascii: " "), count: 2 * depth)
        // JSON strings hold no raw newline, so every newline is between tokens.
        var out: [UInt8] = indent
        out.reserveCapacity(json.count + json.count / 8)
        for byte in json {
            out.append(byte)
            if byte == UInt8(ascii: "\n") { out += indent }
        }
        try write(out)
    }
}

/// One export format written item by item: `add` for each prescription, then `finish`.
public protocol ExportStream: AnyObject {
    func add(_ item: ExportItem) throws
    func finish() throws
}

extension RxvaultExport {
    /// rxvault JSON written as it goes: the same document `encode` makes (sorted keys, so the
    /// `vault` binding, computed over every entry, comes last).
    public final class Stream: ExportStream {
        let output: ExportOutput
        let exported: String
        let bind: ((_ content: [UInt8]) throws -> (vaultID: [UInt8], mac: [UInt8]))?
        private var count = 0
        /// What the binding covers (`boundContent`), built entry by entry.
        private var content: [UInt8] = [UInt8(ascii: "[")]
        private let pretty = JSONEncoder()
        private let compact = JSONEncoder()

        public init(output: ExportOutput, exported: String,
                    bind: ((_ content: [UInt8]) throws -> (vaultID: [UInt8], mac: [UInt8]))? = nil) throws {
            self.output = output
            self.exported = exported
            self.bind = bind
            pretty.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
            compact.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            try output.write("{\n  \"exported\" : \(String(decoding: try compact.encode(exported), as: UTF8.self)),\n  \"prescriptions\" : [")
        }

        public func add(_ item: ExportItem) throws {
            let entry = RxvaultExport.entry(item)
            let text = Array(try pretty.encode(entry))
            try output.write(count == 0 ? "\n" : ",\n")
            try output.writeNested(text, depth: 2)
            if bind != nil {
                if count > 0 { content.append(UInt8(ascii: ",")) }
                // Without attachments the bound form is the same text without its whitespace.
                if entry.attachments == nil { Self.appendCompact(text, to: &content) } else {
                    content += try compact.encode(RxvaultExport.stripped(entry))
                }
            }
            count += 1
        }

        /// `json` without the whitespace between its tokens (what the compact encoder writes).
        static func appendCompact(_ json: [UInt8], to out: inout [UInt8]) {
            var inString = false
            var escaped = false
            for byte in json {
                if inString {
                    if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                    out.append(byte)
                } else if byte == UInt8(ascii: "\"") {
                    inString = true
                    out.append(byte)
                } else if byte != 0x20 && byte != 0x0a && byte != 0x09 && byte != 0x0d {
                    out.append(byte)
                }
            }
        }

        public func finish() throws {
            try output.write(count == 0 ? "\n\n  ],\n" : "\n  ],\n")
            try output.write("  \"schema\" : \"\(RxvaultExport.schema)\"")
            if let bind {
                content.append(UInt8(ascii: "]"))
                let (vaultID, mac) = try bind(content)
                try output.write(",\n  \"vault\" : {\n    \"id\" : \"\(Hex.encode(vaultID))\",\n    \"mac\" : \"\(Hex.encode(mac))\"\n  }")
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

        public func add(_ item: ExportItem) throws {
            for entry in FHIR.entries(item, patients: &patients, practitioners: &practitioners) {
                try output.write(count == 0 ? "\n" : ",\n")
                try output.writeNested(try FHIR.json(entry), depth: 2)
                count += 1
            }
        }

        public func finish() throws {
            try output.write(count == 0 ? "\n\n  ],\n" : "\n  ],\n")
            try output.write("  \"id\" : \"\(FHIR.uuid("bundle|" + exported))\",\n  \"resourceType\" : \"Bundle\",\n")
            let timestamp = String(decoding: try JSONSerialization.data(withJSONObject: exported, options: [.fragmentsAllowed, .withoutEscapingSlashes]), as: UTF8.self)
            try output.write("  \"timestamp\" : \(timestamp),\n  \"type\" : \"collection\"\n}")
            try output.flush()
        }
    }
}
