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

    @Test func aPrescriptionIsOrthoKByItsTypeOrEitherEyesBrandAndGlassesAreNeither() {
        let soft = LensSpecification(sphere: h("-2.00"), brand: "MiSight 1 day")
        let crt = LensSpecification(sphere: h("+0.50"), brand: "Paragon CRT")
        var rx = Fixture.contacts(right: soft, left: crt, issued: date("2024-01-01"), expires: nil)
        #expect(MyopiaControlDesign(rx) == .cornealReshaping("Paragon CRT"), "reshaping wins over soft")
        rx.left = soft
        #expect(MyopiaControlDesign(rx) == .soft("MiSight"))
        rx.contactLensType = .orthoK
        #expect(MyopiaControlDesign(rx) == .cornealReshaping("ortho-k"))
        rx.contactLensType = nil
        rx.right = LensSpecification(sphere: h("-2.00"), brand: "Acuvue Oasys")
        rx.left = LensSpecification(sphere: h("-2.00"))
        #expect(MyopiaControlDesign(rx) == nil)
        let glasses = Fixture.glasses(right: soft, left: soft, issued: date("2024-01-01"), expires: nil)
        #expect(MyopiaControlDesign(glasses) == nil)
    }
}
