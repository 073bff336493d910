/// The two kinds of vision prescription, as in HealthKit (`HKVisionPrescriptionType`).
public enum PrescriptionKind: String, Hashable, Sendable, CaseIterable, Codable {
    case glasses
    case contacts
}

/// One eye. Prescriptions say OD (oculus dexter) for the right and OS (oculus sinister) for the left.
public enum Eye: String, Hashable, Sendable, CaseIterable {
    case right
    case left

    /// `OD` or `OS`, as written on prescriptions and in every message naming an eye.
    public var label: String { self == .right ? "OD" : "OS" }
}

public struct Patient: Hashable, Sendable, Codable {
    /// The name as rxvault shows it and matches it (FHIR's HumanName `text`).
    public var name: String
    public var birthDate: CalendarDate?
    /// The vault's patient record this is (format 4; 32 hex digits), nil for a patient written as
    /// free text (a record from before format 4, or one not stored yet).
    public var id: String?
    /// The family name and given names, when a source said which is which (a FHIR HumanName's
    /// `family` and `given`): kept so they go back out as they came; `name` stays what is shown.
    /// Nil for patients written as one text (`add --patient`) and for records from before them.
    public var family: String?
    public var given: [String]?
    public init(
        name: String, birthDate: CalendarDate? = nil, id: String? = nil, family: String? = nil, given: [String]? = nil
    ) {
        self.name = name
        self.birthDate = birthDate
        self.id = id
        self.family = family
        self.given = given
    }
}

public struct Prescriber: Hashable, Sendable, Codable {
    public var name: String
    /// Licence or registration number, as printed on the prescription.
    public var licence: String?
    /// Address, phone or e-mail of the practice, as one text (what records before the
    /// structured fields below have, and what a prescription without them gives).
    public var contact: String?
    /// The practice's postal address, phone and fax: the US Contact Lens Rule (16 CFR 315.2)
    /// lists each on a contact-lens prescription, so each is a field that can be checked.
    public var address: String?
    public var phone: String?
    public var fax: String?
    /// The namespace of `licence` when a source gave one (a FHIR Identifier's `system`, e.g.
    /// `http://hl7.org/fhir/sid/us-npi`), so it goes back out with it; nil otherwise.
    public var licenceSystem: String?
    public init(
        name: String, licence: String? = nil, contact: String? = nil, address: String? = nil, phone: String? = nil,
        fax: String? = nil, licenceSystem: String? = nil
    ) {
        self.name = name
        self.licence = licence
        self.contact = contact
        self.address = address
        self.phone = phone
        self.fax = fax
        self.licenceSystem = licenceSystem
    }
}

/// A binocular pupillary distance: one number for both eyes, far and optionally near.
public struct PupillaryDistance: Hashable, Sendable, Codable {
    public var far: Hundredths
    public var near: Hundredths?
    public init(far: Hundredths, near: Hundredths? = nil) {
        self.far = far
        self.near = near
    }
}

/// A glasses or contact-lens prescription as the prescriber wrote it.
///
/// This is the content that rxvault encrypts; where it lives (id, version) is the vault's business.
public struct Prescription: Hashable, Sendable {
    public var kind: PrescriptionKind
    public var patient: Patient
    public var prescriber: Prescriber
    public var issued: CalendarDate
    public var expires: CalendarDate?
    public var note: String?
    /// OD. Either eye may be absent (one-eyed patients, one-lens fits), not both.
    public var right: LensSpecification?
    /// OS.
    public var left: LensSpecification?
    /// A binocular PD, when the prescription gives one number instead of one per eye (glasses only).
    public var pupillaryDistance: PupillaryDistance?
    /// What an imported FHIR VisionPrescription carried that rxvault does not model (`KeptFHIR`);
    /// nil for everything else and for records written before it existed.
    public var fhir: KeptFHIR?
    /// The kind of contact lens, when the prescription says (contacts only; sharpens the warnings).
    public var contactLensType: ContactLensType?
    /// The date of the eye examination the prescription comes from (16 CFR 315.2 lists it on a
    /// contact-lens prescription; it may be earlier than the issue date).
    public var examDate: CalendarDate?
    /// The medical reason a contact-lens prescription is valid for less than a year, as the
    /// prescriber recorded it (16 CFR 315.6(b)(2) allows a shorter expiry only with one).
    public var shortExpiryReason: String?
    /// An expiry date assumed when none was written (`import --assume-expiry glasses=2y`, issue
    /// 47): kept apart from `expires` so that no output and no export passes it off as the
    /// prescriber's. Only ever set when `expires` is nil.
    public var assumedExpiry: CalendarDate?

    public init(
        kind: PrescriptionKind, patient: Patient, prescriber: Prescriber, issued: CalendarDate,
        expires: CalendarDate? = nil, note: String? = nil, right: LensSpecification? = nil,
        left: LensSpecification? = nil, pupillaryDistance: PupillaryDistance? = nil
    ) {
        self.kind = kind
        self.patient = patient
        self.prescriber = prescriber
        self.issued = issued
        self.expires = expires
        self.note = note
        self.right = right
        self.left = left
        self.pupillaryDistance = pupillaryDistance
    }

    public subscript(eye: Eye) -> LensSpecification? {
        get { eye == .right ? right : left }
        set { if eye == .right { right = newValue } else { left = newValue } }
    }

    /// The eyes present, right first.
    public var eyes: [(Eye, LensSpecification)] {
        Eye.allCases.compactMap { eye in self[eye].map { (eye, $0) } }
    }
}
