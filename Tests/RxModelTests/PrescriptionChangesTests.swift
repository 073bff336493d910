import RxModel
import Testing

/// `Prescription.changes(since:)`: what `history` says each version changed.
@Suite struct PrescriptionChangesTests {
    @Test func namesEachChangedFieldWithItsValues() {
        let before = Fixture.glasses()
        var after = before
        after.right!.sphere = h("-2.50")
        after.left!.prism = .rectangular(vertical: .init(amount: h("1"), base: .up), horizontal: nil)
        after.expires = nil
        after.note = "new frames"
        after.patient.name = "Ada King"
        let changes = after.changes(since: before)
        #expect(
            changes.map(\.description) == [
                "patient name", "expiry date 2028-03-01 → none", "OD sphere -2.25 → -2.50",
                "OS prism none → 1 BU", "note"
            ])
        #expect(changes.last == FieldChange(field: "note", before: nil, after: "new frames", isText: true))
    }

    @Test func cylinderAxisAndWholeEyes() {
        let before = Fixture.glasses()
        var after = before
        after.right!.axis = 175
        after.left = nil
        #expect(after.changes(since: before).map(\.description) == ["OD axis 180 → 175", "OS -2.00 DS → none"])
        #expect(before.changes(since: after).map(\.description) == ["OD axis 175 → 180", "OS none → -2.00 DS"])
    }

    @Test func nothingChangedIsEmpty() {
        #expect(Fixture.contacts().changes(since: Fixture.contacts()).isEmpty)
    }
}
