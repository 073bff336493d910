import RxModel

/// A compact binary form of a prescription record, for the search index: decoding it is a
/// few microseconds (JSON through Codable is ten times that), which is what lets a query over
/// 100,000 prescriptions answer in about the time it takes to derive the key.
enum RecordCodec {
    struct Writer {
        var bytes: [UInt8] = []
        mutating func u8(_ v: UInt8) { bytes.append(v) }
        mutating func i32(_ v: Int) {
            let x = UInt32(bitPattern: Int32(truncatingIfNeeded: v))
            bytes += [UInt8(x & 0xff), UInt8(x >> 8 & 0xff), UInt8(x >> 16 & 0xff), UInt8(x >> 24)]
        }
        /// A string: its UTF-8 length as a 32-bit integer (-1 for nil), then the bytes. Never cut.
        mutating func text(_ s: String?) {
            guard let s else {
                i32(-1)
                return
            }
            let utf8 = Array(s.utf8)
            i32(utf8.count)
            bytes += utf8
        }
        static let absent = Int(Int32.min)
        mutating func value(_ h: Hundredths?) { i32(h.map(\.raw) ?? Self.absent) }
        mutating func date(_ d: CalendarDate?) { i32(d.map(\.dayNumber) ?? Self.absent) }
        mutating func int(_ v: Int?) { i32(v ?? Self.absent) }
    }

    struct Reader {
        let bytes: UnsafeRawBufferPointer
        var p: Int
        struct Truncated: Error {}
        mutating func u8() throws -> UInt8 {
            guard p < bytes.count else { throw Truncated() }
            defer { p += 1 }
            return bytes[p]
        }
        mutating func i32() throws -> Int {
            guard p + 4 <= bytes.count else { throw Truncated() }
            defer { p += 4 }
            return Int(
                Int32(
                    bitPattern: UInt32(bytes[p]) | UInt32(bytes[p + 1]) << 8 | UInt32(bytes[p + 2]) << 16 | UInt32(
                        bytes[p + 3]) << 24))
        }
        mutating func text() throws -> String? {
            let n = try i32()
            if n == -1 { return nil }
            guard n >= 0, p + n <= bytes.count else { throw Truncated() }
            defer { p += n }
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[p..<(p + n)]), as: UTF8.self)
        }
        mutating func value() throws -> Hundredths? {
            let v = try i32()
            return v == Writer.absent ? nil : Hundredths(raw: v)
        }
        mutating func date() throws -> CalendarDate? {
            let v = try i32()
            return v == Writer.absent ? nil : CalendarDate(dayNumber: v)
        }
        mutating func int() throws -> Int? {
            let v = try i32()
            return v == Writer.absent ? nil : v
        }
        mutating func skip(_ n: Int) throws {
            guard p + n <= bytes.count else { throw Truncated() }
            p += n
        }
    }

    static func encode(_ record: PrescriptionRecord, into w: inout Writer) {
        let rx = record.prescription
        w.text(record.recorded)
        w.text(record.change)
        w.text(rx.prescriber.licence)
        w.text(rx.prescriber.contact)
        w.text(rx.note)
        w.value(rx.pupillaryDistance?.far)
        w.value(rx.pupillaryDistance?.near)
        for eye in Eye.allCases {
            guard let lens = rx[eye] else {
                w.u8(0)
                continue
            }
            w.u8(1)
            switch lens.prism {
            case nil: w.u8(0)
            case .rectangular(let v, let h)?:
                w.u8(1)
                w.value(v?.amount)
                w.u8(v?.base == .down ? 1 : 0)
                w.value(h?.amount)
                w.u8(h?.base == .out ? 1 : 0)
            case .polar(let amount, let angle)?:
                w.u8(2)
                w.value(amount)
                w.i32(angle)
            }
            w.value(lens.vertexDistance)
            w.value(lens.farPD)
            w.value(lens.nearPD)
            w.value(lens.baseCurve)
            w.value(lens.diameter)
        }
        encodeTrailing(rx, into: &w)
    }

    /// Completes `summary` (the filter fields, read already) with the rest of the record.
    static func decode(_ r: inout Reader, id: PrescriptionID, version: Int, summary: Prescription) throws
        -> PrescriptionRecord
    {
        var rx = summary
        let recorded = try r.text() ?? ""
        let change = try r.text()
        rx.prescriber.licence = try r.text()
        rx.prescriber.contact = try r.text()
        rx.note = try r.text()
        let far = try r.value()
        let near = try r.value()
        rx.pupillaryDistance = far.map { PupillaryDistance(far: $0, near: near) }
        for eye in Eye.allCases {
            guard try r.u8() == 1 else { continue }
            var lens = rx[eye] ?? LensSpecification(sphere: .zero)
            switch try r.u8() {
            case 1:
                let va = try r.value()
                let vb = try r.u8()
                let ha = try r.value()
                let hb = try r.u8()
                lens.prism = .rectangular(
                    vertical: va.map { .init(amount: $0, base: vb == 1 ? .down : .up) },
                    horizontal: ha.map { .init(amount: $0, base: hb == 1 ? .out : .in) })
            case 2:
                let amount = try r.value() ?? .zero
                lens.prism = .polar(amount: amount, angle: try r.i32())
            default: lens.prism = nil
            }
            lens.vertexDistance = try r.value()
            lens.farPD = try r.value()
            lens.nearPD = try r.value()
            lens.baseCurve = try r.value()
            lens.diameter = try r.value()
            rx[eye] = lens
        }
        try decodeTrailing(&r, into: &rx)
        var record = PrescriptionRecord(id: id, version: version, recorded: recorded, prescription: rx)
        record.change = change
        return record
    }
}

