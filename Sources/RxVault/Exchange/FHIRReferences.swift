import Foundation

extension FHIR {
    /// The resources of a Bundle that others refer to (Patients, Practitioners,
    /// PractitionerRoles), by the names a reference may use: their `fullUrl` and `Type/id`.
    ///
    /// Only where each one is in the file is kept, and it is parsed when it is looked up: kept as
    /// Foundation trees, the 95,765 Patients of a Bundle of 100,000 prescriptions held 294 MiB,
    /// more than the file itself. A lookup parses one small resource; prescriptions are decoded
    /// on all cores, each looking up its own patient. Each resource's type is kept too (pass 1
    /// read it), so following a prescriber's reference parses nothing it only checks the type of.
    struct References: Sendable {
        let scanner: JSONScanner
        private var places: [String: (kind: String, range: Range<Int>)] = [:]

        init(scanner: JSONScanner) { self.scanner = scanner }

        /// `name` refers to the resource of type `kind` at `range` of the file (a later one of
        /// the same name wins).
        mutating func add(_ name: String, kind: String, at range: Range<Int>) { places[name] = (kind, range) }

        func contains(_ name: String) -> Bool { places[name] != nil }

        /// The `resourceType` of the resource `name` refers to; nil when the Bundle has none.
        func kind(of name: String) -> String? { places[name]?.kind }

        /// Where in the file the resource `name` refers to is (its bytes are kept on export).
        func range(of name: String) -> Range<Int>? { places[name]?.range }

        /// The resource `name` refers to, parsed; nil when the Bundle has none of that name.
        subscript(name: String) -> [String: Any]? {
            places[name].flatMap { scanner.object($0.range) as? [String: Any] }
        }
    }
}
