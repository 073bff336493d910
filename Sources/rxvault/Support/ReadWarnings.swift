import ArgumentParser
import Foundation
import RxModel
import RxVault

/// Tells the owner when deleted content could not yet be purged from the write-ahead log.
func warnIfNotPurged(_ vault: Vault) {
    if vault.purgeFailed {
        Terminal.warning(
            "another rxvault process was reading: the deleted content stays in the write-ahead log until the next write (run 'rxvault check' when the others are done)"
        )
    }
}

/// Tells a client whose read could not be recorded (a read-only copy of the vault, or an audit
/// log that does not read: then what is wrong with it).
func warnIfNotLogged(_ reader: any VaultReader) {
    guard let failure = reader.readLogFailure else { return }
    if case .integrity = failure {
        Terminal.warning("this read could not be recorded in the vault's audit log: \(failure.description)")
    } else {
        Terminal.warning("this read could not be recorded in the vault's audit log (is the vault file read-only?)")
    }
}
