import RxModel
import Testing

/// `MyopiaControlDesign`: which brands the refraction trend reads as ortho-k (left out) or as a
/// soft myopia-control lens (counted, marked), and which it must not.
@Suite struct MyopiaControlDesignTests {
    @Test func brandsNameTheirDesignWhateverTheCaseAndPunctuation() {
        #expect(MyopiaControlDesign(brand: "Paragon CRT") == .cornealReshaping("Paragon CRT"))
        #expect(MyopiaControlDesign(brand: "paragon  crt-100 dual axis") == .cornealReshaping("Paragon CRT"))
        #expect(MyopiaControlDesign(brand: "ABILITI Overnight") == .cornealReshaping("Abiliti Overnight"))
        #expect(MyopiaControlDesign(brand: "Ortho-K custom") == .cornealReshaping("ortho-k"))
        #expect(MyopiaControlDesign(brand: "MiSight 1 day") == .soft("MiSight"))
        #expect(MyopiaControlDesign(brand: "Abiliti 1-Day") == .soft("Abiliti 1-Day"))
        #expect(MyopiaControlDesign(brand: "Menicon Bloom Day") == .soft("Menicon Bloom Day"))
        #expect(MyopiaControlDesign(brand: "NaturalVue Multifocal 1 Day") == .soft("NaturalVue Multifocal"))
    }

    /// Whole words only: an extended-wear soft lens is not an overnight reshaping one, and a word
    /// that merely contains a design's name is not it.
    @Test func everydayLensesAreNotMyopiaControl() {
        for brand in [
            "Air Optix Night & Day Aqua", "Acuvue Oasys", "Biofinity", "Dailies Total1", "Boston XO", "Mylord"
        ] {
            #expect(MyopiaControlDesign(brand: brand) == nil, "\(brand)")
        }
    }

    /// Per eye, by that eye's brand; the lens type, when given, has the last word.
    @Test func anEyeIsOrthoKByTheTypeOrItsBrandUnlessTheTypeSaysOtherwise() {
        let soft = LensSpecification(sphere: h("-2.00"), brand: "MiSight 1 day")
        let crt = LensSpecification(sphere: h("+0.50"), brand: "Paragon CRT")
        var rx = Fixture.contacts(right: soft, left: crt, issued: date("2024-01-01"), expires: nil)
        rx.patient.birthDate = nil
        #expect(MyopiaControlDesign(rx, eye: .right) == .soft("MiSight"))
        #expect(MyopiaControlDesign(rx, eye: .left) == .cornealReshaping("Paragon CRT"))
        rx.contactLensType = .orthoK
        #expect(MyopiaControlDesign(rx, eye: .right) == .cornealReshaping("ortho-k"))
        #expect(MyopiaControlDesign(rx, eye: .left) == .cornealReshaping("Paragon CRT"))
        rx.contactLensType = .rgp
        #expect(MyopiaControlDesign(rx, eye: .left) == .cornealReshaping("Paragon CRT"))
        #expect(MyopiaControlDesign(rx, eye: .right) == nil, "a rigid lens is not a soft design")
        rx.contactLensType = .scleral
        #expect(MyopiaControlDesign(rx, eye: .left) == nil, "a scleral lens is not ortho-k whatever its brand")
        rx.contactLensType = .soft
        #expect(MyopiaControlDesign(rx, eye: .left) == nil)
        #expect(MyopiaControlDesign(rx, eye: .right) == .soft("MiSight"))
        rx.contactLensType = nil
        rx.right = LensSpecification(sphere: h("-2.00"), brand: "Acuvue Oasys")
        #expect(MyopiaControlDesign(rx, eye: .right) == nil)
        let glasses = Fixture.glasses(right: soft, left: soft, issued: date("2024-01-01"), expires: nil)
        #expect(MyopiaControlDesign(glasses, eye: .right) == nil)
    }

    /// A soft design marks a child's lens: an adult's (18 on the issue date or older) is not marked.
    @Test func aSoftDesignIsMarkedOnlyForAPatientNotKnownToBeAnAdult() {
        let soft = LensSpecification(sphere: h("-2.00"), brand: "NaturalVue Multifocal")
        var rx = Fixture.contacts(right: soft, left: nil, issued: date("2024-01-01"), expires: nil)
        rx.patient.birthDate = nil
        #expect(MyopiaControlDesign(rx, eye: .right) == .soft("NaturalVue Multifocal"), "no birth date")
        rx.patient.birthDate = date("2014-05-01")
        #expect(MyopiaControlDesign(rx, eye: .right) == .soft("NaturalVue Multifocal"))
        rx.patient.birthDate = date("2006-01-02")
        #expect(MyopiaControlDesign(rx, eye: .right) == .soft("NaturalVue Multifocal"), "17 the day before 18")
        rx.patient.birthDate = date("2006-01-01")
        #expect(MyopiaControlDesign(rx, eye: .right) == nil, "18 that day")
    }
}
