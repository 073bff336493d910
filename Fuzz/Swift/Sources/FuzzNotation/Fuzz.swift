import RxModel

/// Prescription notation (`--od "..."`), prisms and the rules: any input must give a lens or a
/// refusal, never a crash; and a lens the rules accept must print back to the same lens.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    if let parsed = try? LensNotation.parse(text) {
        let rx = Prescription(kind: .glasses, patient: Patient(name: "F"), prescriber: Prescriber(name: "D"),
                              issued: CalendarDate(year: 2026, month: 1, day: 1)!, right: parsed)
        if let checked = try? PrescriptionRules.check(rx, today: CalendarDate(year: 2026, month: 6, day: 1)!), var lens = checked.prescription.right {
            // The canonical notation carries powers, prism, bc and dia (vertex, PD and brand have
            // their own flags and columns).
            lens.vertexDistance = nil; lens.farPD = nil; lens.nearPD = nil; lens.brand = nil
            let printed = LensNotation.format(lens)
            guard let again = try? LensNotation.parse(printed), again == lens else {
                fatalError("notation does not round-trip: \(text.debugDescription) -> \(printed.debugDescription)")
            }
        }
        let lens = parsed
        _ = lens.transposed(to: .plus).transposed(to: .minus)
        _ = lens.sphericalEquivalentText
    }
    _ = try? Prism.parse(text)
    _ = Hundredths(parsing: text)
    _ = CalendarDate(iso: text)
    return 0
}