// MARK: - Trailing fields

/// Fields added after the first release of this codec, after everything it wrote: a sequence of
/// (tag u8, length i32, bytes). Index entries written before have none (they decode with the
/// fields absent), and a reader skips a tag it does not know, so each later addition takes its
/// own tag without disturbing the others.
extension RecordCodec {
    /// Tag 1, the lens details of format 4: contact-lens type (u8: 0 none, then
    /// `ContactLensType.allCases` order + 1), then per eye present (OD first) the add designation
    /// (u8: 0 none, `AddDesignation.allCases` order + 1), the dominance (likewise) and balance (u8 0/1).
    static let lensDetailsTag: UInt8 = 1
    /// Tag 2, format 4: the id of the prescription's patient record (text).
    static let patientIDTag: UInt8 = 2
    /// Tag 3, the parts kept from FHIR: the prescriber licence's system (text), the patient's
    /// family name (text) and given names (a count, absent for none, then each as text).
    /// Written only when one of them is there.
    static let namePartsTag: UInt8 = 3
    /// Tag 4, the Contact Lens Rule's fields (16 CFR 315.2): exam date (date), short-expiry
    /// reason, prescriber address, phone and fax (text), then per eye present (OD first) the
    /// manufacturer, material and equivalent brand (text). Written only when one is present.
    static let clinicalRecordTag: UInt8 = 4
    /// Tag 5, format 7: the expiry date assumed at import when none was written (date;
    /// `Prescription.assumedExpiry`). Written only when there is one.
    static let assumedExpiryTag: UInt8 = 5

