import RxModel
import Testing

@testable import RxVault

@Suite struct PrescriptionFilterTests {
    static let today = CalendarDate(iso: "2026-06-15")!

    static func record(
        _ name: String, kind: PrescriptionKind = .glasses, issued: String, expires: String?, sphere: Int = -200,
        cylinder: Int? = nil, add: Int? = nil, brand: String? = nil, prescriber: String = "Dr Lee"
    ) -> PrescriptionRecord {
        var lens = LensSpecification(sphere: Hundredths(raw: sphere))
        if let cylinder {
            lens.cylinder = Hundredths(raw: cylinder)
            lens.axis = 90
        }
        if let add { lens.add = Hundredths(raw: add) }
        lens.brand = brand
        let rx = Prescription(
            kind: kind, patient: Patient(name: name), prescriber: Prescriber(name: prescriber),
            issued: CalendarDate(iso: issued)!, expires: expires.flatMap { CalendarDate(iso: $0) }, right: lens)
        return PrescriptionRecord(id: PrescriptionID.random(), version: 1, recorded: "t", prescription: rx)
    }

    let records = [
        record("Sam Rivera", issued: "2025-01-10", expires: "2027-01-10", sphere: -650, add: 200),
        record("Sam Rivera", issued: "2026-02-01", expires: "2028-02-01", sphere: -675, cylinder: -75),
        record(
            "Sam Rivera", kind: .contacts, issued: "2026-03-01", expires: "2026-07-20", sphere: -600,
            brand: "Acuvue Oasys"),
        record("Kim Park", issued: "2024-05-05", expires: "2026-05-05", sphere: 150, prescriber: "Dr Alvarez"),
        record(
            "Kim Park", kind: .contacts, issued: "2026-06-01", expires: "2026-08-14", sphere: 125, brand: "Biofinity")
    ]

    func run(_ configure: (inout PrescriptionFilter) -> Void) -> [String] {
        var filter = PrescriptionFilter()
        configure(&filter)
        return filter.apply(records, attachmentCounts: [records[1].id: 2], today: Self.today).map {
            "\($0.prescription.patient.name.split(separator: " ")[0])-\($0.prescription.kind.rawValue)-\($0.prescription.issued)"
        }
    }

    @Test func filtersCombine() {
        #expect(run { $0.patient = "sam" }.count == 3)
        #expect(run { $0.kind = .contacts } == ["Kim-contacts-2026-06-01", "Sam-contacts-2026-03-01"])
        #expect(run { $0.expired = true } == ["Kim-glasses-2024-05-05"])
        // 60 days from 2026-06-15 is 2026-08-14, inclusive.
        #expect(run { $0.expiringWithinDays = 60 } == ["Kim-contacts-2026-06-01", "Sam-contacts-2026-03-01"])
        #expect(run { $0.expiringWithinDays = 59 } == ["Sam-contacts-2026-03-01"])
        #expect(run { $0.validOn = CalendarDate(iso: "2026-05-05")! }.contains("Kim-glasses-2024-05-05"))
        #expect(!run { $0.validOn = CalendarDate(iso: "2026-05-06")! }.contains("Kim-glasses-2024-05-05"))
        #expect(
            run {
                $0.issuedAfter = CalendarDate(iso: "2026-03-01")!
                $0.issuedBefore = CalendarDate(iso: "2026-06-01")!
            }.count == 2)
        #expect(run { $0.brand = "oasys" } == ["Sam-contacts-2026-03-01"])
        #expect(run { $0.prescriber = "alvarez" } == ["Kim-glasses-2024-05-05"])
        #expect(run { $0.hasAttachments = true } == ["Sam-glasses-2026-02-01"])
        #expect(run { $0.sphereMax = Hundredths(raw: -650) } == ["Sam-glasses-2026-02-01", "Sam-glasses-2025-01-10"])
        #expect(
            run {
                $0.cylinderMin = Hundredths(raw: -100)
                $0.cylinderMax = Hundredths(raw: -50)
            } == ["Sam-glasses-2026-02-01"])
        #expect(run { $0.hasAdd = true } == ["Sam-glasses-2025-01-10"])
        #expect(
            run {
                $0.patient = "sam"
                $0.kind = .glasses
                $0.hasAdd = true
            } == ["Sam-glasses-2025-01-10"])
    }

    @Test func latestSortAndLimit() {
        #expect(
            run { $0.latest = true } == [
                "Kim-contacts-2026-06-01", "Sam-contacts-2026-03-01", "Sam-glasses-2026-02-01", "Kim-glasses-2024-05-05"
            ])
        #expect(run { $0.sort = .expires }.first == "Kim-glasses-2024-05-05")
        #expect(
            run {
                $0.sort = .expires
                $0.reverse = true
            }.first == "Sam-glasses-2026-02-01")
        #expect(run { $0.sort = .patient }.first?.hasPrefix("Kim") == true)
        #expect(run { $0.limit = 2 }.count == 2)
    }

    /// Every sort key is a total order: ties on the key go newest issue date first, then id, so
    /// equal keys never come out in an arbitrary order; --reverse flips the whole order.
    @Test func everySortKeyHasATotalOrder() {
        let same = [
            Self.record("Ana Diaz", issued: "2025-01-01", expires: "2027-01-01"),
            Self.record("ana diaz", issued: "2026-01-01", expires: "2027-01-01"),
            Self.record("Ana Diaz", issued: "2026-01-01", expires: "2027-01-01"),
            Self.record("Ana Diaz", kind: .contacts, issued: "2024-06-01", expires: "2027-01-01", brand: "Lens"),
            Self.record("Ana Diaz", issued: "2023-01-01", expires: nil)
        ]
        let byIDDescending = { (a: PrescriptionRecord, b: PrescriptionRecord) in a.id.hex > b.id.hex }
        let sameDay = same.filter { $0.prescription.issued == CalendarDate(iso: "2026-01-01")! }.sorted(
            by: byIDDescending
        ).map(\.id)
        for sort in PrescriptionFilter.Sort.allCases {
            var filter = PrescriptionFilter()
            filter.sort = sort
            // Whatever order the input comes in, the output is the same.
            let outputs = [same, Array(same.reversed()), [same[2], same[0], same[4], same[1], same[3]]].map {
                filter.apply($0, attachmentCounts: [:], today: Self.today).map(\.id)
            }
            #expect(outputs.allSatisfy { $0 == outputs[0] }, "\(sort) is not a total order")
            filter.reverse = true
            #expect(
                filter.apply(same, attachmentCounts: [:], today: Self.today).map(\.id) == Array(outputs[0].reversed()),
                "\(sort) --reverse")
            if sort != .expires {
                // Same patient / kind: newest issue first, then id.
                let glasses = outputs[0].filter { id in same.first { $0.id == id }!.prescription.kind == .glasses }
                #expect(Array(glasses.prefix(2)) == sameDay, "\(sort): ties not by issue date, then id")
                #expect(glasses.last == same[4].id, "\(sort): oldest issue last")
            }
        }
        var byExpiry = PrescriptionFilter()
        byExpiry.sort = .expires
        let expiring = byExpiry.apply(same, attachmentCounts: [:], today: Self.today).map(\.id)
        #expect(Array(expiring.prefix(2)) == sameDay, "equal expiry: newest issue first, then id")
        #expect(expiring.last == same[4].id, "no expiry sorts last")
    }
}
