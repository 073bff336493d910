import RxModel

/// A measurement as the patient's sealed info holds it (docs/format.md, "Measurements"): the
/// numbers as decimal text (exact hundredths, as written), each acuity as its written text (read
/// again, strictly, when opened). `Codable` gives the same bytes as `write(to:)` (keys sorted);
/// tests compare the two, as for the rest of the patient info.
struct StoredMeasurement: Codable, Equatable {
    /// Slot (`od`, `os-uncorrected`, ...) -> the acuity as written.
    var acuity: [String: String]?
    var axialLengthOD: String?
    var axialLengthOS: String?
    var cycloplegic: Bool?
    var date: CalendarDate
    var device: String?
    var id: String

    init(_ m: EyeMeasurement) {
        acuity =
            m.acuity.isEmpty
            ? nil : Dictionary(uniqueKeysWithValues: m.acuity.map { ($0.key.rawValue, $0.value.written) })
        axialLengthOD = m.axialLengthRight?.twoDecimals
        axialLengthOS = m.axialLengthLeft?.twoDecimals
        cycloplegic = m.cycloplegic ? true : nil
        date = m.date
        device = m.device
        id = m.id
    }

    init(_ c: JSONObjectReader) throws(DecodingError) {
        if let object = try c.optional("acuity")?.object() {
            var acuity: [String: String] = [:]
            for member in object.members {
                acuity[member.key] = try JSONValueReader(member.value).string()
            }
            self.acuity = acuity
        }
        axialLengthOD = try c.optional("axialLengthOD")?.string()
        axialLengthOS = try c.optional("axialLengthOS")?.string()
        cycloplegic = try c.optional("cycloplegic")?.bool()
        date = try c.required("date").date()
        device = try c.optional("device")?.string()
        id = try c.required("id").string()
    }

    /// The measurement it holds, read as strictly as an import file's (`imported()`); an error
    /// names what does not read (a row no rxvault wrote).
    func measurement() throws(VaultError) -> EyeMeasurement {
        let (measurement, problems) = imported()
        guard let measurement else { throw VaultError.integrity(problems.joined(separator: "; ")) }
        return measurement
    }

    /// The JSONEncoder (sorted keys, compact) bytes, written directly.
    func write(to w: inout JSONWriter) {
        w.beginObject()
        if let acuity {
            w.key("acuity")
            w.beginObject()
            for key in acuity.keys.sorted() {
                w.key(key)
                w.string(acuity[key]!)
            }
            w.endObject()
        }
        if let axialLengthOD {
            w.key("axialLengthOD")
            w.string(axialLengthOD)
        }
        if let axialLengthOS {
            w.key("axialLengthOS")
            w.string(axialLengthOS)
        }
        if let cycloplegic {
            w.key("cycloplegic")
            w.bool(cycloplegic)
        }
        w.key("date")
        w.string(date.description)
        if let device {
            w.key("device")
            w.string(device)
        }
        w.key("id")
        w.string(id)
        w.endObject()
    }
}
