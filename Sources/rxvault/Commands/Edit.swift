import ArgumentParser
import RxModel
import RxVault

extension RxVaultCommand {
    struct Edit: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "edit",
            abstract: "Change a prescription; the change is stored as a new version.",
            discussion: flowing(
                """
                Takes the same flags as 'add'; only what is given changes. An empty value clears a
                text field (--note "").

                --od SPEC sets the sphere and what the notation writes; add, prism, vertex, PD, bc,
                dia and brand stay unless it writes them. A sphere alone ("-1.25") on a lens with a
                cylinder is refused: write the cylinder to keep it, or "-1.25 DS" for a sphere alone
                (--od-sphere changes only the sphere).

                An add is one part: "add ..." replaces its number, code (LOW, MID, HGH...) and D/N
                together.
                BAL makes the eye a balance lens (dropping cylinder, add and prism).

                A part is removed only by name: --no-od-cyl (with its axis), --no-od-add (with its
                code and D/N), --no-od-prism, --no-od-vertex, --no-od-bc, --no-od-dia,
                --no-od-brand, and the same with --no-os-; --no-lens-type removes the contact-lens
                type. Switching between one binocular PD and a PD per eye needs --no-pd.

                --status cancelled withdraws a prescription (also draft or entered-in-error, the FHIR
                codes): from then on it is never valid, in any output, filter, export or client read;
                --status active reinstates it.

                --patient NAME close to an existing patient's name is asked about as by 'add'
                (--new-patient to make a new patient without asking).

                Earlier versions are kept: 'rxvault history ID' lists them with what each changed.

                Examples:
                  rxvault edit 3f9a --os "-2.25 -0.50 x170" --expires 2028-06-01
                  rxvault edit 3f9a --no-os-prism
                  rxvault edit 3f9a --status cancelled
                """))

        @Argument(help: "The prescription's id (any unique prefix).", completion: .custom(Completion.prescriptionIDs))
        var id: String
        @OptionGroup var fields: PrescriptionOptions
        @Flag(name: .customLong("no-od"), help: "Remove the right-eye lens.") var removeRight = false
        @Flag(name: .customLong("no-os"), help: "Remove the left-eye lens.") var removeLeft = false
        @Flag(name: .customLong("no-expires"), help: "Remove the expiry date (glasses).") var removeExpiry = false
        @Flag(name: .customLong("no-pd"), help: "Remove all pupillary distances.") var removePD = false
        @Flag(name: .customLong("no-lens-type"), help: "Remove the contact-lens type.") var removeLensType = false
        @Flag var removeFields: [LensRemovalFlag] = []
        @Flag(help: "With --patient: make a new patient even when the name is close to an existing one's.")
        var newPatient = false
        @Option(
            help: ArgumentHelp(
                "Withdraw (cancelled, draft, entered-in-error) or reinstate (active) the prescription.",
                valueName: "status")) var status: RecordStatus?
        @OptionGroup var options: VaultOptions

        func run() throws {
            try CommandRunner.run {
                try options.requireOwner("edit")
                guard
                    !fields.isEmpty || status != nil || removeRight || removeLeft || removeExpiry || removePD
                        || removeLensType || !removeFields.isEmpty
                else {
                    throw CLIError(
                        .usage, "nothing to change", hint: "give the fields to change, e.g. --expires 2028-01-01")
                }
                var builder = PrescriptionBuilder(options: fields)
                builder.removeEyes = Set([removeRight ? Eye.right : nil, removeLeft ? Eye.left : nil].compactMap { $0 })
                builder.removeExpiry = removeExpiry
                builder.removePD = removePD
                builder.removeLensType = removeLensType
                builder.removeFields = removeFields
                // Read every value once before unlocking, so a typo costs no passphrase.
                let probe = try builder.readValues()

                let vault = try options.openVault(command: "edit")
                let prescriptionID = try vault.resolve(id)
                // A --patient name close to an existing patient's: asked about before the write, as by `add`.
                var meant: Patient?
                if fields.patient != nil {
                    // Without --dob the birth date is the prescription's: it tells people apart.
                    var typed = probe.patient
                    if fields.dob == nil {
                        typed.birthDate = try vault.prescription(prescriptionID, version: nil).prescription.patient
                            .birthDate
                    }
                    meant = try PatientChoice.nearMiss(
                        typed, in: vault, noInput: options.noInput, newPatient: newPatient)
                }
                guard
                    let (record, advisories) = try vault.edit(
                        prescriptionID,
                        { rx in
                            try builder.apply(to: &rx)
                            if let meant { rx.patient = meant }
                            if let status { rx.recordStatus = status }
                        })
                else {
                    Terminal.err("rxvault: nothing changed: the values given are the ones already stored")
                    return
                }
                PatientChoice.sayNotes(vault)
                advisories.forEach(Terminal.warning)
                Terminal.out("\(record.id.short) version \(record.version)")
            }
        }
    }
}
