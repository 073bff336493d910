import RxCrypto
import RxModel
import RxStore
import RxValidate

/// What the vault reports to its callers. Each case maps to one documented exit code in the CLI
/// (docs/reference.md, "Exit codes"). No case carries patient data, a passphrase or key material; ids
/// and file paths are fine to show.
public enum VaultError: Error, Sendable, CustomStringConvertible {
    /// The passphrase does not unwrap the root key (or the header was altered: the two cannot be
    /// told apart). `recoverySlot`: the vault has a recovery slot (read from the header, without
    /// a key), so the message can point to the way back in when the passphrase is forgotten.
    case wrongPassphrase(recoverySlot: Bool = false)
    /// A recovery code that opens no recovery slot (or a vault without one).
    case wrongRecoveryCode(String)
    /// A change the vault refuses to make (removing its last passphrase).
    case refused(String)
    case keySlotNotFound(Int)
    /// No file, or not an rxvault vault.
    case noVault(String)
    /// `init` found a file already there.
    case alreadyExists(path: String)
    /// No prescription matches the id (or prefix) given.
    case notFound(id: String)
    /// More than one prescription starts with the prefix given.
    case ambiguousID(prefix: String, matches: Int)
    /// An id that cannot be one (not hex, too short).
    case malformedID(String)
    /// The prescription breaks the rules; lists every violation.
    case invalidPrescription(PrescriptionInvalid)
    /// A value given by the caller that is not acceptable (other than a prescription's fields).
    case invalidInput(String)
    /// The file is not an acceptable attachment (not a sound PNG or PDF, over a limit...).
    case attachmentRefused(AttachmentRefusal)
    /// No attachment matches the name or id given (on that prescription).
    case attachmentNotFound(String)
    /// More than one attachment matches; `candidates` describe each (id prefix, type, size, date added).
    case ambiguousAttachment(String, candidates: [String] = [])
    /// The same content (SHA-256) is already attached to the prescription, as `existing` (id and name).
    case duplicateAttachment(existing: String)
    /// A client of that name, or with that recipient, is already registered (`client add`).
    case duplicateClient(String)
    /// No client with that name or id.
    case clientNotFound(String)
    /// No access request with this id (or prefix).
    case requestNotFound(String)
    /// The client has no grant on the prescription (revoking what was never granted).
    case grantNotFound(client: String, prescription: String)
    /// No patient record with that name or id (format 4).
    case patientNotFound(String)
    /// No measurement with that id or prefix (issue 26).
    case measurementNotFound(String)
    /// More than one patient record matches a name or id prefix; `candidates` describe each (id,
    /// name, birth date). Raised to the owner's commands, which need the names to choose, and to
    /// a client choosing among the patients its grants carry measurements of (none other).
    case ambiguousPatient(String, candidates: [String])
    /// The identity given is not a client of this vault (or was removed).
    case unknownIdentity
    /// A command that changes the vault, run with a client identity.
    case ownerOnly(String)
    /// Stored data failed authentication or does not decode: tampering or damage.
    case integrity(String)
    /// Another process holds the vault.
    case busy
    /// The vault's location cannot be read as one (a database URL with a password, a bad port).
    case badLocation(String)
    /// The database server holding the vault cannot be reached, or refused the login.
    case unavailable(String)
    /// The database refused the role a privilege (PostgreSQL's 42501), with the GRANT or role
    /// that gives it (docs/deploy.md). Nothing was changed.
    case notPermitted(String, remedy: String)
    /// The file system refused a write; nothing was changed.
    case cannotWrite(String)
    /// The vault was written by a newer rxvault.
    case unsupportedVersion(String)
    /// Something that should not happen; the message says what.
    case internalError(String)

    public var description: String {
        switch self {
        case .wrongPassphrase: return "wrong passphrase"
        case .wrongRecoveryCode(let why): return why
        case .refused(let why): return why
        case .keySlotNotFound(let id): return "no key slot \(id)"
        case .noVault(let why): return why
        case .alreadyExists(let path):
            return VaultLocation.isDatabase(path)
                ? "the database at \(path) already holds a vault; rxvault never writes over one"
                : "\(path) already exists; rxvault never overwrites a file"
        case .notFound(let id): return "no prescription \(id)"
        case .ambiguousID(let prefix, let matches): return "id prefix \(prefix) matches \(matches) prescriptions"
        case .malformedID(let id):
            return "'\(id)' is not an id (hexadecimal, at least \(RecordID.minimumPrefixLength) characters)"
        case .invalidPrescription(let invalid): return invalid.description
        case .invalidInput(let why): return why
        case .attachmentRefused(let refusal): return "refused: \(refusal.message)"
        case .attachmentNotFound(let what): return "no attachment \(what)"
        case .ambiguousAttachment(let what, let candidates) where !candidates.isEmpty:
            return "\(what) matches \(candidates.count) attachments:\n  " + candidates.joined(separator: "\n  ")
        case .ambiguousAttachment(let what, _): return "\(what) matches more than one attachment"
        case .duplicateAttachment(let existing): return "this file is already attached as \(existing)"
        case .duplicateClient(let what): return what
        case .clientNotFound(let what): return "no client \(what)"
        case .requestNotFound(let what): return "no access request \(what)"
        case .grantNotFound(let client, let prescription):
            return "client \(client) has no grant on prescription \(prescription)"
        case .patientNotFound(let what): return "no patient \(what)"
        case .measurementNotFound(let what): return "no measurement \(what)"
        case .ambiguousPatient(let what, let candidates):
            return "\(what) matches \(candidates.count) patients:\n  " + candidates.joined(separator: "\n  ")
        case .unknownIdentity: return "this identity is not a client of the vault (or its access was removed)"
        case .ownerOnly(let command):
            return "\(command) needs the owner's passphrase; a client identity can only read what it was granted"
        case .integrity(let what): return "integrity check failed: \(what)"
        case .busy: return "the vault is busy: another rxvault process is using it"
        case .badLocation(let why): return why
        case .unavailable(let why): return why
        case .notPermitted(let what, _): return what
        case .cannotWrite(let why): return "nothing was changed: \(why)"
        case .unsupportedVersion(let why): return why
        case .internalError(let why): return "internal error: \(why)"
        }
    }

    /// Translates a storage error into what the caller can act on.
    static func from(_ error: StoreError) -> VaultError {
        switch error {
        case .missing, .notAVault: return .noVault(error.description)
        case .busy: return .busy
        case .badLocation(let why): return .badLocation(why)
        case .unreachable(let why): return .unavailable(why)
        case .permissionDenied(let what, let remedy): return .notPermitted(what, remedy: remedy)
        case .alreadyExists(let path): return .alreadyExists(path: path)
        case .cannotWrite(let why): return .cannotWrite(why)
        case .unsupportedVersion: return .unsupportedVersion(error.description)
        case .corrupt(let why): return .integrity(why)
        case .engine: return .internalError(error.description)
        }
    }

    /// Wraps any error from a lower layer (store, crypto, coding) as a VaultError.
    static func wrap(_ error: any Error) -> VaultError {
        switch error {
        case let e as VaultError: return e
        case let e as StoreError: return from(e)
        case let e as AttachmentRefusal: return .attachmentRefused(e)
        case let e as CryptoError:
            return e == .authenticationFailed
                ? .integrity("a stored record failed authentication") : .internalError(e.description)
        default: return .internalError(String(describing: type(of: error)))
        }
    }
}
