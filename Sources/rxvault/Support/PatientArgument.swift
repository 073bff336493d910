import RxVault

/// A patient named on the command line for a command that works on a record that exists
/// (`measurement add`, `patient show|rename|merge|remove`, `trend`): found by one rule for all of
/// them (`Vault.findPatient`: the whole name, else a part of one, else an id prefix), so a name
/// that `trend` finds is found by every other command. `add` and `import --patient` are the
/// exceptions on purpose: they create a patient when no whole name matches (`PatientChoice`).
enum PatientArgument {
    /// The record `text` stands for. A write to a record found by a part of its name says on stderr
    /// which record it went to, so "Mia" reaching "Mia Chen" is never silent.
    static func find(_ text: String, in vault: Vault, writing: Bool) throws -> PatientSummary {
        let summary = try vault.findPatient(text)
        let byName = PatientName.key(summary.name) == PatientName.key(text)
        let byID = summary.id.hex.hasPrefix(text.lowercased())
        if writing && !byName && !byID { Terminal.err("rxvault: '\(text)' is patient \(summary.line)") }
        return summary
    }
}
