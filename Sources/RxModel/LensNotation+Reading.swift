extension LensNotation {
    /// A notation as read: the lens it describes and which parts it actually wrote.
    ///
    /// An edit replaces only what the notation gives (`applied(to:)`): writing an eye again
    /// must not drop a prism, an add, a vertex distance or a base curve the person did not
    /// mention. The one part a notation cannot leave unsaid is the cylinder: on paper
    /// `-1.25` is a sphere alone, but as an edit it may just as well mean "the sphere is now
    /// -1.25". That is not guessed either way (see `applied(to:)`).
    public struct Reading: Hashable, Sendable {
        /// The lens as written, every part it did not write absent.
        public var lens: LensSpecification
        /// The parts written (the sphere always).
        public var given: Set<LensField>
        /// The sphere was marked as standing alone (`DS`, `sph`): no cylinder.
        public var sphereOnly: Bool

        public init(lens: LensSpecification, given: Set<LensField>, sphereOnly: Bool) {
            self.lens = lens
            self.given = given
            self.sphereOnly = sphereOnly
        }

        /// `current` with what this notation gives put in:
        ///
        /// - the sphere, always;
        /// - cylinder and axis as one unit: replaced when the notation writes either, removed
        ///   when it says `DS`/`sph`; a notation with neither on a lens that has a cylinder is
        ///   refused (`-1.25` could mean "sphere alone" or "new sphere, same cylinder");
        /// - the add with its designation and design (D/N) as one unit, prism, vertex distance,
        ///   PD, near PD, base curve, diameter: replaced when written, otherwise kept; the brand
        ///   (never part of a notation) is kept;
        /// - `BAL` makes it a balance lens without cylinder, add or prism; any sphere ends that.
        ///
        /// With no current lens (a new eye) the notation is the lens.
        public func applied(to current: LensSpecification?) throws(Unreadable) -> LensSpecification {
            guard let current else { return lens }
            var result = current
            result.sphere = lens.sphere
            // Balance or not is said by every notation, like the sphere: "BAL" makes the lens a
            // balance lens (dropping every power), a sphere makes it a lens with power again.
            result.balance = lens.balance
            if lens.balance {
                for field in [LensField.cylinder, .add, .prism] { field.remove(from: &result) }
            } else if given.contains(.cylinder) || given.contains(.axis) {
                result.cylinder = lens.cylinder
                result.axis = lens.axis
            } else if sphereOnly {
                LensField.cylinder.remove(from: &result)
            } else if current.hasCylinder {
                let sphere = LensSpecification(sphere: lens.sphere)
                var keep = sphere
                keep.cylinder = current.cylinder
                keep.axis = current.axis
                let alone = lens.sphere.isZero ? "plano DS" : LensNotation.format(sphere)
                let cylinder = [
                    current.cylinder!.signedPower,
                    current.axis.map { "x" + String($0).padding(toLength: 3, leftPadding: true) }
                ]
                .compactMap { $0 }.joined(separator: " ")
                throw Unreadable(
                    problem: "gives no cylinder, but the lens has \(cylinder): write \"\(LensNotation.format(keep))\" "
                        + "to keep it, or \"\(alone)\" for a sphere alone")
            }
            // An add is one unit: its number, designation (LOW/MED/HIGH) and design (D/N).
            if given.contains(.add) {
                for field in [LensField.add, .addDesignation, .dominance] { field.copy(from: lens, to: &result) }
            }
            let together: Set<LensField> = [.sphere, .cylinder, .axis, .add, .addDesignation, .dominance, .balance]
            for field in LensField.allCases where !together.contains(field) && given.contains(field) {
                field.copy(from: lens, to: &result)
            }
            return result
        }
    }
}
