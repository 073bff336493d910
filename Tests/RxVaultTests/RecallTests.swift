import RxModel
import Testing

@testable import RxVault

/// `Supersession` and `Recall.due` through their public API, on records built in memory.
@Suite struct RecallTests {
    static let today = CalendarDate(iso: "2026-06-15")!
    static func record(
        _ name: String, born: String? = nil, kind: PrescriptionKind = .glasses, issued: String, expires: String?,
        status: RecordStatus = .active
    ) -> PrescriptionRecord {
        var rx = PrescriptionFilterTests.record(name, kind: kind, issued: issued, expires: expires).prescription
        rx.patient.birthDate = born.flatMap { CalendarDate(iso: $0) }
        rx.recordStatus = status
        return PrescriptionRecord(id: PrescriptionID.random(), version: 1, recorded: "t", prescription: rx)
    }

    @Test func theNewestOfAKindForAPatientSupersedesTheOlderOnes() {
        let oldest = Self.record("Sam Rivera", issued: "2022-01-01", expires: "2024-01-01")
        let old = Self.record("Sam Rivera", issued: "2024-01-01", expires: "2026-01-01")
        // The name as add compares it: case and runs of white space ignored.
        let newest = Self.record("sam   RIVERA", issued: "2026-01-01", expires: "2028-01-01")
        let contacts = Self.record("Sam Rivera", kind: .contacts, issued: "2021-01-01", expires: "2022-01-01")
        let otherBirth = Self.record("Sam Rivera", born: "1990-01-01", issued: "2020-01-01", expires: "2022-01-01")
        let all = [oldest, old, newest, contacts, otherBirth]
        let superseded = Supersession.superseding(all, among: all)
        #expect(superseded == [oldest.id: newest.id, old.id: newest.id])
    }

    @Test func withdrawnOnesNeitherSupersedeNorAreSuperseded() {
        let old = Self.record("Kim Park", issued: "2024-01-01", expires: "2026-01-01")
        let cancelled = Self.record("Kim Park", issued: "2026-01-01", expires: "2028-01-01", status: .cancelled)
        let draft = Self.record("Kim Park", issued: "2023-01-01", expires: "2025-01-01", status: .draft)
        let all = [old, cancelled, draft]
        #expect(Supersession.superseding(all, among: all) == [:])
    }

    @Test func sameDayPrescriptionsBothStand() {
        let distance = Self.record("Kim Park", issued: "2026-01-01", expires: "2026-07-01")
        let reading = Self.record("Kim Park", issued: "2026-01-01", expires: "2026-07-01")
        let all = [distance, reading]
        #expect(Supersession.superseding(all, among: all).isEmpty)
        #expect(Set(Recall.due(all, today: Self.today, within: 60).map(\.record.id)) == [distance.id, reading.id])
    }

    @Test func dueListsTheOnesInUseSoonestFirst() {
        let superseded = Self.record("Sam Rivera", issued: "2020-01-01", expires: "2022-01-01")
        let expiring = Self.record("Sam Rivera", issued: "2024-07-01", expires: "2026-07-01")
        let expired = Self.record("Kim Park", issued: "2024-01-01", expires: "2026-01-01")
        let later = Self.record("Ana Lima", issued: "2025-01-01", expires: "2026-08-14")
        let beyond = Self.record("Noor Haddad", issued: "2025-01-01", expires: "2026-08-15")
        let undated = Self.record("Lee Chan", issued: "2025-01-01", expires: nil)
        let withdrawn = Self.record(
            "Lee Chan", kind: .contacts, issued: "2025-01-01", expires: "2026-06-01", status: .cancelled)
        let due = Recall.due(
            [superseded, expiring, expired, later, beyond, undated, withdrawn], today: Self.today, within: 60)
        #expect(due.map(\.record.id) == [expired.id, expiring.id, later.id])
        #expect(due.map(\.daysLeft) == [-165, 16, 60])
        #expect(due.map(\.isOverdue) == [true, false, false])
        // Past the last day there is: every expiry is within reach.
        #expect(Recall.due([beyond], today: Self.today, within: 36_500_000).count == 1)
    }
}
