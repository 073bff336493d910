import Foundation
import RxCrypto
import RxVault

#if canImport(Glibc)
    import Glibc
#endif

/// Where an export goes and how it is sealed: a file (mode 0600) or standard output, in the
/// clear or age-encrypted to recipients, a client, or a passphrase. The audit entry is written
/// before the data appears: if the log cannot be written, neither is the file.
struct ExportDestination {
    /// A path, or "-" for standard output.
    let out: String
    let replace: Bool
    let recipients: [AgeFile.Recipient]
    let passphrase: SecretBytes?
    let armor: Bool

    var encrypted: Bool { !recipients.isEmpty || passphrase != nil }

    /// Checks the target and reads the recipients before any passphrase or work: a path that can
    /// never be written costs nothing.
    init(
        out: String, replace: Bool, recipients given: RecipientOptions, passphraseFile: String?, armor: Bool,
        forClient: Bool
    ) throws {
        if out != "-" { _ = try WriteTarget.file(for: out, replace: replace) }
        self.out = out
        self.replace = replace
        recipients = try given.parse()
        passphrase = try passphraseFile.map { try PassphraseSource.read(file: $0, what: "age passphrase") }
        self.armor = armor
        if out == "-" && (encrypted || forClient) && !armor && isatty(STDOUT_FILENO) == 1 {
            throw CLIError(
                .usage, "refusing to write an encrypted binary file to the terminal",
                hint: "redirect the output, or add --armor")
        }
    }

    /// Who the file is encrypted to, the export's client included.
    func ageRecipients(grantee: ClientSummary?) -> [AgeFile.Recipient] {
        if let passphrase { return [.scrypt(passphrase: passphrase, logN: AgeFile.defaultScryptLogN)] }
        return recipients + (grantee.map { [.x25519($0.recipient)] } ?? [])
    }

    /// How the audit entry names the recipients ("for lens-shop to 2 recipient(s)"), nil if none.
    func recipientsText(grantee: ClientSummary?) -> String? {
        let text = [
            grantee.map { "for \($0.name)" }, recipients.isEmpty ? nil : "to \(recipients.count) recipient(s)",
            passphrase == nil ? nil : "with a passphrase"
        ].compactMap { $0 }.joined(separator: " ")
        return text.isEmpty ? nil : text
    }

    /// Writes what `write` produces, calling `record` (the audit entry) before anything is in place.
    func deliver(grantee: ClientSummary?, write: (ExportOutput) throws -> Void, record: () throws -> Void) throws {
        let sealedTo = ageRecipients(grantee: grantee)
        if out != "-" && sealedTo.isEmpty {
            // Plaintext to a file: written as it is read, into a temporary file put in place at the end.
            try SafeFileWriter.write(to: out, replace: replace) { writer in
                try write(ExportOutput { try writer.write($0) })
                try record()
            }
            return
        }
        // To standard output (nothing may appear before the audit entry) or age-encrypted: in memory.
        var bytes: [UInt8] = []
        try write(ExportOutput { bytes += $0 })
        if !sealedTo.isEmpty {
            bytes = try AgeFile.encrypt(bytes, to: sealedTo)
            if armor { bytes = Array(AgeFile.armor(bytes).utf8) }
        }
        if out == "-" {
            try record()
            Terminal.out(bytes: bytes)
        } else {
            try SafeFileWriter.write(to: out, replace: replace) { writer in
                try writer.write(bytes)
                try record()
            }
        }
    }
}
