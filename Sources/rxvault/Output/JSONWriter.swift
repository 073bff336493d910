import RxModel

/// The CLI's JSON documents (`show`, `list`, `patients`, ... with `--format json`), written by
/// RxModel's `JSONWriter` (the exports' writer too): sorted keys, two-space indentation, and an
/// empty list or object written `[]` / `{}`.
extension JSONValue {
    func write(pretty: Bool) -> String {
        var writer = JSONWriter(style: pretty ? .prettyShortEmpty : .compact)
        writer.value(self)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// Appends the text of `values` as a JSON array nested `level` deep, one item per element,
    /// built on all cores (large lists are most of the cost of `list` and `query` on a big vault).
    static func writeArray(_ values: [JSONValue], pretty: Bool, level: Int, into out: inout [UInt8]) {
        guard !values.isEmpty else {
            out += Array("[]".utf8)
            return
        }
        let style: JSONWriter.Style = pretty ? .prettyShortEmpty : .compact
        let parts = values.concurrentMap { value in
            var writer = JSONWriter(style: style, level: level + 1, capacity: 512)
            writer.value(value)
            return writer.bytes
        }
        let inner = pretty ? "\n" + String(repeating: "  ", count: level + 1) : ""
        out.append(UInt8(ascii: "["))
        for (i, part) in parts.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out += inner.utf8
            out += part
        }
        if pretty { out += ("\n" + String(repeating: "  ", count: level)).utf8 }
        out.append(UInt8(ascii: "]"))
    }
}
