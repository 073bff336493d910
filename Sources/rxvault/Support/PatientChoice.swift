import ArgumentParser
import Foundation
import RxModel
import RxVault

/// Which patient record `add --patient` means (docs/guide.md, "Patients").
enum PatientChoice {
    /// Before `add`: the patient the name stands for. One match (ignoring case and white space, no
    /// differing birth date): the vault links it. None: an id prefix, if the text is one, else
    /// a near miss of a record is asked about (`nearMiss`), else the vault creates a record. Two
    /// or more: asks on a terminal which one, else refuses listing them.
    static func choose(for rx: inout Prescription, in vault: Vault, noInput: Bool, newPatient: Bool) throws {
        guard vault.header.formatVersion >= 4 else { return }
        let matches = try vault.matchingPatients(rx.patient)
        if matches.isEmpty {
            if let byID = try? vault.resolvePatient(rx.patient.name),
                PatientName.key(byID.name) != PatientName.key(rx.patient.name)
            {
                rx.patient = byID.patient
            } else if let meant = try nearMiss(rx.patient, in: vault, noInput: noInput, newPatient: newPatient) {
                rx.patient = meant
            }
            return
        }
        guard matches.count > 1 else { return }
        let listing = matches.map(\.line)
        guard !noInput, Terminal.canAsk else {
            throw VaultError.ambiguousPatient("patient '\(rx.patient.name)'", candidates: listing)
        }
        Terminal.err(
            "rxvault: '\(rx.patient.name)' matches \(matches.count) patients:\n  " + listing.joined(separator: "\n  "))
        guard let answer = Terminal.ask("Which one? Its id (empty to cancel): "), !answer.isEmpty else {
            throw CLIError(.cancelled, "no patient chosen: nothing was written")
        }
        let picked = matches.filter { $0.id.hex.hasPrefix(answer.lowercased()) }
        guard picked.count == 1 else {
            throw CLIError(.usage, "'\(answer)' is not one of the ids listed", hint: "nothing was written")
        }
        rx.patient = picked[0].patient
    }

    /// A name no record matches that looks like a slip for one that exists (`PatientNearMiss`):
    /// "did you mean ...?" on a terminal, where yes gives that record and no (the default) lets
    /// the name make a new one; without a terminal (or with --no-input) a usage error (64)
    /// naming the records, unless `newPatient` (`--new-patient`) says a new record is meant.
    /// Returns the record meant, nil for a new one.
    static func nearMiss(_ patient: Patient, in vault: Vault, noInput: Bool, newPatient: Bool) throws -> Patient? {
        guard !newPatient else { return nil }
        let near = try vault.nearMissPatients(patient)
        guard !near.isEmpty else { return nil }
        guard !noInput, Terminal.canAsk else {
            throw CLIError(
                .usage,
                "no patient is named '\(patient.name)': did you mean "
                    + near.map { "'\($0.name)' (\($0.id.short))" }.joined(separator: " or ") + "?",
                hint:
                    "give that name (or its id) to write to that patient, or pass --new-patient to make a new patient '\(patient.name)'"
            )
        }
        Terminal.err("rxvault: no patient is named '\(patient.name)'")
        for candidate in near
        where Terminal.confirm("Did you mean \(candidate.line)? (no: a new patient '\(patient.name)')") {
            // The record's name; a birth date typed for a record without one is kept.
            var meant = candidate.patient
            if meant.birthDate == nil { meant.birthDate = patient.birthDate }
            return meant
        }
        return nil
    }

    /// What the write did to patient records on its own ("new patient ..."), on stderr. Over
    /// `listingAtMost` new patients (an import of a practice's file makes hundreds), they are
    /// counted in one line instead, pointing to where they are listed.
    static func sayNotes(_ vault: Vault, listingAtMost: Int = .max) {
        let notes = vault.patientNotes
        let created = notes.filter { $0.hasPrefix("new patient ") }
        let summarise = created.count > listingAtMost
        for note in notes where !(summarise && note.hasPrefix("new patient ")) { Terminal.err("rxvault: \(note)") }
        if summarise { Terminal.err("rxvault: \(created.count) new patients ('rxvault patients' lists them)") }
    }
}