    static func encodeTrailing(_ rx: Prescription, into w: inout Writer) {
        func index<T: CaseIterable & Equatable>(_ value: T?) -> UInt8 {
            guard let value, let i = Array(T.allCases).firstIndex(of: value) else { return 0 }
            return UInt8(i + 1)
        }
        // Format 4: the patient record's id, in its own tagged section.
        if let patientID = rx.patient.id {
            var section = Writer()
            section.text(patientID)
            w.u8(patientIDTag)
            w.i32(section.bytes.count)
            w.bytes += section.bytes
        }
        if let assumed = rx.assumedExpiry {
            var section = Writer()
            section.date(assumed)
            w.u8(assumedExpiryTag)
            w.i32(section.bytes.count)
            w.bytes += section.bytes
        }
        let hasClinicalRecord =
            rx.examDate != nil || rx.shortExpiryReason != nil || rx.prescriber.address != nil
            || rx.prescriber.phone != nil || rx.prescriber.fax != nil
            || rx.eyes.contains { $0.1.manufacturer != nil || $0.1.material != nil || $0.1.equivalentBrand != nil }
        if hasClinicalRecord {
            var section = Writer()
            section.date(rx.examDate)
            for text in [rx.shortExpiryReason, rx.prescriber.address, rx.prescriber.phone, rx.prescriber.fax] {
                section.text(text)
            }
            for (_, lens) in rx.eyes {
                section.text(lens.manufacturer)
                section.text(lens.material)
                section.text(lens.equivalentBrand)
            }
            w.u8(clinicalRecordTag)
            w.i32(section.bytes.count)
            w.bytes += section.bytes
        }
        if rx.prescriber.licenceSystem != nil || rx.patient.family != nil || rx.patient.given != nil {
            var section = Writer()
            section.text(rx.prescriber.licenceSystem)
            section.text(rx.patient.family)
            section.int(rx.patient.given?.count)
            for part in rx.patient.given ?? [] { section.text(part) }
            w.u8(namePartsTag)
            w.i32(section.bytes.count)
            w.bytes += section.bytes
        }
        let hasDetails =
            rx.contactLensType != nil
            || rx.eyes.contains { $0.1.addDesignation != nil || $0.1.dominance != nil || $0.1.balance }
        guard hasDetails else { return }
        var details = Writer()
        details.u8(index(rx.contactLensType))
        for (_, lens) in rx.eyes {
            details.u8(index(lens.addDesignation))
            details.u8(index(lens.dominance))
            details.u8(lens.balance ? 1 : 0)
        }
        w.u8(lensDetailsTag)
        w.i32(details.bytes.count)
        w.bytes += details.bytes
    }

    static func decodeTrailing(_ r: inout Reader, into rx: inout Prescription) throws {
        func value<T: CaseIterable>(_ code: UInt8, _: T.Type) throws -> T? {
            let all = Array(T.allCases)
            guard code != 0 else { return nil }
            guard Int(code) <= all.count else { throw Reader.Truncated() }
            return all[Int(code) - 1]
        }
        while r.p < r.bytes.count {
            let tag = try r.u8()
            let length = try r.i32()
            guard length >= 0, r.p + length <= r.bytes.count else { throw Reader.Truncated() }
            let end = r.p + length
            if tag == patientIDTag {
                rx.patient.id = try r.text()
                guard r.p == end else { throw Reader.Truncated() }
                continue
            }
            if tag == assumedExpiryTag {
                rx.assumedExpiry = try r.date()
                guard r.p == end else { throw Reader.Truncated() }
                continue
            }
            if tag == clinicalRecordTag {
                rx.examDate = try r.date()
                rx.shortExpiryReason = try r.text()
                rx.prescriber.address = try r.text()
                rx.prescriber.phone = try r.text()
                rx.prescriber.fax = try r.text()
                for eye in Eye.allCases where rx[eye] != nil {
                    rx[eye]!.manufacturer = try r.text()
                    rx[eye]!.material = try r.text()
                    rx[eye]!.equivalentBrand = try r.text()
                }
                guard r.p == end else { throw Reader.Truncated() }
                continue
            }
            if tag == namePartsTag {
                rx.prescriber.licenceSystem = try r.text()
                rx.patient.family = try r.text()
                if let count = try r.int() {
                    guard count >= 0, count <= length else { throw Reader.Truncated() }
                    var given: [String] = []
                    for _ in 0..<count { given.append(try r.text() ?? "") }
                    rx.patient.given = given
                }
                guard r.p == end else { throw Reader.Truncated() }
                continue
            }
            guard tag == lensDetailsTag else {
                try r.skip(length)
                continue
            }
            rx.contactLensType = try value(try r.u8(), ContactLensType.self)
            for eye in Eye.allCases where rx[eye] != nil {
                rx[eye]!.addDesignation = try value(try r.u8(), AddDesignation.self)
                rx[eye]!.dominance = try value(try r.u8(), LensDominance.self)
                rx[eye]!.balance = try r.u8() == 1
            }
            guard r.p <= end else { throw Reader.Truncated() }
            r.p = end
        }
    }
}
