/// A small JSON writer for the documents rxvault prints. Foundation's JSONEncoder goes through
/// generic containers for every value; writing the few shapes we print directly is several times
/// faster on a 100,000-prescription vault, and the output (sorted keys, two-space indentation)
/// stays stable.
indirect enum JSONValue: Sendable {
    case string(String)
    /// A number already written as JSON (e.g. "-2.25").
    case number(String)
    case bool(Bool)
    case array([JSONValue])
    case object([(String, JSONValue)])

    static func int(_ value: Int) -> JSONValue { .number(String(value)) }

    func write(pretty: Bool) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(1024)
        write(into: &out, indent: pretty ? 0 : -1)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the text of `values` as a JSON array, one item per element, built on all cores
    /// (large lists are most of the cost of `list` and `query` on a big vault).
    static func writeArray(_ values: [JSONValue], pretty: Bool, level: Int, into out: inout [UInt8]) {
        guard !values.isEmpty else { out += Array("[]".utf8); return }
        let indent = pretty ? level : -1
        var parts = [[UInt8]](repeating: [], count: values.count)
        parts.withUnsafeMutableBufferPointer { buffer in
            // Each iteration writes only its own slot.
            let slots = Slots(base: buffer.baseAddress!)
            DispatchQueue.concurrentPerform(iterations: values.count) { i in
                var part: [UInt8] = []
                values[i].write(into: &part, indent: indent < 0 ? -1 : indent + 1)
                slots.base[i] = part
            }
        }
        out.append(UInt8(ascii: "["))
        for (i, part) in parts.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            newline(&out, indent + 1, indent)
            out += part
        }
        newline(&out, indent, indent)
        out.append(UInt8(ascii: "]"))
    }

    func write(into out: inout [UInt8], indent: Int) {
        switch self {
        case .string(let s): JSONValue.escape(s, into: &out)
        case .number(let n): out += n.utf8
        case .bool(let b): out += (b ? "true" : "false").utf8
        case .array(let items):
            guard !items.isEmpty else { out += "[]".utf8; return }
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                JSONValue.newline(&out, indent + 1, indent)
                item.write(into: &out, indent: indent < 0 ? -1 : indent + 1)
            }
            JSONValue.newline(&out, indent, indent)
            out.append(UInt8(ascii: "]"))
        case .object(let pairs):
            guard !pairs.isEmpty else { out += "{}".utf8; return }
            out.append(UInt8(ascii: "{"))
            for (i, pair) in pairs.sorted(by: { $0.0 < $1.0 }).enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                JSONValue.newline(&out, indent + 1, indent)
                JSONValue.escape(pair.0, into: &out)
                out += (indent < 0 ? ":" : " : ").utf8
                pair.1.write(into: &out, indent: indent < 0 ? -1 : indent + 1)
            }
            JSONValue.newline(&out, indent, indent)
            out.append(UInt8(ascii: "}"))
        }
    }

    static func newline(_ out: inout [UInt8], _ level: Int, _ indent: Int) {
        guard indent >= 0 else { return }
        out.append(0x0A)
        for _ in 0..<(2 * level) { out.append(0x20) }
    }

    static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    static func escape(_ s: String, into out: inout [UInt8]) {
        out.append(0x22)
        for byte in s.utf8 {
            switch byte {
            case 0x22: out += [0x5C, 0x22]
            case 0x5C: out += [0x5C, 0x5C]
            case 0x0A: out += [0x5C, UInt8(ascii: "n")]
            case 0x0D: out += [0x5C, UInt8(ascii: "r")]
            case 0x09: out += [0x5C, UInt8(ascii: "t")]
            case 0..<0x20: out += [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            default: out.append(byte)
            }
        }
        out.append(0x22)
    }
}

import Dispatch

/// The array slots `writeArray` fills from several threads, one slot per thread.
private struct Slots: @unchecked Sendable {
    let base: UnsafeMutablePointer<[UInt8]>
}
