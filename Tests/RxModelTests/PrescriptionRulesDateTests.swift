import RxModel
import Testing

@Suite struct PrescriptionRulesDateTests {
    @Test func issueDateMayBeTodayButNotTomorrow() {
        #expect(violations(of: Fixture.glasses(issued: today)).isEmpty)
        #expect(violations(of: Fixture.glasses(issued: today, expires: nil), on: today).isEmpty)
        let rx = Fixture.glasses(issued: today.adding(days: 1)!)
        let expected = RuleViolation(
            eye: nil, field: "issue date", value: "2026-03-15",
            accepted: "must not be in the future (today is 2026-03-14)")
        #expect(violations(of: rx) == [expected])
        #expect(expected.description == "issue date 2026-03-15: must not be in the future (today is 2026-03-14)")
    }

    @Test func expiryMustBeStrictlyAfterIssue() {
        for kind in PrescriptionKind.allCases {
            func rx(expires: CalendarDate) -> Prescription {
                kind == .glasses ? Fixture.glasses(expires: expires) : Fixture.contacts(expires: expires)
            }
            #expect(violations(of: rx(expires: Fixture.issued.adding(days: 1)!)).isEmpty)
            for expires in [Fixture.issued, Fixture.issued.adding(days: -1)!, date("2020-01-01")] {
                #expect(
                    violations(of: rx(expires: expires)) == [
                        RuleViolation(
                            eye: nil, field: "expiry date", value: expires.description,
                            accepted: "must be after the issue date 2026-03-01")
                    ])
            }
        }
    }

    @Test func anAlreadyExpiredPrescriptionCanBeRecorded() {
        // Old prescriptions are history worth keeping: only the order of the dates matters.
        #expect(violations(of: Fixture.glasses(issued: date("2020-01-10"), expires: date("2022-01-10"))).isEmpty)
    }

    @Test func contactsRequireAnExpiry() {
        let expected = RuleViolation(
            eye: nil, field: "expiry date", value: nil, accepted: "required for contact lenses (--expires YYYY-MM-DD)")
        #expect(violations(of: Fixture.contacts(expires: nil)) == [expected])
        #expect(expected.description == "expiry date: required for contact lenses (--expires YYYY-MM-DD)")
    }

    @Test func glassesWithoutExpiryGetAnAdvisory() throws {
        let checked = try #require(accepted(Fixture.glasses(expires: nil)))
        #expect(checked.advisories == ["no expiry date: most glasses prescriptions are valid for 1-2 years"])
        #expect(checked.prescription.expires == nil)
    }

    @Test func dateOfBirth() {
        func rx(born: String?) -> Prescription {
            var rx = Fixture.glasses()
            rx.patient.birthDate = born.map { date($0) }
            return rx
        }
        #expect(violations(of: rx(born: nil)).isEmpty)
        #expect(violations(of: rx(born: "1930-01-01")).isEmpty)
        #expect(violations(of: rx(born: "2026-03-01")).isEmpty) // born on the issue date
        #expect(
            violations(of: rx(born: "2026-03-02")) == [
                RuleViolation(
                    eye: nil, field: "date of birth", value: "2026-03-02",
                    accepted: "must be on or before the issue date")
            ])
        #expect(
            violations(of: rx(born: "2026-03-14")) == [
                RuleViolation(
                    eye: nil, field: "date of birth", value: "2026-03-14",
                    accepted: "must be on or before the issue date")
            ])
        #expect(
            violations(of: rx(born: "2026-03-15")) == [
                RuleViolation(
                    eye: nil, field: "date of birth", value: "2026-03-15",
                    accepted: "must not be in the future")
            ])
    }
}

