import ArgumentParser
import RxVault

/// rxvault's documented exit codes (docs/reference.md, "Exit codes"). Scripts depend on these numbers:
/// never renumber one, only add.
enum ExitStatus: Int32, CaseIterable {
    case success = 0
    /// Anything not covered below (an internal error).
    case failure = 1
    /// A confirmation was declined (or not answered): nothing changed. As GitHub's gh does.
    case cancelled = 2
    /// `due` found nothing due: an answer, not an error, told apart from 0 (something is due)
    /// and from every error, so a cron job can tell "nothing to do" from "could not look". As
    /// grep's 1 for "no match", but 1 is taken here.
    case nothingDue = 3
    /// Bad command line: unknown flag, missing argument, conflicting options, ambiguous id.
    case usage = 64
    /// Input refused: a prescription that breaks the rules, unreadable notation, a bad date.
    case invalidInput = 65
    /// No vault at the path, or the file is not an rxvault vault.
    case noVault = 66
    /// No prescription with that id.
    case notFound = 67
    /// The database server holding the vault cannot be reached, or refused the login
    /// (EX_UNAVAILABLE). Nothing was changed.
    case unavailable = 69
    /// The file to create already exists, or the path cannot be a new file (a directory, a
    /// trailing '/', a folder that is a file or missing, a device or FIFO: WriteTarget).
    case alreadyExists = 73
    /// The file system refused a write (disk full, read-only); nothing was changed.
    case cannotWrite = 74
    /// Another rxvault process kept the vault busy past the timeout.
    case busy = 75
    /// Stored data failed authentication: the vault file was altered or damaged.
    case integrity = 76
    /// Not permitted: the passphrase does not open the vault (nor the recovery code, nor the
    /// identity), or the database refused the role it logged in as (PostgreSQL's 42501).
    case wrongPassphrase = 77
    /// Interrupted at a prompt (Ctrl-C).
    case interrupted = 130

    /// A stable machine-readable name, used in JSON errors.
    var name: String {
        switch self {
        case .success: return "ok"
        case .failure: return "error"
        case .cancelled: return "cancelled"
        case .nothingDue: return "nothing-due"
        case .usage: return "usage"
        case .invalidInput: return "invalid-input"
        case .noVault: return "no-vault"
        case .notFound: return "not-found"
        case .unavailable: return "unavailable"
        case .alreadyExists: return "already-exists"
        case .cannotWrite: return "cannot-write"
        case .busy: return "busy"
        case .integrity: return "integrity"
        case .wrongPassphrase: return "wrong-passphrase"
        case .interrupted: return "interrupted"
        }
    }
}

/// An error the CLI itself raises (bad flag values, missing passphrase source...).
struct CLIError: Error {
    let status: ExitStatus
    let message: String
    var hint: String?

    init(_ status: ExitStatus, _ message: String, hint: String? = nil) {
        self.status = status
        self.message = message
        self.hint = hint
    }
}

extension VaultError {
    var exitStatus: ExitStatus {
        switch self {
        case .wrongPassphrase, .wrongRecoveryCode: return .wrongPassphrase
        case .refused: return .invalidInput
        case .keySlotNotFound: return .notFound
        case .noVault: return .noVault
        case .alreadyExists: return .alreadyExists
        case .notFound: return .notFound
        case .ambiguousID, .malformedID: return .usage
        case .invalidPrescription, .invalidInput, .attachmentRefused: return .invalidInput
        case .attachmentNotFound, .clientNotFound, .grantNotFound, .requestNotFound, .patientNotFound,
            .measurementNotFound:
            return .notFound
        case .ambiguousPatient: return .usage
        case .duplicateAttachment, .duplicateClient: return .alreadyExists
        case .unknownIdentity: return .wrongPassphrase
        case .ownerOnly: return .usage
        case .ambiguousAttachment: return .usage
        case .integrity: return .integrity
        case .busy: return .busy
        case .badLocation: return .usage
        case .unavailable: return .unavailable
        case .notPermitted: return .wrongPassphrase
        case .cannotWrite: return .cannotWrite
        case .unsupportedVersion: return .noVault
        case .internalError: return .failure
        }
    }

    var hint: String? {
        switch self {
        case .wrongPassphrase(let recoverySlot):
            // A forgotten passphrase has a remedy only when the vault has a recovery code.
            return "nothing was changed; check the passphrase file, or the keyboard layout at the prompt"
                + (recoverySlot
                    ? "; forgotten? this vault has a recovery code: 'rxvault passwd --recovery' sets a new passphrase with it"
                    : "")
        case .noVault: return "create one with 'rxvault init', or point to it with --vault PATH or RXVAULT_PATH"
        case .alreadyExists(let path) where VaultLocation.isDatabase(path):
            return "'rxvault status --vault URL' says which vault it holds; a new vault needs an empty database"
        case .alreadyExists:
            return "'rxvault status' says what it is; for a new vault elsewhere give 'rxvault init --vault PATH'"
        case .ambiguousID: return "give more characters of the id ('rxvault list' shows them)"
        case .notFound: return "'rxvault list' shows the prescriptions in this vault"
        case .integrity: return "the vault file was changed outside rxvault or is damaged; restore it from a backup"
        case .busy: return "wait for the other rxvault command to finish, then try again"
        case .unavailable:
            return
                "nothing was changed; check that the server runs, and the URL, PGHOST/PGPORT/PGUSER, the password in PGPASSWORD or ~/.pgpass, and sslmode and sslrootcert"
        case .ambiguousAttachment: return "give the attachment's id (the prefix shown is enough)"
        case .duplicateAttachment: return "nothing was stored; pass --allow-duplicate to attach a second copy"
        case .grantNotFound: return "'rxvault grants' shows who can read what"
        case .clientNotFound: return "'rxvault client list' shows the clients of this vault"
        case .duplicateClient: return "nothing was changed; 'rxvault client list' shows the clients of this vault"
        case .patientNotFound: return "'rxvault patients' lists the patients in this vault"
        case .measurementNotFound: return "'rxvault measurement list' lists the measurements"
        case .ambiguousPatient:
            return "give the patient's id (the prefix shown is enough), or merge them with 'rxvault patient merge'"
        case .keySlotNotFound: return "'rxvault key list' shows the vault's key slots"
        case .wrongRecoveryCode:
            return "nothing was changed; a recovery code is the one 'rxvault key add --recovery' printed for this vault"
        case .attachmentRefused(let refusal): return refusal.hint
        case .notPermitted(_, let remedy): return "nothing was changed; \(remedy)"
        default: return nil
        }
    }
}
