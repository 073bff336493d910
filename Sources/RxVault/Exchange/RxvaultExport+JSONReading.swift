import RxModel

/// An export entry read with `JSONReading` (the `Codable` decoding's fast twin; see `JSONTree`):
/// an import of 100,000 prescriptions decodes each entry once. Same acceptance and the same
/// `DecodingError`s as `JSONDecoder` with `Entry`'s synthesized `Decodable`, so
/// `ImportError.describe` words a problem the same either way.
extension RxvaultExport.Entry {
    /// Reads the entry at `bytes` (one element of `prescriptions`).
    static func read(_ bytes: ArraySlice<UInt8>) throws(DecodingError) -> Self {
        let tree: JSONTree
        do { tree = try JSONTree(parsing: bytes) } catch {
            // A key given twice is named (which one, so the file can be mended); other damage reads
            // as `JSONDecoder` words it.
            let text = error.duplicateKey != nil ? error.problem : "The given data was not valid JSON."
            throw .dataCorrupted(.init(codingPath: [], debugDescription: text, underlyingError: error))
        }
        return try Self(json: JSONValueReader(tree))
    }

    init(json value: JSONValueReader) throws(DecodingError) {
        let c = try value.object()
        self.init(
            id: try c.required("id").string(), version: try c.required("version").int(),
            recorded: try c.required("recorded").string(),
            prescription: try Prescription(json: c.required("prescription")),
            history: try c.optional("history")?.array().map { v throws(DecodingError) in
                try RxvaultExport.Version(json: v)
            },
            attachments: try c.optional("attachments")?.array().map { v throws(DecodingError) in
                try RxvaultExport.Attachment(json: v)
            })
    }
}

extension RxvaultExport.Version {
    init(json value: JSONValueReader) throws(DecodingError) {
        let c = try value.object()
        self.init(
            version: try c.required("version").int(), recorded: try c.required("recorded").string(),
            prescription: try Prescription(json: c.required("prescription")))
    }
}

extension RxvaultExport.Attachment {
    init(json value: JSONValueReader) throws(DecodingError) {
        let c = try value.object()
        self.init(
            id: try c.required("id").string(), name: try c.required("name").string(),
            type: try c.required("type").string(),
            size: try c.required("size").int(), sha256: try c.required("sha256").string(),
            added: try c.required("added").string(),
            data: try c.required("data").string())
    }
}