@Suite struct PrescriptionRulesTextTests {
    @Test func textIsTrimmedAndBlankOptionalsDropped() throws {
        var rx = Fixture.glasses()
        rx.patient.name = "  Ada Lovelace\n"
        rx.prescriber.name = "\tDr. Iris Hale "
        rx.prescriber.licence = "   "
        rx.prescriber.contact = ""
        rx.note = " \n "
        let checked = try #require(accepted(rx))
        #expect(checked.prescription.patient.name == "Ada Lovelace")
        #expect(checked.prescription.prescriber.name == "Dr. Iris Hale")
        #expect(checked.prescription.prescriber.licence == nil)
        #expect(checked.prescription.prescriber.contact == nil)
        #expect(checked.prescription.note == nil)
    }

    @Test func namesAreRequired() {
        var rx = Fixture.glasses()
        rx.patient.name = "   "
        rx.prescriber.name = ""
        #expect(
            violations(of: rx) == [
                RuleViolation(eye: nil, field: "patient name", value: nil, accepted: "required"),
                RuleViolation(eye: nil, field: "prescriber name", value: nil, accepted: "required")
            ])
    }

    @Test func textLengthLimits() {
        var rx = Fixture.glasses()
        rx.patient.name = String(repeating: "a", count: 200)
        rx.note = String(repeating: "n", count: 2000)
        #expect(violations(of: rx).isEmpty)
        rx.patient.name = String(repeating: "a", count: 201)
        rx.note = String(repeating: "n", count: 2001)
        #expect(
            violations(of: rx) == [
                RuleViolation(eye: nil, field: "patient name", value: nil, accepted: "at most 200 characters"),
                RuleViolation(eye: nil, field: "note", value: nil, accepted: "at most 2000 characters")
            ])
    }

    @Test func controlCharactersAreRefusedButNewlinesInTheNoteAreFine() {
        var rx = Fixture.glasses()
        rx.note = "line one\nline two"
        #expect(violations(of: rx).isEmpty)
        rx.prescriber.licence = "OPT\u{0007}1234"
        #expect(
            violations(of: rx) == [
                RuleViolation(
                    eye: nil, field: "prescriber licence", value: nil,
                    accepted:
                        "line breaks, control characters and invisible formatting characters (bidirectional or zero-width) are not accepted"
                )
            ])
        rx.prescriber.licence = nil
        rx.patient.name = "Ada\nLovelace"
        #expect(
            violations(of: rx) == [
                RuleViolation(
                    eye: nil, field: "patient name", value: nil,
                    accepted:
                        "line breaks, control characters and invisible formatting characters (bidirectional or zero-width) are not accepted"
                )
            ])
    }
}

@Suite struct TextAndPDRegressionTests {
    @Test func controlAndFormatCharactersAreRefusedInEveryTextField() {
        var rx = Prescription(
            kind: .contacts, patient: Patient(name: "Ada"), prescriber: Prescriber(name: "Dr"),
            issued: CalendarDate(iso: "2026-01-01")!, expires: CalendarDate(iso: "2027-01-01")!,
            right: LensSpecification(sphere: Hundredths(raw: -200), brand: "Acu\u{1B}[31mRED"))
        #expect(throws: PrescriptionInvalid.self) {
            try PrescriptionRules.check(rx, today: CalendarDate(iso: "2026-06-01")!)
        }
        rx.right?.brand = "Acuvue"
        rx.patient.name = "Ada \u{202E}evil"
        #expect(throws: PrescriptionInvalid.self) {
            try PrescriptionRules.check(rx, today: CalendarDate(iso: "2026-06-01")!)
        }
    }

    @Test func binocularAndMonocularNearPDTogetherAreRefused() {
        let rx = Prescription(
            kind: .glasses, patient: Patient(name: "Ada"), prescriber: Prescriber(name: "Dr"),
            issued: CalendarDate(iso: "2026-01-01")!, expires: CalendarDate(iso: "2027-01-01")!,
            right: LensSpecification(sphere: .zero, nearPD: Hundredths(30)), left: LensSpecification(sphere: .zero),
            pupillaryDistance: PupillaryDistance(far: Hundredths(63)))
        #expect(throws: PrescriptionInvalid.self) {
            try PrescriptionRules.check(rx, today: CalendarDate(iso: "2026-06-01")!)
        }
    }
}
