import ArgumentParser
import RxModel
import RxVault

extension RxVaultCommand {
    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: "Add a glasses or contacts prescription.",
            discussion: flowing(
                """
                Give each eye in the notation on the paper (--od, --os) or field by field
                (--od-sphere, --od-cyl, --od-axis, --od-add, --od-prism, --od-vertex, --od-bc, --od-dia,
                --od-brand and the same with --os-). Either eye may be left out, not both.
                Prints the new prescription's id.

                Examples:
                  rxvault add glasses --patient "Sam Doe" --prescriber "Dr A. Lee" \\
                      --issued 2026-03-01 --expires 2028-03-01 --pd 63 \\
                      --od "-2.25 -0.75 x180 add +2.00" --os "-2.00 -0.50 x170 add +2.00"
                  rxvault add contacts --patient "Sam Doe" --prescriber "Dr A. Lee" \\
                      --issued 2026-03-01 --expires 2027-03-01 --brand "Acuvue Oasys" \\
                      --od "-3.00 bc 8.6 dia 14.2" --os "-2.75 bc 8.6 dia 14.2"
                  rxvault add contacts --patient "Sam Doe" --prescriber "Dr A. Lee" \\
                      --issued 2026-03-01 --expires 2027-03-01 --lens-type rgp \\
                      --brand "Boston XO" --od "-4.50 bc 7.45 dia 9.6" \\
                      --os "-4.25 bc 7.5 dia 9.6"

                Multifocal contacts: "add +1.50 D", "add HGH N" (the box's code: LOW, LO,
                MED, MID, HIGH, HI, HGH; D/N), kept as written.
                A balance lens for one eye of glasses: --os BAL.

                --from ID renews a prescription: a new one with the same patient, prescriber,
                lenses, PD and note, issued today (or --issued); any other flag replaces what is
                copied, as 'edit' applies it. The expiry date is not copied: give --expires (a
                contacts prescription needs one). Attachments and grants stay with the old one,
                which then reads as superseded.
                  rxvault add --from 3f9a --expires 2028-03-01

                A new prescription (with or without --from) that supersedes one a client app can
                still read says so on stderr, with the 'grant' and 'revoke' lines that give each
                such client the new one on the same terms (end, attachments, measurements) and
                take back the old one. --move-grants (with --from) does that in the write that
                adds the renewal, all or nothing, audited as 'grant' and 'revoke' are, and the old
                prescription re-keyed as 'revoke' re-keys it; it is refused (exit 65) when the
                renewal would not supersede it (another patient, or not issued on a later day).
                  rxvault add --from 3f9a --expires 2028-03-01 --move-grants

                A --patient name close to an existing patient's (a typo, another order, accents)
                asks "did you mean ...?" on a terminal; without one it is refused (exit 64) unless
                --new-patient says a new patient is meant.
                """))

        @Argument(help: "glasses or contacts (with --from, the kind of that prescription).") var kind: PrescriptionKind?
        @Option(
            name: .customLong("from"),
            help: ArgumentHelp("Renew this prescription: copy it with new dates.", valueName: "id"),
            completion: .custom(Completion.prescriptionIDs)) var source: String?
        @OptionGroup var fields: PrescriptionOptions
        @Flag(help: "Make a new patient even when the name is close to an existing one's.") var newPatient = false
        @Flag(
            help:
                "With --from: move the old prescription's grants to the renewal, on the same terms, in the same write."
        )
        var moveGrants = false
        @OptionGroup var options: VaultOptions

        func run() throws {
            try CommandRunner.run {
                try options.requireOwner("add")
                if let source { return try renew(source) }
                if moveGrants {
                    throw CLIError(
                        .usage, "--move-grants moves the grants of the prescription --from renews",
                        hint: "give --from ID, or grant the new prescription with 'rxvault grant'")
                }
                guard let kind else {
                    throw CLIError(.usage, "missing the kind: glasses or contacts", hint: "see 'rxvault add --help'")
                }
                let missing = [
                    ("--patient", fields.patient), ("--prescriber", fields.prescriber), ("--issued", fields.issued)
                ]
                .filter { $0.1 == nil }.map(\.0)
                guard missing.isEmpty else {
                    throw CLIError(
                        .usage, "missing \(missing.joined(separator: ", "))", hint: "see 'rxvault add --help'")
                }
                // Build (and so read every value) before asking for the passphrase.
                var rx = Prescription(
                    kind: kind, patient: Patient(name: ""), prescriber: Prescriber(name: ""),
                    issued: CalendarDate(year: 2000, month: 1, day: 1)!)
                try PrescriptionBuilder(options: fields).apply(to: &rx)
                let vault = try options.openVault(command: "add")
                try PatientChoice.choose(for: &rx, in: vault, noInput: options.noInput, newPatient: newPatient)
                let (record, advisories) = try vault.add(rx)
                PatientChoice.sayNotes(vault)
                advisories.forEach(Terminal.warning)
                Terminal.out(record.id.short)
                try sayPendingGrants(vault, record)
            }
        }

        /// The grants a new prescription leaves on the ones it supersedes, as commands to paste.
        private func sayPendingGrants(_ vault: Vault, _ record: PrescriptionRecord) throws {
            let pending = try vault.liveGrantsSuperseded(by: record)
            RenewalGrantText.pending(pending, renewal: record.id, vault: options.vault).forEach(Terminal.err)
        }

        /// `add --from`: the prescription `source` names, copied with today's issue date and no
        /// expiry date, exam date or short-expiry reason, then the flags applied over it as `edit`
        /// applies them.
        private func renew(_ source: String) throws {
            let builder = PrescriptionBuilder(options: fields)
            try builder.readValues()
            let today = try Environment.clock().today()
            let vault = try options.openVault(command: "add")
            // The same lookup, so the same errors, as 'show'.
            let old = try vault.prescription(try vault.resolve(source), version: nil)
            if let kind, kind != old.prescription.kind {
                throw CLIError(
                    .usage,
                    "prescription \(old.id.short) is a \(old.prescription.kind.rawValue) prescription, not \(kind.rawValue)",
                    hint: "leave the kind out: --from renews a prescription as the kind it is")
            }
            var rx = old.prescription
            // What was kept of an imported FHIR resource (its identifiers, status, narrative)
            // describes the old prescription, not the renewal; and a renewal stands (active).
            // The lenses' tint, wear duration and notes describe the lenses: they stay.
            rx.fhir = rx.fhir?.clinicalOnly
            rx.issued = today
            // Copying the old expiry would make the renewal expired already; how long it is valid
            // is the prescriber's to say.
            rx.expires = nil
            // Nor an expiry an import assumed for the old one (issue 47).
            rx.assumedExpiry = nil
            // The exam and a short expiry's reason belong to the old prescription's visit.
            rx.examDate = nil
            rx.shortExpiryReason = nil
            try builder.apply(to: &rx)
            if fields.patient != nil || fields.dob != nil {
                // Another name or birth date is another patient, found or created by add's rule;
                // the old patient's FHIR name parts are not the new one's.
                rx.patient.id = nil
                if fields.patient != nil {
                    rx.patient.family = nil
                    rx.patient.given = nil
                }
                try PatientChoice.choose(for: &rx, in: vault, noInput: options.noInput, newPatient: newPatient)
            }
            if moveGrants {
                let (record, advisories, moved) = try vault.add(rx, movingGrantsFrom: old.id)
                PatientChoice.sayNotes(vault)
                advisories.forEach(Terminal.warning)
                Terminal.out(record.id.short)
                RenewalGrantText.moved(moved, from: old.id, to: record.id).forEach(Terminal.err)
                return
            }
            let (record, advisories) = try vault.add(rx)
            PatientChoice.sayNotes(vault)
            advisories.forEach(Terminal.warning)
            Terminal.out(record.id.short)
            try sayPendingGrants(vault, record)
        }
    }
}
