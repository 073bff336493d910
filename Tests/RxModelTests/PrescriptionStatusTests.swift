import RxModel
import Testing

@Suite struct PrescriptionStatusTests {
    @Test(arguments: [
        (-365, PrescriptionStatus.expired), (-1, .expired), (0, .expiring), (1, .expiring), (59, .expiring),
        (60, .expiring),
        (61, .valid), (62, .valid), (3650, .valid)
    ])
    func edgesWithTheDefaultWindow(daysUntilExpiry: Int, expected: PrescriptionStatus) {
        let expires = today.adding(days: daysUntilExpiry)
        #expect(PrescriptionStatus(expires: expires, today: today) == expected)
        var rx = Fixture.glasses(issued: date("2020-01-01"))
        rx.expires = expires
        #expect(rx.status(on: today) == expected)
    }

    @Test func expiresTodayIsExpiringAndTheDayAfterExpired() {
        let expires = date("2026-12-31")
        #expect(PrescriptionStatus(expires: expires, today: date("2026-12-31")) == .expiring)
        #expect(PrescriptionStatus(expires: expires, today: date("2027-01-01")) == .expired)
        #expect(PrescriptionStatus(expires: expires, today: date("2026-11-01")) == .expiring) // 60 days
        #expect(PrescriptionStatus(expires: expires, today: date("2026-10-31")) == .valid) // 61 days
    }

    @Test func noExpiryIsValidByTheDatesAlone() {
        #expect(PrescriptionStatus(expires: nil, today: today) == .valid)
        #expect(PrescriptionStatus(expires: nil, today: date("9999-12-31")) == .valid)
        #expect(Fixture.glasses(expires: nil).status(on: today) == .valid)
    }

    /// Issue 47: with no expiry written, valid for two years from the issue date (by the
    /// calendar), then `noExpiryWritten`, not valid and not expired; a written expiry, a
    /// withdrawal or a newer prescription says more and comes first.
    @Test func noExpiryWrittenAfterTwoYears() {
        let rx = Fixture.glasses(issued: date("2014-06-15"), expires: nil)
        #expect(rx.status(on: date("2016-06-15")) == .valid)
        #expect(rx.status(on: date("2016-06-16")) == .noExpiryWritten)
        #expect(rx.status(on: date("2026-06-15")) == .noExpiryWritten)
        #expect(rx.status(on: date("2026-06-15"), superseded: true) == .superseded)
        #expect(!PrescriptionStatus.noExpiryWritten.isUsable && !PrescriptionStatus.noExpiryWritten.isWithdrawn)
        #expect(PrescriptionStatus.noExpiryWritten.rawValue == "no-expiry-written")
        var cancelled = rx
        cancelled.recordStatus = .cancelled
        #expect(cancelled.status(on: date("2026-06-15")) == .cancelled)
        let leap = Fixture.glasses(issued: date("2024-02-29"), expires: nil)
        #expect(leap.status(on: date("2026-02-28")) == .valid)
        #expect(leap.status(on: date("2026-03-01")) == .noExpiryWritten)
        // A written expiry, however far, is the prescriber's word.
        #expect(Fixture.glasses(issued: date("2014-06-15"), expires: date("2030-01-01")).status(on: today) == .valid)
        #expect(date("2024-02-29").adding(years: 2) == date("2026-02-28"))
        #expect(date("9998-06-01").adding(years: 2) == nil)
    }

    @Test func customWarningWindow() {
        #expect(PrescriptionStatus(expires: today, today: today, warningDays: 0) == .expiring)
        #expect(PrescriptionStatus(expires: today.adding(days: 1), today: today, warningDays: 0) == .valid)
        #expect(PrescriptionStatus(expires: today.adding(days: 90), today: today, warningDays: 90) == .expiring)
        #expect(PrescriptionStatus(expires: today.adding(days: 91), today: today, warningDays: 90) == .valid)
        #expect(PrescriptionStatus(expires: today.adding(days: -1), today: today, warningDays: 90) == .expired)
        #expect(Fixture.contacts().status(on: date("2027-02-01"), warningDays: 28) == .expiring)
        #expect(Fixture.contacts().status(on: date("2027-01-31"), warningDays: 28) == .valid)
        #expect(PrescriptionStatus.defaultWarningDays == 60)
    }
}
